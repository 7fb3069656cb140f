#pragma once
// The OCP 8-bit floating-point formats (OCP "8-bit Floating Point Specification (OFP8)" 1.0),
// encoded and decoded exactly as PyTorch's float8_e4m3fn and float8_e5m2 do:
//
//   f8e4m3 (E4M3, bias 7): no infinities; 0x7f / 0xff are NaN; largest finite 448; smallest
//           subnormal 2^-9.
//   f8e5m2 (E5M2, bias 15): IEEE-like: 0x7c / 0xfc are +-inf, exponent 31 with a nonzero
//           mantissa NaN; largest finite 57344; smallest subnormal 2^-16.
//
// Conversion from float rounds to nearest, ties to even, and does not saturate (PyTorch's
// choice, which the OCP spec leaves to the implementation): a value that rounds past the
// largest finite becomes NaN in f8e4m3 (so does +-inf) and +-inf in f8e5m2. NaN gives NaN (0x7f
// with the input's sign); -0 stays -0.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace cubesim::float8 {

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_inf;  // else the all-ones pattern is NaN and there are no infinities
  double max_finite;
};

inline constexpr Format kE4M3{4, 3, 7, false, 448.0};
inline constexpr Format kE5M2{5, 2, 15, true, 57344.0};

inline float decode(const Format& f, std::uint8_t bits) {
  const bool negative = bits & 0x80;
  const int mant_mask = (1 << f.mantissa_bits) - 1;
  const int exp_max = (1 << f.exponent_bits) - 1;
  const int e = (bits & 0x7f) >> f.mantissa_bits;
  const int m = bits & mant_mask;
  double v;
  if (f.has_inf && e == exp_max) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.has_inf && e == exp_max && m == mant_mask) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1 << f.mantissa_bits)), e - f.bias - f.mantissa_bits);
  }
  return static_cast<float>(negative ? -v : v);
}

inline std::uint8_t encode(const Format& f, double x) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const std::uint8_t nan = sign | 0x7f;
  const std::uint8_t inf =
      sign | static_cast<std::uint8_t>(((1 << f.exponent_bits) - 1) << f.mantissa_bits);
  if (std::isnan(x)) return nan;
  const double a = std::fabs(x);
  if (std::isinf(a)) return f.has_inf ? inf : nan;
  const int min_exp = 1 - f.bias;  // of the smallest normal
  int e = std::ilogb(a);           // a == 0 gives FP_ILOGB0, below min_exp
  if (a == 0 || e < min_exp) e = min_exp;
  // a / 2^(e - M) is exact (a power-of-two scale); nearbyint rounds it to even.
  const double q = std::nearbyint(std::ldexp(a, f.mantissa_bits - e));
  const double r = std::ldexp(q, e - f.mantissa_bits);
  if (r > f.max_finite) return f.has_inf ? inf : nan;
  if (r == 0) return sign;
  int re = std::ilogb(r);
  if (re < min_exp) {  // subnormal: exponent field 0
    return sign | static_cast<std::uint8_t>(std::ldexp(r, f.bias - 1 + f.mantissa_bits));
  }
  const auto mant = static_cast<int>(std::ldexp(r, f.mantissa_bits - re)) - (1 << f.mantissa_bits);
  return sign | static_cast<std::uint8_t>(((re + f.bias) << f.mantissa_bits) | mant);
}

}  // namespace cubesim::float8
