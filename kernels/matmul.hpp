#pragma once
// matmul: a tiled GEMM as Triton writes one (its tutorial 03-matrix-multiplication),
// C (M x N) = A (M x K) . B on row-major matrices, one program per block_m x block_n tile of C
// on a logical grid of cdiv(M, block_m) * cdiv(N, block_n) programs that the dispatcher runs in
// waves over the PEs, as a GPU's block scheduler runs a grid over its SMs.
//
// Program pid takes its tile in grouped order (group_m rows of tiles at a time, down each
// column of the group before the next), so programs that run together share rows of A and
// columns of B: what a cube cache (a GPU's L2) keeps. The GEMM engine streams the tile's rows
// of A and columns of B (refs) while it multiplies, in steps of block_k of K (0: all of K in
// one step, written straight into C; else an f32 accumulator tile in SRAM, cast on the last
// step and stored): the software pipeline of Triton's K loop, in the engine.
//
// B is K x N (b_layout=kn), or N x K (nk: the layout of torch.nn.Linear's weight, whose rows
// the engine streams whole).

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

struct MatmulOptions {
  DType dtype = DType::f16;  // of A, B and C (f16, bf16, f32); products accumulate in f32
  std::int64_t block_m = 128, block_n = 128;
  std::int64_t block_k = 0;  // K per step; 0: all of K in one step
  std::int64_t group_m = 8;  // rows of tiles per group of the grouped order
  bool b_nk = false;         // B is stored N x K
};

// The programs of the logical grid (pid 0 .. cdiv(M, bm) * cdiv(N, bn) - 1 along axis 0).
std::int64_t matmul_programs(std::int64_t M, std::int64_t N, const MatmulOptions& options);
// SRAM one program holds at most: with steps of K, the f32 accumulator and its cast.
std::uint64_t matmul_sram_bytes(std::int64_t K, const MatmulOptions& options);

void matmul(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
            std::int64_t N, MatmulOptions options);

KernelInfo matmul_info();

}  // namespace cubesim::kernels
