#pragma once
// A byte address in the modelled system's flat address space. Arithmetic is in bytes, as in
// ADR-0022's kernels (`b_ptr + col_start * K * 2`).

#include <compare>
#include <cstdint>

namespace cubesim {

struct Ptr {
  std::uint64_t addr = 0;

  constexpr Ptr operator+(std::int64_t bytes) const {
    return {addr + static_cast<std::uint64_t>(bytes)};
  }
  constexpr Ptr operator-(std::int64_t bytes) const {
    return {addr - static_cast<std::uint64_t>(bytes)};
  }
  constexpr std::int64_t operator-(Ptr o) const { return static_cast<std::int64_t>(addr - o.addr); }
  constexpr Ptr& operator+=(std::int64_t bytes) { return *this = *this + bytes; }
  constexpr auto operator<=>(const Ptr&) const = default;
};

}  // namespace cubesim
