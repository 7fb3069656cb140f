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
  const std::int64_t pes = in.grid.pes, cubes = in.grid.cubes, sips = in.grid.sips;
  const std::vector<std::int64_t> ring = cube_ring(in);
  auto at = [&](std::int64_t sip, std::int64_t cube, std::int64_t pe) {
    return (sip * cubes + cube) * pes + pe;
  };
  Groups in_cube, in_sip, across;
  for (std::int64_t s = 0; s < sips; ++s)
    for (std::int64_t c = 0; c < cubes; ++c) {
      auto& g = in_cube.emplace_back();
      for (const std::int64_t q : ring) g.push_back(at(s, c, q));
    }
  for (std::int64_t s = 0; s < sips; ++s)
    for (std::int64_t q = 0; q < pes; ++q) {
      auto& g = in_sip.emplace_back();
      for (std::int64_t c = 0; c < cubes; ++c) g.push_back(at(s, c, q));
    }
  for (std::int64_t c = 0; c < cubes; ++c)
    for (std::int64_t q = 0; q < pes; ++q) {
      auto& g = across.emplace_back();
      for (std::int64_t s = 0; s < sips; ++s) g.push_back(at(s, c, q));
    }
  const auto level = [](const components::SwitchReduction& r, components::SwitchLevel l) {
    return r.adds(DType::f32) ? static_cast<int>(l) : -1;
  };
  return ring_plan(in, {std::move(in_cube), std::move(in_sip), std::move(across)}, in.channels,
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
