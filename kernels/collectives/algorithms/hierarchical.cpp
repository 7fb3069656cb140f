// hierarchical: rings level by level: each cube's ring of its PEs, then for each PE position
// the ring of the cubes of its SIP, then the ring of the SIPs (levels of one member left out).
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

namespace {

std::vector<Groups> levels(const PlanInput& in) {
  return hierarchy_levels(in.grid, [&](std::int64_t sip, std::int64_t cube, std::int64_t q) {
    return in.order[static_cast<std::size_t>((sip * in.grid.cubes + cube) * in.grid.pes + q)];
  });
}

}  // namespace

const Algorithm& hierarchical_algorithm() {
  static const char* const how =
      "rings within each cube, then across the cubes of a SIP, then across SIPs";
  static const Algorithm algorithm{
      .name = "hierarchical",
      .implements = {{Collective::all_reduce, how},
                     {Collective::reduce_scatter, how},
                     {Collective::all_gather, how}},
      .channels = 1,
      .max_channels = 2,
      .placed = "each ring's two directions",
      .element_multiple = [](Collective, GridShape grid) -> std::int64_t { return grid.total(); },
      .schedule = [](const PlanInput& in) { return ring_plan(in, levels(in), in.channels); }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
