#pragma once
// Element types the hardware moves and computes on. The GEMM engine's peak rate and the
// vector unit's costs are given per dtype; tiles carry one.
//
// f8e4m3 and f8e5m2 are the OCP 8-bit floats (PyTorch's float8_e4m3fn and float8_e5m2;
// components/float8.hpp has their encoding). boolean ("bool") is a 1-byte mask: 0 or 1.

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace cubesim {

// New dtypes go at the end: tables indexed by static_cast<int>(DType) keep their order.
enum class DType : std::uint8_t { f16, bf16, f32, i32, i8, i64, f8e4m3, f8e5m2, boolean };

inline constexpr DType kAllDTypes[] = {DType::f16,    DType::bf16,   DType::f32,
                                       DType::i32,    DType::i8,     DType::i64,
                                       DType::f8e4m3, DType::f8e5m2, DType::boolean};
inline constexpr int kDTypeCount = static_cast<int>(std::size(kAllDTypes));

constexpr std::uint32_t dtype_size(DType t) {
  switch (t) {
    case DType::i8:
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::boolean:
      return 1;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
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
    case DType::i8:
      return "i8";
    case DType::i64:
      return "i64";
    case DType::f8e4m3:
      return "f8e4m3";
    case DType::f8e5m2:
      return "f8e5m2";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

constexpr std::optional<DType> dtype_from_name(std::string_view s) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == s) return t;
  return std::nullopt;
}

// i8, i32, i64 (two's complement, wrapping) and bool.
constexpr bool is_integer(DType t) {
  return t == DType::i8 || t == DType::i32 || t == DType::i64 || t == DType::boolean;
}
constexpr bool is_floating(DType t) {
  return !is_integer(t);
}

}  // namespace cubesim
