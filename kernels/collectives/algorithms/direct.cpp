// direct: an all-to-all in one step; every program sends every block at once (to the program
// 1 ahead on the ring first, then 2 ahead, and so on) and receives the others'.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& direct_algorithm() {
  static const Algorithm algorithm{
      .name = "direct",
      .implements = {{Collective::all_to_all, "every message at once"}},
      .channels = 1,
      .max_channels = 1,
      .placed = "one message per pair",
      .element_multiple = [](Collective, GridShape grid) -> std::int64_t { return grid.total(); },
      .schedule = [](const PlanInput& in) { return all_to_all_plan(in, true); }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
