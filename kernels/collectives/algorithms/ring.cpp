// ring: one ring of every program (ring_order). All-reduce is a ring reduce-scatter then a ring
// all-gather; broadcast is a pipelined chain along the ring.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& ring_algorithm() {
  static const Algorithm algorithm{
      .name = "ring",
      .implements = {{Collective::all_reduce, "one ring of every program"},
                     {Collective::reduce_scatter, "one ring of every program"},
                     {Collective::all_gather, "one ring of every program"},
                     {Collective::broadcast, "a pipelined chain along the ring of every program"}},
      .channels = 1,
      .element_multiple = [](Collective c, GridShape grid) -> std::int64_t {
        return c == Collective::broadcast ? 1 : grid.total();
      },
      .schedule =
          [](const PlanInput& in) {
            if (in.collective == Collective::broadcast) return tree_plan(in, chain(in.order), 1);
            return ring_plan(in, {{in.order}}, 1);
          }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
