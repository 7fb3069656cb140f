#pragma once
// Integer GEMM: i32 inputs, i32 output. No BLAS library offers it (oneDNN's integer matmul takes
// 8-bit inputs only), so it is a plain blocked loop: correct first, fast enough second.
//
// Semantics: every product is exact and the dot product is the exact integer sum reduced
// modulo 2^32 and read as two's complement, i.e. int64 accumulation wrapped to i32 as an integer
// MAC array with a 32-bit accumulator would (no saturation). Computing in uint32 with wrapping
// gives exactly those bits (addition and multiplication commute with reduction mod 2^32), at half
// the cost of int64 lanes.

#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

// `d` must already be validated and have i32 inputs and output. Rows of C are shared out over
// up to `threads` OpenMP threads.
void cpu_i32_gemm(const GemmDesc& d, int threads = 1);

}  // namespace cubesim::backends
