#pragma once
// tp_linear: a tensor-parallel, row-parallel linear layer Y (M x N) = X (M x K) . W (K x N) + b.
//
// W is split by rows (K) over the P programs and X by the matching columns, as a layer after a
// column-parallel one finds them: program g holds X_g (M x k_g, the columns [k0, k1) of X) and
// W_g (k_g x N, the rows [k0, k1) of W), both contiguous on its own cube's HBM, with
// [k0, k1) = split_range(K, P, g). Each program computes Y_g = X_g . W_g (f32) with the GEMM
// engine; an all-reduce over tl.send / tl.recv (any algorithm of the allreduce kernel) then
// sums the Y_g, so every program ends holding Y, as the next layer needs it. The bias is added
// before the sum, by program 0's GEMM engine in the epilogue of Y_0, so every element gets it
// once.
//
// Y (row-major f32, interleaved across cubes) is written once: of the all-reduced vector,
// block g (the block the ring algorithms' reduce-scatter half leaves with program g) is stored
// by program g; the tree's whole vector by program 0, its root. It is the split-K GEMM's kernel
// (splitk_gemm.hpp) with an all-reduce instead of a reduce-scatter.

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/harness/grid.hpp"
#include "kernels/splitk_gemm.hpp"

namespace cubesim::kernels {

struct TpLinearShape {
  std::int64_t M = 0, N = 0, K = 0;  // tokens, output features, input features
  DType dtype = DType::f16;          // of X, W and b; Y is f32
  bool bias = true;
  std::string algorithm =  // of the all-reduce
      collectives::default_algorithm(collectives::Collective::all_reduce);
  components::collectives::Buffer buffer = components::collectives::Buffer::sram;
};

// Lays out X_g and W_g on each program's cube and b (random from the simulation's seed unless
// timing-only), and the all-reduce; launch with launch_split_k.
std::unique_ptr<SplitKSetup> setup_tp_linear(Simulation& sim, GridShape grid,
                                             const TpLinearShape& shape);

KernelInfo tp_linear_info();

}  // namespace cubesim::kernels
