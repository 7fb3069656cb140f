#pragma once
// Element types the hardware moves and computes on. The GEMM engine's peak rate and the
// vector unit's costs are given per dtype; tiles carry one.

#include <cstdint>
#include <optional>
#include <string_view>

namespace cubesim {

enum class DType : std::uint8_t { f16, bf16, f32, i32 };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::i32};

constexpr std::uint32_t dtype_size(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::i32:
      return "i32";
  }
  return "?";
}

constexpr std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == s) return t;
  return std::nullopt;
}

}  // namespace cubesim
