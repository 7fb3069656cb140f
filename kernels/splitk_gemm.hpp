#pragma once
// splitk_gemm: C (M x N) = A (M x K) . B (K x N) with K split over the programs, and the
// partial products summed over messages (tl.send / tl.recv), not through HBM.
//
// Program g of P takes the slice [k0, k1) of K (split_range: slices differ by at most one),
// multiplies columns [k0, k1) of A by rows [k0, k1) of B on its GEMM engine (both stay in HBM
// as refs; A's slice is strided, its rows K elements apart), and writes the f32 partial product
// to a scratch buffer on its own cube. A collective schedule (kernels/collectives/plan.hpp)
// then sums the P partials, flattened row-major and cut into P blocks: a reduce-scatter, so
// program g ends holding block g of C (summed with vector adds as the pieces arrive) and
// stores it. C is row-major f32 and every byte of it is written exactly once. M x N is padded
// up to whole blocks: the partials' tails hold zeros, C's tail their sum.
//
// tp_linear (tp_linear.hpp) is the same kernel with an all-reduce and a bias.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "components/collectives/schedule.hpp"
#include "components/dtype.hpp"
#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/collectives/executor.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

// One program's slice of K: its M x k block of A (rows `lda` elements apart), its k x N block
// of B (contiguous rows), and the f32 scratch its partial product goes to.
struct KSlice {
  Ptr a{}, b{}, partial{};
  std::int64_t k = 0, lda = 0;
};

struct SplitKArgs {
  std::int64_t M = 0, N = 0;
  DType dtype = DType::f16;            // of A, B and the bias; the partials and C are f32
  std::vector<KSlice> slices;          // by global program id
  std::optional<Ptr> bias;             // N values of dtype added to every row of C
  collectives::ScheduleArgs sum;       // sums the partials (its `in`) into C (its `out`)
  collectives::Clock* gemm = nullptr;  // when each program issued its GEMM and had it back
};

// One program: its GEMM (program 0's adds the bias in its epilogue, so the sum adds it to every
// element once), then its part of the sum.
void splitk_gemm(tl::Context& tl, const SplitKArgs& args);

// The programs a harness launches for a count of `programs` (0: every PE): the first PEs of
// the first cube, whole cubes of the first SIP, or whole SIPs; UsageError for another count,
// naming the parameter `param` and the counts that work.
GridShape grid_of(const components::SystemConfig& config, std::int64_t programs,
                  const std::string& param);
inline Grid launch_grid(GridShape g) {
  return Grid{.pes = g.pes, .cubes = g.cubes, .sips = g.sips};
}

// A split-K product laid out in a simulation: the partials, C and the sum, and the arguments
// of splitk_gemm; the caller places A, B and the bias and fills in the slices' a, b and lda.
// Not movable: the arguments point into it.
struct SplitKSetup {
  GridShape grid;
  std::int64_t M = 0, N = 0, K = 0;
  DType dtype = DType::f16;
  collectives::Collective collective = collectives::Collective::reduce_scatter;
  std::string algorithm;
  components::collectives::Buffer buffer = components::collectives::Buffer::sram;
  collectives::Plan plan;          // of the sum
  std::uint32_t sum_depth = 0;     // its rows in flight, fitted to a PE's SRAM
  std::int64_t elems = 0;          // of each partial and of C: M x N rounded up to whole blocks
  Ptr c;                           // C, row-major f32, interleaved across cubes
  std::vector<HostBuffer> inputs;  // what the host writes: A and B (their slices), a bias
  collectives::Clock gemm_clock, sum_clock;
  SplitKArgs args;

  SplitKSetup() = default;
  SplitKSetup(const SplitKSetup&) = delete;
  SplitKSetup& operator=(const SplitKSetup&) = delete;
};

struct SplitKShape {
  std::int64_t M = 0, N = 0, K = 0;
  DType dtype = DType::f16;
  // reduce_scatter: program g stores block g of C; all_reduce: every program ends with all of
  // C and each block is stored by its owner (collectives::stored_by_owners).
  collectives::Collective collective = collectives::Collective::reduce_scatter;
  std::string algorithm = collectives::default_algorithm(collectives::Collective::reduce_scatter);
  components::collectives::Buffer buffer = components::collectives::Buffer::sram;
};

// UsageError when the shape cannot be split over `grid` (K < programs) or a program's SRAM
// cannot hold the sum's data and slots.
std::unique_ptr<SplitKSetup> prepare_split_k(Simulation& sim, GridShape grid,
                                             const SplitKShape& shape);

// Sets up the whole problem as the splitk_gemm harness does: A and B row-major, interleaved
// across cubes, random from the simulation's seed (unless timing-only).
std::unique_ptr<SplitKSetup> setup_splitk_gemm(Simulation& sim, GridShape grid,
                                               const SplitKShape& shape);

// Launches splitk_gemm on the setup's grid; the outcome's details say how the time went: the
// GEMM phase (and its lower bound, the engine's start-up and compute for the largest slice),
// the sum (and its alpha-beta model), how the work was cut.
Outcome launch_split_k(Simulation& sim, SplitKSetup& setup);

// The harnesses' `buffer` parameter (components::collectives::Buffer of the sum).
ParamSpec partial_buffer_param();

KernelInfo splitk_gemm_info();

}  // namespace cubesim::kernels
