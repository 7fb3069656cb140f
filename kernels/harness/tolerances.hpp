#pragma once
// How much error a result may carry: the precision of each dtype and the error bound of an
// f32-accumulated dot product, from which the harnesses derive their tolerances.

#include <cstdint>

#include "components/dtype.hpp"

namespace cubesim::kernels {

// Unit roundoff (half an ulp at 1) of a dtype: f16 2^-11, bf16 2^-8, f32 2^-24, f8e4m3 2^-4,
// f8e5m2 2^-3; integers and bool 0 (exact).
double unit_roundoff(DType dtype);
// The smallest normal magnitude: below it a dtype only keeps absolute precision.
double min_normal(DType dtype);

// E[x^2] of Fill::signed_unit values (|x| uniform in [1/16, 1]): (1 - 16^-3) / (3 * 15/16).
inline constexpr double kSignedUnitMeanSquare = (1.0 - 1.0 / 4096.0) / (3.0 * 15.0 / 16.0);

// For a dot product of length k of Fill::signed_unit values accumulated in f32 and rounded to
// `out`: the error scale is the standard deviation of the result, sqrt(k) E[x^2] (results
// smaller than that are measured against it, since cancellation leaves only absolute
// accuracy), and the tolerance is one rounding to `out` (u_out |ref|) plus the f32
// accumulation: each of the k additions errs by at most 2^-24 times a partial sum, and the
// partial sums (a random walk) stay within about 4 standard deviations, so k * 4 * 2^-24
// relative to the scale.
double dot_error_scale(std::int64_t k, double mean_square = kSignedUnitMeanSquare);
double dot_tolerance(DType out, std::int64_t k);

}  // namespace cubesim::kernels
