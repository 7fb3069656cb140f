#include "kernels/collectives/ring_order.hpp"

#include "components/topology/graph.hpp"

namespace cubesim::kernels::collectives {

namespace {

// A cycle through an x by y mesh (PE i on node (i % x, i / x)) in single hops: along row 0,
// then snaking over columns 1 .. x-1 of the other rows, and back up column 0. It closes with
// one hop when y is even; for an odd y and an even x the same walk on the transposed mesh.
// With both odd no such cycle exists: a snake, whose last step back to PE 0 is longer.
std::vector<std::int64_t> cube_cycle(std::int64_t x, std::int64_t y) {
  std::vector<std::int64_t> out;
  auto walk = [&](std::int64_t cols, std::int64_t rows, auto pe) {
    for (std::int64_t c = 0; c < cols; ++c) out.push_back(pe(c, 0));
    for (std::int64_t r = 1; r < rows; ++r)
      for (std::int64_t i = 0; i + 1 < cols; ++i)
        out.push_back(pe(r % 2 == 1 ? cols - 1 - i : 1 + i, r));
    for (std::int64_t r = rows - 1; r >= 1; --r) out.push_back(pe(0, r));
  };
  if (x >= 2 && y >= 2 && y % 2 == 0) {
    walk(x, y, [x](std::int64_t c, std::int64_t r) { return r * x + c; });
  } else if (x >= 2 && y >= 2 && x % 2 == 0) {
    walk(y, x, [x](std::int64_t c, std::int64_t r) { return c * x + r; });
  } else {
    for (std::int64_t r = 0; r < y; ++r)
      for (std::int64_t i = 0; i < x; ++i) out.push_back(r * x + (r % 2 == 0 ? i : x - 1 - i));
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> ring_order(const components::SystemConfig& config, GridShape grid) {
  // The same cycle at each level: PEs on their cube's mesh, cubes on the UCIe grid, SIPs on
  // the inter-SIP grid, where the launch covers the whole level and it is a grid; otherwise
  // in index order (a ring or all-to-all topology links neighbours in index order already).
  const auto cycle = [](bool whole, bool grid_topology, std::int64_t n, std::int64_t x,
                        std::int64_t y) {
    if (whole && grid_topology) return cube_cycle(x, y);
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
  };
  const auto& noc = config.cube.noc;
  const std::vector<std::int64_t> pes =
      cycle(grid.pes == static_cast<std::int64_t>(config.cube.pes), true, grid.pes, noc.mesh_x,
            noc.mesh_y);
  const std::vector<std::int64_t> cubes =
      cycle(grid.cubes == static_cast<std::int64_t>(config.cubes_per_sip),
            components::has_grid(config.ucie.topology), grid.cubes, config.ucie.mesh_x,
            config.ucie.mesh_y);
  const std::vector<std::int64_t> sips =
      cycle(grid.sips == static_cast<std::int64_t>(config.sips),
            components::has_grid(config.inter_sip.topology), grid.sips, config.inter_sip.grid_x,
            config.inter_sip.grid_y);
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(grid.total()));
  for (std::int64_t sip : sips)
    for (std::int64_t cube : cubes)
      for (std::int64_t pe : pes) order.push_back((sip * grid.cubes + cube) * grid.pes + pe);
  return order;
}

}  // namespace cubesim::kernels::collectives
