#pragma once
// Integer GEMM: i8 or i32 inputs with an i32 output, i64 inputs with an i64 output. No BLAS
// library offers i32 or i64 (oneDNN's integer matmul takes 8-bit inputs only; cpu_onednn.hpp
// uses it for i8 where it is exact), so it is a plain blocked loop: correct first, fast enough
// second.
//
// Semantics: every product is exact and the dot product is the exact integer sum reduced
// modulo 2^32 (i32 output) or 2^64 (i64 output) and read as two's complement, as an integer MAC
// array with an accumulator of the output's width would give it (no saturation). Computing in
// uint32 / uint64 with wrapping gives exactly those bits (addition and multiplication commute
// with reduction modulo 2^n), at half the cost of wider lanes for i32.

#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

// `d` must already be validated and have integer inputs. Rows of C are shared out over up to
// `threads` OpenMP threads.
void cpu_integer_gemm(const GemmDesc& d, int threads = 1);

}  // namespace cubesim::backends
