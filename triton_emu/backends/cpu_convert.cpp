#include "triton_emu/backends/cpu_convert.hpp"

#include <immintrin.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "components/float8.hpp"

namespace cubesim::backends {
namespace {

// ---- scalar: Eigen's portable round-to-nearest-even bit manipulation ----

void f16_to_f32_scalar(const std::uint16_t* s, float* d, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(std::bit_cast<Eigen::half>(s[i]));
}
void f32_to_f16_scalar(const float* s, std::uint16_t* d, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<std::uint16_t>(Eigen::half(s[i]));
}
void bf16_to_f32_scalar(const std::uint16_t* s, float* d, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    d[i] = static_cast<float>(std::bit_cast<Eigen::bfloat16>(s[i]));
}
void f32_to_bf16_scalar(const float* s, std::uint16_t* d, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<std::uint16_t>(Eigen::bfloat16(s[i]));
}

// ---- AVX2 + F16C: compiled for that ISA only here, called only after runtime detection ----

#define CUBESIM_AVX2 __attribute__((target("avx2,f16c")))

CUBESIM_AVX2 void f16_to_f32_avx2(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 8));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h0));
    _mm256_storeu_ps(d + i + 8, _mm256_cvtph_ps(h1));
  }
  for (; i < n; ++i) d[i] = _cvtsh_ss(s[i]);
}

CUBESIM_AVX2 void f32_to_f16_avx2(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i h0 = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i h1 = _mm256_cvtps_ph(_mm256_loadu_ps(s + i + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 8), h1);
  }
  for (; i < n; ++i) d[i] = _cvtss_sh(s[i], _MM_FROUND_TO_NEAREST_INT);
}

CUBESIM_AVX2 void bf16_to_f32_avx2(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i h0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i h1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 8));
    // bf16 is the top half of an f32: widen and shift into place.
    const __m256i w0 = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h0), 16);
    const __m256i w1 = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h1), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), w0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 8), w1);
  }
  bf16_to_f32_scalar(s + i, d + i, n - i);
}

// Eight f32 to bf16 (in the low 16 bits of each lane), round-to-nearest-even, NaN -> the sign
// with 0x7fc0 (what Eigen::bfloat16 gives, so both ISAs agree). Not AVX512-BF16's vcvtneps2bf16:
// that flushes denormals to zero, which the other ISAs do not.
CUBESIM_AVX2 inline __m256i round_to_bf16(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i top = _mm256_srli_epi32(u, 16);
  const __m256i lsb = _mm256_and_si256(top, _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan =
      _mm256_or_si256(_mm256_and_si256(top, _mm256_set1_epi32(0x8000)), _mm256_set1_epi32(0x7fc0));
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(rounded, nan, is_nan);
}

CUBESIM_AVX2 void f32_to_bf16_avx2(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo = round_to_bf16(_mm256_loadu_ps(s + i));
    const __m256i hi = round_to_bf16(_mm256_loadu_ps(s + i + 8));
    // packus works within 128-bit lanes: lo0-3 hi0-3 lo4-7 hi4-7; restore the order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), packed);
  }
  f32_to_bf16_scalar(s + i, d + i, n - i);
}

#undef CUBESIM_AVX2

// ---- f8: a table lookup to f32 (256 values), rounding from f32 by float8::encode ----

std::array<float, 256> f8_table(const float8::Format& f) {
  std::array<float, 256> t{};
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = float8::decode(f, static_cast<std::uint8_t>(i));
  return t;
}

void f8_to_f32(const std::array<float, 256>& table, const void* s, float* d, std::int64_t n) {
  const auto* b = static_cast<const std::uint8_t*>(s);
  for (std::int64_t i = 0; i < n; ++i) d[i] = table[b[i]];
}

void e4m3_to_f32(const void* s, float* d, std::int64_t n) {
  static const std::array<float, 256> table = f8_table(float8::kE4M3);
  f8_to_f32(table, s, d, n);
}
void e5m2_to_f32(const void* s, float* d, std::int64_t n) {
  static const std::array<float, 256> table = f8_table(float8::kE5M2);
  f8_to_f32(table, s, d, n);
}
void f32_to_e4m3(const float* s, void* d, std::int64_t n) {
  auto* b = static_cast<std::uint8_t*>(d);
  for (std::int64_t i = 0; i < n; ++i) b[i] = float8::encode(float8::kE4M3, s[i]);
}
void f32_to_e5m2(const float* s, void* d, std::int64_t n) {
  auto* b = static_cast<std::uint8_t*>(d);
  for (std::int64_t i = 0; i < n; ++i) b[i] = float8::encode(float8::kE5M2, s[i]);
}

// ---- dispatch ----

using ToF32 = void (*)(const void*, float*, std::int64_t);
using FromF32 = void (*)(const float*, void*, std::int64_t);

template <void (*F)(const std::uint16_t*, float*, std::int64_t)>
void from_u16(const void* s, float* d, std::int64_t n) {
  F(static_cast<const std::uint16_t*>(s), d, n);
}
template <void (*F)(const float*, std::uint16_t*, std::int64_t)>
void to_u16(const float* s, void* d, std::int64_t n) {
  F(s, static_cast<std::uint16_t*>(d), n);
}

ToF32 to_f32_row(DType from, ConvertIsa isa) {
  const bool avx2 = isa == ConvertIsa::avx2_f16c;
  switch (from) {
    case DType::f16:
      return avx2 ? from_u16<f16_to_f32_avx2> : from_u16<f16_to_f32_scalar>;
    case DType::bf16:
      return avx2 ? from_u16<bf16_to_f32_avx2> : from_u16<bf16_to_f32_scalar>;
    case DType::f8e4m3:
      return e4m3_to_f32;
    default:  // f8e5m2 (convert_block checked the dtype)
      return e5m2_to_f32;
  }
}

FromF32 from_f32_row(DType to, ConvertIsa isa) {
  const bool avx2 = isa == ConvertIsa::avx2_f16c;
  switch (to) {
    case DType::f16:
      return avx2 ? to_u16<f32_to_f16_avx2> : to_u16<f32_to_f16_scalar>;
    case DType::bf16:
      return avx2 ? to_u16<f32_to_bf16_avx2> : to_u16<f32_to_bf16_scalar>;
    case DType::f8e4m3:
      return f32_to_e4m3;
    default:  // f8e5m2
      return f32_to_e5m2;
  }
}

ConvertIsa detect_isa() {
  __builtin_cpu_init();
  // GCC's detection also checks that the OS saves the AVX registers (XGETBV).
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"))
    return ConvertIsa::avx2_f16c;
  return ConvertIsa::scalar;
}

}  // namespace

ConvertIsa best_convert_isa() {
  static const ConvertIsa isa = detect_isa();
  return isa;
}

std::string_view convert_isa_name(ConvertIsa isa) {
  switch (isa) {
    case ConvertIsa::scalar:
      return "scalar";
    case ConvertIsa::avx2_f16c:
      return "avx2+f16c";
  }
  return "?";
}

void convert_block(DType from, const void* src, std::int64_t ld_src, DType to, void* dst,
                   std::int64_t ld_dst, std::int64_t rows, std::int64_t cols, ConvertIsa isa) {
  if (!is_floating(from) || !is_floating(to))
    throw std::invalid_argument("convert_block: converts float dtypes only, not " +
                                std::string(dtype_name(is_floating(from) ? to : from)));
  if (rows <= 0 || cols <= 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const std::int64_t s_row = ld_src * dtype_size(from);
  const std::int64_t d_row = ld_dst * dtype_size(to);

  if (from == to) {
    const auto row_bytes = static_cast<std::size_t>(cols * dtype_size(from));
    for (std::int64_t r = 0; r < rows; ++r) std::memcpy(d + r * d_row, s + r * s_row, row_bytes);
    return;
  }
  if (to == DType::f32) {
    const ToF32 row = to_f32_row(from, isa);
    for (std::int64_t r = 0; r < rows; ++r)
      row(s + r * s_row, reinterpret_cast<float*>(d + r * d_row), cols);
    return;
  }
  if (from == DType::f32) {
    const FromF32 row = from_f32_row(to, isa);
    for (std::int64_t r = 0; r < rows; ++r)
      row(reinterpret_cast<const float*>(s + r * s_row), d + r * d_row, cols);
    return;
  }
  // Between two narrow dtypes: through f32 in cache-sized pieces.
  const ToF32 in = to_f32_row(from, isa);
  const FromF32 out = from_f32_row(to, isa);
  constexpr std::int64_t kChunk = 512;
  float tmp[kChunk];
  const std::int64_t s_size = dtype_size(from), d_size = dtype_size(to);
  for (std::int64_t r = 0; r < rows; ++r) {
    const unsigned char* srow = s + r * s_row;
    unsigned char* drow = d + r * d_row;
    for (std::int64_t c = 0; c < cols; c += kChunk) {
      const std::int64_t n = std::min(kChunk, cols - c);
      in(srow + c * s_size, tmp, n);
      out(tmp, drow + c * d_size, n);
    }
  }
}

}  // namespace cubesim::backends
