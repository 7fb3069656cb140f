#pragma once
// sharded_gemm: ADR-0022's column-sharded GEMM, C (M x N) = A (M x K) . B (K x N).
//
// Every program computes the columns [col_start, col_start + n_per_pid) of C, with
//   global_pid = (program_id(2) * num_programs(1) + program_id(1)) * num_programs(0)
//                + program_id(0)
//   n_per_pid  = N / (num_programs(0) * num_programs(1) * num_programs(2))
// (DESIGN.md's folding of the SIP axis; on one SIP it is the ADR's kernel). N must be a
// multiple of the number of programs.
//
// Layout, as in the ADR: B and C are stored column-blocked. Program p's K x n_per_pid block of
// B lies at b_ptr + col_start * K * size and its M x n_per_pid block of C at
// out_ptr + col_start * M * size, each row-major and contiguous (size = element bytes).
// A is plain row-major M x K.
//
// A is loaded whole into the PE's SRAM as in the ADR when it fits (M * K * size <= the SRAM
// free when the program starts: the kernel holds no other tile, B and C stream through the
// GEMM engine). Otherwise the program loads A in row blocks of block_m rows, issuing one
// composite GEMM per block into the matching rows of its output block; block_m = 0 picks the
// largest block that fits in half the SRAM, so the next block loads while the GEMM engine
// works on the current one (double buffering).

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

// The ADR's kernel with axis 2 folded in: f16, A whole or in automatic row blocks.
void sharded_gemm(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                  std::int64_t K, std::int64_t N);

struct ShardedGemmOptions {
  DType dtype = DType::f16;  // of A, B and C (f16, bf16, f32); f16/bf16 accumulate in f32
  std::int64_t block_m = 0;  // rows of A per composite; 0 = automatic (see above)
};

void sharded_gemm_with(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                       std::int64_t K, std::int64_t N, ShardedGemmOptions options);

// Element index of logical element (r, j) of a rows x N matrix stored column-blocked in blocks
// of n_per_pid columns (the layout of B, with rows = K, and of C, with rows = M).
constexpr std::int64_t column_blocked_index(std::int64_t rows, std::int64_t n_per_pid,
                                            std::int64_t r, std::int64_t j) {
  return (j / n_per_pid) * rows * n_per_pid + r * n_per_pid + j % n_per_pid;
}

KernelInfo sharded_gemm_info();

}  // namespace cubesim::kernels
