// switch: an all-reduce that reduces in the network (NVLS / SHARP): rings within each cube,
// then each switch that reduces (system.ucie / system.inter_sip .switch_reduction) sums the
// cube's reduce-scattered blocks across the cubes of a SIP and across the SIPs in one step each
// (a level whose links do not reduce runs a ring there, as hierarchical does), then rings
// within each cube again. With ranks=sips, where the ranks are the SIPs, it is the inter-SIP
// switch alone: every channel's vector goes up once and its sum comes down once.
#include "components/network/topology.hpp"
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

namespace {

// The PEs of one cube, in ring order, the same in every cube: the members of a switch group
// (one PE of every cube, or of every SIP) then hold the same range after the cube's ring.
std::vector<std::int64_t> cube_ring(const PlanInput& in) {
  std::vector<std::int64_t> ring;
  for (std::int64_t q = 0; q < in.grid.pes; ++q)
    ring.push_back(in.order[static_cast<std::size_t>(q)] % in.grid.pes);
  return ring;
}

Plan plan(const PlanInput& in) {
  const std::vector<std::int64_t> ring = cube_ring(in);
  std::vector<Groups> levels =
      hierarchy_levels(in.grid, [&](std::int64_t sip, std::int64_t cube, std::int64_t q) {
        return (sip * in.grid.cubes + cube) * in.grid.pes + ring[static_cast<std::size_t>(q)];
      });
  const auto level = [](const components::SwitchReduction& r, components::SwitchLevel l) {
    return r.adds(DType::f32) ? static_cast<int>(l) : -1;
  };
  return ring_plan(in, std::move(levels), in.channels,
                   {-1, level(in.config.ucie.reduction, components::SwitchLevel::ucie),
                    level(in.config.inter_sip.reduction, components::SwitchLevel::inter_sip)});
}

}  // namespace

const Algorithm& switch_algorithm() {
  static const Algorithm algorithm{
      .name = "switch",
      .implements = {{Collective::all_reduce,
                      "rings within each cube, then in-network reduction in each switch that "
                      "reduces (across the cubes of a SIP, across SIPs; a ring where the links "
                      "do not reduce), then rings within each cube"}},
      .channels = 1,
      .max_channels = 2,
      .placed = "each cube ring's two directions",
      .element_multiple = [](Collective, GridShape grid) -> std::int64_t { return grid.total(); },
      .schedule = plan};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
