// mesh2d: rings along each cube's mesh rows, then along its columns, then for each PE position
// the ring of every cube in the ring's order of cubes (single hops on a grid of cubes or SIPs).
// The grid must cover whole cube meshes.
#include <string>

#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels::collectives {

namespace {

std::vector<Groups> levels(const PlanInput& in) {
  const std::int64_t pes = in.grid.pes;
  const std::int64_t x = in.config.cube.noc.mesh_x, y = in.config.cube.noc.mesh_y;
  if (pes != x * y)
    throw UsageError("mesh2d runs over whole cube meshes, but the grid has " + std::to_string(pes) +
                     " PEs per cube of " + std::to_string(x * y) +
                     "; use algorithm=ring or hierarchical");
  const std::int64_t all_cubes = in.grid.cubes * in.grid.sips;
  Groups rows, columns, across;
  for (std::int64_t c = 0; c < all_cubes; ++c) {
    for (std::int64_t r = 0; r < y; ++r) {
      auto& g = rows.emplace_back();
      for (std::int64_t i = 0; i < x; ++i) g.push_back(c * pes + r * x + i);
    }
    for (std::int64_t i = 0; i < x; ++i) {
      auto& g = columns.emplace_back();
      for (std::int64_t r = 0; r < y; ++r) g.push_back(c * pes + r * x + i);
    }
  }
  for (std::int64_t q = 0; q < pes; ++q) {
    auto& g = across.emplace_back();
    for (std::int64_t c = 0; c < all_cubes; ++c)
      g.push_back(in.order[static_cast<std::size_t>(c * pes)] / pes * pes + q);
  }
  return {std::move(rows), std::move(columns), std::move(across)};
}

}  // namespace

const Algorithm& mesh2d_algorithm() {
  static const char* const how =
      "rings along each cube's mesh rows, then its columns, then across cubes";
  static const Algorithm algorithm{
      .name = "mesh2d",
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
