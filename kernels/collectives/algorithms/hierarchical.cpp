// hierarchical: rings level by level: each cube's ring of its PEs, then for each PE position
// the ring of the cubes of its SIP, then the ring of the SIPs (levels of one member left out).
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

namespace {

std::vector<Groups> levels(const PlanInput& in) {
  const std::int64_t pes = in.grid.pes, cubes = in.grid.cubes, sips = in.grid.sips;
  auto at = [&](std::int64_t sip, std::int64_t cube, std::int64_t q) {
    return in.order[static_cast<std::size_t>((sip * cubes + cube) * pes + q)];
  };
  Groups in_cube, in_sip, across;
  for (std::int64_t s = 0; s < sips; ++s)
    for (std::int64_t c = 0; c < cubes; ++c) {
      auto& g = in_cube.emplace_back();
      for (std::int64_t q = 0; q < pes; ++q) g.push_back(at(s, c, q));
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
  return {std::move(in_cube), std::move(in_sip), std::move(across)};
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
