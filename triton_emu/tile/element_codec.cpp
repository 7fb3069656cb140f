#include "triton_emu/tile/element_codec.hpp"

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "components/float8.hpp"
#include "triton_emu/backends/cpu_convert.hpp"

namespace cubesim::tl {
namespace {

bool eigen_float(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32;
}

template <class T>
T read(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void write(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

std::int64_t read_integer(DType t, const std::byte* p) {
  switch (t) {
    case DType::i8:
      return read<std::int8_t>(p);
    case DType::i32:
      return read<std::int32_t>(p);
    case DType::i64:
      return read<std::int64_t>(p);
    case DType::boolean:
      return read<std::uint8_t>(p) != 0;
    default:
      return 0;
  }
}

void write_integer(DType t, std::byte* p, std::int64_t v) {
  switch (t) {
    case DType::i8:
      write(p, static_cast<std::int8_t>(wrap_integer(t, v)));
      return;
    case DType::i32:
      write(p, static_cast<std::int32_t>(wrap_integer(t, v)));
      return;
    case DType::i64:
      write(p, v);
      return;
    case DType::boolean:
      write(p, static_cast<std::uint8_t>(v != 0));
      return;
    default:
      return;
  }
}

// A float dtype's element as f32 (exact: every such dtype is a subset of f32).
float read_float(DType t, const std::byte* p) {
  switch (t) {
    case DType::f16:
      return static_cast<float>(read<Eigen::half>(p));
    case DType::bf16:
      return static_cast<float>(read<Eigen::bfloat16>(p));
    case DType::f32:
      return read<float>(p);
    case DType::f8e4m3:
      return float8::decode(float8::kE4M3, read<std::uint8_t>(p));
    case DType::f8e5m2:
      return float8::decode(float8::kE5M2, read<std::uint8_t>(p));
    default:
      return 0;
  }
}

void write_float(DType t, std::byte* p, double v) {
  switch (t) {
    case DType::f16:
      write(p, Eigen::half(static_cast<float>(v)));
      return;
    case DType::bf16:
      write(p, Eigen::bfloat16(static_cast<float>(v)));
      return;
    case DType::f32:
      write(p, static_cast<float>(v));
      return;
    case DType::f8e4m3:
      write(p, float8::encode(float8::kE4M3, v));
      return;
    case DType::f8e5m2:
      write(p, float8::encode(float8::kE5M2, v));
      return;
    default:
      return;
  }
}

}  // namespace

std::int64_t wrap_integer(DType t, std::int64_t v) {
  switch (t) {
    case DType::i8:
      return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    case DType::i32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case DType::boolean:
      return v != 0;
    default:
      return v;
  }
}

std::int64_t float_to_integer(DType t, double v) {
  if (std::isnan(v)) return 0;
  if (t == DType::boolean) return v != 0;
  double lo = -0x1p63, hi = 0x1p63;  // i64: 2^63 itself is out of range
  if (t == DType::i8) lo = -128, hi = 128;
  if (t == DType::i32) lo = -0x1p31, hi = 0x1p31;
  if (v >= hi)
    return t == DType::i8    ? 127
           : t == DType::i32 ? std::numeric_limits<std::int32_t>::max()
                             : std::numeric_limits<std::int64_t>::max();
  if (v <= lo) return static_cast<std::int64_t>(lo);
  return static_cast<std::int64_t>(v);
}

void decode_f32(DType from, const std::byte* src, std::int64_t n, float* out) {
  if (n <= 0) return;
  if (eigen_float(from)) {
    backends::convert_block(from, src, n, DType::f32, out, n, 1, n);
    return;
  }
  const std::uint32_t size = dtype_size(from);
  if (is_integer(from)) {
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(read_integer(from, src + i * size));
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) out[i] = read_float(from, src + i * size);
}

void decode_i64(DType from, const std::byte* src, std::int64_t n, std::int64_t* out) {
  const std::uint32_t size = dtype_size(from);
  if (is_integer(from)) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = read_integer(from, src + i * size);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = float_to_integer(DType::i64, read_float(from, src + i * size));
}

void decode_f64(DType from, const std::byte* src, std::int64_t n, double* out) {
  const std::uint32_t size = dtype_size(from);
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = is_integer(from) ? static_cast<double>(read_integer(from, src + i * size))
                              : static_cast<double>(read_float(from, src + i * size));
}

void encode_f32(const float* in, std::int64_t n, DType to, std::byte* dst) {
  if (n <= 0) return;
  if (eigen_float(to)) {
    backends::convert_block(DType::f32, in, n, to, dst, n, 1, n);
    return;
  }
  const std::uint32_t size = dtype_size(to);
  for (std::int64_t i = 0; i < n; ++i) {
    if (is_integer(to))
      write_integer(to, dst + i * size, float_to_integer(to, in[i]));
    else
      write_float(to, dst + i * size, in[i]);
  }
}

void encode_i64(const std::int64_t* in, std::int64_t n, DType to, std::byte* dst) {
  const std::uint32_t size = dtype_size(to);
  for (std::int64_t i = 0; i < n; ++i) {
    if (is_integer(to))
      write_integer(to, dst + i * size, in[i]);
    else
      write_float(to, dst + i * size, static_cast<double>(in[i]));
  }
}

void encode_f64(const double* in, std::int64_t n, DType to, std::byte* dst) {
  const std::uint32_t size = dtype_size(to);
  for (std::int64_t i = 0; i < n; ++i) {
    if (is_integer(to))
      write_integer(to, dst + i * size, float_to_integer(to, in[i]));
    else
      write_float(to, dst + i * size, in[i]);
  }
}

void fill_f64(std::byte* dst, std::int64_t n, DType to, double value) {
  const std::uint32_t size = dtype_size(to);
  std::byte one[8];
  encode_f64(&value, 1, to, one);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, one, size);
}

}  // namespace cubesim::tl
