#pragma once
// Elements of any DType to and from the host types tile math computes in (f32, i64, f64).
//
// To a float dtype: round to nearest even (f8 as components/float8.hpp says). To an integer
// dtype from a float: truncate toward zero, saturate at the dtype's range, NaN gives 0 (a plain
// C++ cast of NaN or of an out-of-range value is undefined). To an integer dtype from i64: wrap
// modulo 2^bits (two's complement). To bool: nonzero (NaN included) is 1, else 0.

#include <cstddef>
#include <cstdint>

#include "components/dtype.hpp"

namespace cubesim::tl {

void decode_f32(DType from, const std::byte* src, std::int64_t n, float* out);
// Float elements saturate as above.
void decode_i64(DType from, const std::byte* src, std::int64_t n, std::int64_t* out);
// Exact for every dtype but i64 beyond 2^53.
void decode_f64(DType from, const std::byte* src, std::int64_t n, double* out);

void encode_f32(const float* in, std::int64_t n, DType to, std::byte* dst);
void encode_i64(const std::int64_t* in, std::int64_t n, DType to, std::byte* dst);
// Floats round once from double (f16/bf16 through f32, which may round twice on rare ties).
void encode_f64(const double* in, std::int64_t n, DType to, std::byte* dst);
// `n` elements of one value, converted once (an integer dtype takes a value in its range).
void fill_f64(std::byte* dst, std::int64_t n, DType to, double value);

// The integer the i64 value `v` is when stored as integer dtype `t` (wraps; bool: v != 0).
std::int64_t wrap_integer(DType t, std::int64_t v);
// Saturating truncation of a float to integer dtype `t`; NaN gives 0.
std::int64_t float_to_integer(DType t, double v);

}  // namespace cubesim::tl
