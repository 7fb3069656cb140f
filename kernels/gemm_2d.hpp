#pragma once
// gemm_2d: C (M x N) = A (M x K) . B (K x N) on plain row-major matrices, sharded over the
// grid in two dimensions:
//   rows of C    over cubes (axis 1), and further over SIPs (axis 2): row band
//                program_id(2) * num_programs(1) + program_id(1) of num_programs(1) * (2);
//   columns of C over the PEs of a cube (axis 0).
// Bands and column blocks are balanced splits (sizes differ by at most one), so any M, N, K
// work; programs whose band or block is empty do nothing.
//
// Why SIPs split rows rather than K: a split of K would make the SIPs accumulate into the same
// bytes of C, which needs an ordering between them (a barrier and a read-modify-write of all of
// C over the slow inter-SIP links). Splitting rows keeps every byte of C written by exactly one
// program, and each SIP only reads its own rows of A.
//
// Per program: its K x nb block of B (row_stride N) is loaded into SRAM once when it fits in
// the free SRAM, else named by a ref and streamed by every GEMM. Its rows of A are refs
// (row-major and contiguous), streamed by the GEMM engine in chunks of block_m rows (default:
// the whole band in one GEMM), and each chunk's product is written straight into its rows of
// C's column block with the output row stride N (CompositeOptions::out_row_stride).

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

struct Gemm2dOptions {
  DType dtype = DType::f16;  // of A, B and C (f16, bf16, f32)
  std::int64_t block_m = 0;  // rows per GEMM; 0 = the program's whole row band
};

// f16 with automatic chunks.
void gemm_2d(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
             std::int64_t N);
void gemm_2d_with(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
                  std::int64_t N, Gemm2dOptions options);

KernelInfo gemm_2d_info();

}  // namespace cubesim::kernels
