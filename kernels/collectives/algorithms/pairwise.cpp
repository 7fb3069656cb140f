// pairwise: an all-to-all in n-1 steps; in step i every program sends its block to the program
// i+1 ahead of it on the ring and receives from the one i+1 behind.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& pairwise_algorithm() {
  static const Algorithm algorithm{
      .name = "pairwise",
      .implements = {{Collective::all_to_all,
                      "n-1 steps, in step i every program sends to the one i+1 ahead on the "
                      "ring"}},
      .channels = 1,
      .max_channels = 1,
      .placed = "one message per pair",
      .element_multiple = [](Collective, GridShape grid) -> std::int64_t { return grid.total(); },
      .schedule = [](const PlanInput& in) { return all_to_all_plan(in, false); }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
