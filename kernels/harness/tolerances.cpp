#include "kernels/harness/tolerances.hpp"

#include <algorithm>
#include <cmath>

namespace cubesim::kernels {

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return 0x1p-11;
    case DType::bf16:
      return 0x1p-8;
    case DType::f32:
      return 0x1p-24;
    case DType::f8e4m3:
      return 0x1p-4;
    case DType::f8e5m2:
      return 0x1p-3;
    case DType::i32:
    case DType::i8:
    case DType::i64:
    case DType::boolean:
      return 0;
  }
  return 0;
}

double min_normal(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return 0x1p-14;
    case DType::bf16:
    case DType::f32:
      return 0x1p-126;
    case DType::f8e4m3:
      return 0x1p-6;
    case DType::f8e5m2:
      return 0x1p-14;
    case DType::i32:
    case DType::i8:
    case DType::i64:
    case DType::boolean:
      return 1;
  }
  return 0;
}

double dot_error_scale(std::int64_t k, double mean_square) {
  return std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1))) * mean_square;
}

double dot_tolerance(DType out, std::int64_t k) {
  return unit_roundoff(out) + 4.0 * static_cast<double>(k) * 0x1p-24;
}

}  // namespace cubesim::kernels
