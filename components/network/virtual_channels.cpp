#include "components/network/virtual_channels.hpp"

#include <algorithm>

#include "components/topology/graph.hpp"

namespace cubesim::components {

VcPlan VcPlan::of(const SystemConfig& c) {
  VcPlan p;
  const Graph cubes(c.ucie.topology, c.cubes_per_sip, c.ucie.mesh_x, c.ucie.mesh_y);
  p.crossings = cubes.diameter();
  if (c.sips > 1) {
    // Between SIPs: to the port cube, across the SIPs, from the port cube.
    const Graph sips(c.inter_sip.topology, c.sips, c.inter_sip.grid_x, c.inter_sip.grid_y);
    const std::uint32_t to_port = cubes.eccentricity(c.inter_sip.port_cube);
    p.crossings = std::max(p.crossings, 2 * to_port + sips.diameter());
  }
  const bool links_bounded = c.ucie.buffers.bounded() || c.inter_sip.buffers.bounded();
  p.router_classes = links_bounded ? p.crossings + 1 : 1;
  p.link_classes = std::max<std::uint32_t>(p.crossings, 1);
  return p;
}

}  // namespace cubesim::components
