#pragma once
// Test helpers: a strided row-major matrix of any GEMM dtype with random, never-zero contents,
// and an fp64 reference GEMM over the values actually stored.

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "components/dtype.hpp"
#include "components/float8.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends::testing {

class TestMatrix {
 public:
  TestMatrix(DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld)
      : dtype_(t),
        rows_(rows),
        cols_(cols),
        ld_(ld),
        bytes_(static_cast<std::size_t>(std::max<std::int64_t>(rows * ld, 1)) * dtype_size(t)) {}

  // Floats: magnitudes in [0.25, 1) with random signs, so no product vanishes and sums cancel.
  // i32: values in +-[1, 2^20), so that K of a few hundred products overflow 32 bits and wrap;
  // i64: +-[1, 2^40), which overflow 64 bits the same way; i8: all of [-128, 127] but 0.
  // The padding between rows gets a sentinel pattern that a GEMM must leave alone.
  void fill_random(std::mt19937_64& rng) {
    std::memset(bytes_.data(), 0x5A, bytes_.size());
    std::uniform_real_distribution<float> mag(0.25f, 1.0f);
    const std::int64_t int_max = dtype_ == DType::i8    ? 128
                                 : dtype_ == DType::i64 ? std::int64_t{1} << 40
                                                        : std::int64_t{1} << 20;
    std::uniform_int_distribution<std::int64_t> imag(1, int_max - 1);
    std::bernoulli_distribution neg(0.5);
    for (std::int64_t r = 0; r < rows_; ++r)
      for (std::int64_t c = 0; c < cols_; ++c) {
        if (dtype_ == DType::i8 && neg(rng) && neg(rng) && neg(rng))  // the one unpaired value
          set_int(r, c, -128);
        else if (is_integer(dtype_))
          set_int(r, c, neg(rng) ? -imag(rng) : imag(rng));
        else
          set(r, c, neg(rng) ? -mag(rng) : mag(rng));
      }
  }

  void set(std::int64_t r, std::int64_t c, float v) {
    unsigned char* p = ptr(r, c);
    switch (dtype_) {
      case DType::f16:
        store(p, std::bit_cast<std::uint16_t>(Eigen::half(v)));
        break;
      case DType::bf16:
        store(p, std::bit_cast<std::uint16_t>(Eigen::bfloat16(v)));
        break;
      case DType::f32:
        store(p, v);
        break;
      case DType::f8e4m3:
        store(p, float8::encode(float8::kE4M3, v));
        break;
      case DType::f8e5m2:
        store(p, float8::encode(float8::kE5M2, v));
        break;
      default:
        set_int(r, c, static_cast<std::int64_t>(v));
    }
  }
  void set_int(std::int64_t r, std::int64_t c, std::int64_t v) {
    unsigned char* p = ptr(r, c);
    switch (dtype_) {
      case DType::i8:
        store(p, static_cast<std::int8_t>(v));
        break;
      case DType::i32:
        store(p, static_cast<std::int32_t>(v));
        break;
      case DType::i64:
        store(p, v);
        break;
      case DType::boolean:
        store(p, static_cast<std::uint8_t>(v != 0));
        break;
      default:
        throw std::invalid_argument("TestMatrix: set_int on a float matrix");
    }
  }

  double get(std::int64_t r, std::int64_t c) const {
    const unsigned char* p = ptr(r, c);
    switch (dtype_) {
      case DType::f16:
        return static_cast<float>(std::bit_cast<Eigen::half>(load<std::uint16_t>(p)));
      case DType::bf16:
        return static_cast<float>(std::bit_cast<Eigen::bfloat16>(load<std::uint16_t>(p)));
      case DType::f32:
        return load<float>(p);
      case DType::f8e4m3:
        return float8::decode(float8::kE4M3, load<std::uint8_t>(p));
      case DType::f8e5m2:
        return float8::decode(float8::kE5M2, load<std::uint8_t>(p));
      default:
        return static_cast<double>(get_int(r, c));
    }
  }
  std::int64_t get_int(std::int64_t r, std::int64_t c) const {
    const unsigned char* p = ptr(r, c);
    switch (dtype_) {
      case DType::i8:
        return load<std::int8_t>(p);
      case DType::i32:
        return load<std::int32_t>(p);
      case DType::i64:
        return load<std::int64_t>(p);
      case DType::boolean:
        return load<std::uint8_t>(p);
      default:
        throw std::invalid_argument("TestMatrix: get_int on a float matrix");
    }
  }

  // The padding bytes after each row's last element still hold the sentinel.
  bool padding_intact() const {
    const std::size_t es = dtype_size(dtype_);
    for (std::int64_t r = 0; r < rows_; ++r)
      for (std::int64_t c = cols_; c < ld_; ++c)
        for (std::size_t b = 0; b < es; ++b)
          if (bytes_[static_cast<std::size_t>(r * ld_ + c) * es + b] != 0x5A) return false;
    return true;
  }

  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  std::int64_t ld() const { return ld_; }

 private:
  template <class T>
  static void store(unsigned char* p, T v) {
    std::memcpy(p, &v, sizeof v);
  }
  template <class T>
  static T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  unsigned char* ptr(std::int64_t r, std::int64_t c) {
    return bytes_.data() + static_cast<std::size_t>(r * ld_ + c) * dtype_size(dtype_);
  }
  const unsigned char* ptr(std::int64_t r, std::int64_t c) const {
    return bytes_.data() + static_cast<std::size_t>(r * ld_ + c) * dtype_size(dtype_);
  }

  DType dtype_;
  std::int64_t rows_, cols_, ld_;
  std::vector<unsigned char> bytes_;
};

// The unit roundoff of a float dtype (half its machine epsilon); 0 for integers (exact).
inline double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::f8e4m3:
      return std::ldexp(1.0, -4);
    case DType::f8e5m2:
      return std::ldexp(1.0, -3);
    default:  // integers (exact)
      return 0;
  }
}

// The spacing of C's values near zero (its smallest subnormal): rounding a result below the
// normal range errs by up to half of it, whatever the result's size. Matters for f8.
inline double smallest_subnormal(DType t) {
  switch (t) {
    case DType::f16:
      return std::ldexp(1.0, -24);
    case DType::bf16:
      return std::ldexp(1.0, -133);
    case DType::f32:
      return std::ldexp(1.0, -149);
    case DType::f8e4m3:
      return std::ldexp(1.0, -9);
    case DType::f8e5m2:
      return std::ldexp(1.0, -16);
    default:
      return 0;
  }
}

}  // namespace cubesim::backends::testing
