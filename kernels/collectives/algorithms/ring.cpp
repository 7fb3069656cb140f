// ring: one ring of every program (ring_order). All-reduce is a ring reduce-scatter then a ring
// all-gather; broadcast is a pipelined chain along the ring. With channels=2 the data is split
// over the ring's two directions (as bidir_ring), or two chains going opposite ways.
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
      .max_channels = 2,
      .placed = "the ring's two directions",
      .element_multiple = [](Collective c, GridShape grid) -> std::int64_t {
        return c == Collective::broadcast ? 1 : grid.total();
      },
      .schedule =
          [](const PlanInput& in) {
            if (in.collective != Collective::broadcast)
              return ring_plan(in, {{in.order}}, in.channels);
            std::vector<std::vector<std::int64_t>> chains{chain(in.order)};
            if (in.channels == 2) chains.push_back(chain(reversed_ring(in.order)));
            return tree_plan(in, std::move(chains), in.channels);
          }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
