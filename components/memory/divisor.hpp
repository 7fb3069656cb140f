#pragma once
// Division by a value fixed at construction. Address decoding divides by granules, channel
// counts and capacities on every packet; these are powers of two in every shipped spec, where
// a shift and a mask replace a 64-bit division (tens of cycles each, several per packet). Other
// values still divide. The branch always goes the same way for one divisor.

#include <bit>
#include <cstdint>

namespace cubesim::components {

class Divisor {
 public:
  explicit Divisor(std::uint64_t d = 1)
      : d_(d), pow2_(std::has_single_bit(d)), shift_(static_cast<unsigned>(std::countr_zero(d))) {}

  std::uint64_t value() const { return d_; }
  std::uint64_t quot(std::uint64_t x) const { return pow2_ ? x >> shift_ : x / d_; }
  std::uint64_t rem(std::uint64_t x) const { return pow2_ ? x & (d_ - 1) : x % d_; }

 private:
  std::uint64_t d_;
  bool pow2_;
  unsigned shift_;
};

}  // namespace cubesim::components
