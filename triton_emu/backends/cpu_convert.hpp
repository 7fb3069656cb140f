#pragma once
// Vectorised conversion of 2D blocks between f16, bf16 and f32, for the GEMM paths that compute
// in f32. GCC 12 turns a plain element-by-element _Float16 conversion into a libgcc call per
// element (~9 ns, over half of a 1024^3 GEMM); F16C / AVX2 take well under 1 ns per element.
// Rounding is round-to-nearest-even on every ISA, so results do not depend on the CPU.

#include <cstdint>
#include <string_view>

#include "components/dtype.hpp"

namespace cubesim::backends {

enum class ConvertIsa : std::uint8_t {
  scalar,     // portable bit manipulation (Eigen::half / Eigen::bfloat16)
  avx2_f16c,  // 8 lanes at a time; every x86-64 CPU since 2013 has it
};

// The fastest ISA this CPU supports (detected once).
ConvertIsa best_convert_isa();
std::string_view convert_isa_name(ConvertIsa isa);

// Converts (or, for equal dtypes, copies) a rows x cols block: element (r, c) is read at
// src + r * ld_src + c and written to dst + r * ld_dst + c. Only f16, bf16 and f32 are accepted.
// NaNs stay NaNs (their payload may differ between ISAs); everything else is bit-exact.
void convert_block(DType from, const void* src, std::int64_t ld_src, DType to, void* dst,
                   std::int64_t ld_dst, std::int64_t rows, std::int64_t cols,
                   ConvertIsa isa = best_convert_isa());

}  // namespace cubesim::backends
