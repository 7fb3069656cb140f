// bidir_ring: the ring of every program in both directions, each block's halves going opposite
// ways, so that both of a program's ring links carry data.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& bidir_ring_algorithm() {
  static const Algorithm algorithm{
      .name = "bidir_ring",
      .implements = {{Collective::all_reduce, "half the data each way"},
                     {Collective::reduce_scatter, "half the data each way"},
                     {Collective::all_gather, "half the data each way"}},
      .channels = 2,
      .max_channels = 2,
      .placed = "the ring's two directions, both taken",
      .element_multiple = [](Collective, GridShape grid) -> std::int64_t { return grid.total(); },
      .schedule = [](const PlanInput& in) { return ring_plan(in, {{in.order}}, in.channels); }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
