#include "components/host/host_path.hpp"

#include <algorithm>
#include <limits>

#include "components/network/path_bound.hpp"

namespace cubesim::components {

HostPath::HostPath(const Topology& topology, const AddressMap& map)
    : topology_(topology), map_(map), host_(topology.config().host) {
  const std::uint32_t cubes = topology.config().cubes_per_sip;
  entry_.resize(cubes);
  for (std::uint32_t c = 0; c < cubes; ++c) {
    std::uint32_t best = host_.io_cubes.front(),
                  best_hops = std::numeric_limits<std::uint32_t>::max();
    for (const std::uint32_t joined : host_.io_cubes) {
      const std::uint32_t hops = topology.cube_hops(0, joined, c);
      if (hops < best_hops || (hops == best_hops && joined < best)) {
        best = joined;
        best_hops = hops;
      }
    }
    entry_[c] = best;
  }
}

std::uint32_t HostPath::entry_cube(std::uint32_t cube) const {
  const std::uint32_t per_sip = topology_.config().cubes_per_sip;
  return cube / per_sip * per_sip + entry_[cube % per_sip];
}

std::string HostPath::host_link_name(std::uint32_t sip, HostDirection d) const {
  return "sip" + std::to_string(sip) + ".host_link." + host_direction_name(d);
}

std::string HostPath::port_name(std::uint32_t cube, std::uint32_t port, HostDirection d) const {
  const std::uint32_t per_sip = topology_.config().cubes_per_sip;
  return "sip" + std::to_string(cube / per_sip) + ".cube" + std::to_string(cube % per_sip) +
         ".io_port" + std::to_string(port) + "." + host_direction_name(d);
}

HostTransferTime HostPath::time(HostDirection direction, std::span<const HostRange> ranges) const {
  HostTransferTime out;
  out.direction = direction;
  const std::uint32_t channels = map_.hbm_channels();
  std::vector<std::uint64_t> per_channel(std::size_t{topology_.cubes()} * channels, 0);
  for (const HostRange& r : ranges) {
    if (r.bytes == 0) continue;
    map_.for_each_piece(
        r.addr, r.bytes, map_.channel_interleave_bytes(),
        [&](std::uint64_t, Location loc, std::uint64_t len) {
          per_channel[std::size_t{loc.global_cube} * channels + map_.channel(loc)] += len;
        });
    out.bytes += r.bytes;
  }
  if (out.bytes == 0) return out;

  const bool down = direction == HostDirection::to_device;
  const std::uint32_t per_sip = topology_.config().cubes_per_sip;
  const auto ports = static_cast<std::uint32_t>(host_.io_nodes.size());
  const HbmModel& hbm = topology_.hbm();
  const Tick router = topology_.router_delay();
  PathBound bound(topology_);
  Route route;
  for (std::size_t k = 0; k < per_channel.size(); ++k) {
    const std::uint64_t b = per_channel[k];
    if (b == 0) continue;
    const auto cube = static_cast<std::uint32_t>(k / channels);
    const auto channel = static_cast<std::uint32_t>(k % channels);
    const std::uint32_t entry = entry_cube(cube), port = channel % ports;
    const std::uint32_t node = topology_.node(host_.io_nodes[port]);
    const std::uint32_t controller = topology_.hbm_node(channel);
    bound.add_resource(host_link_name(cube / per_sip, direction), host_.link_bandwidth, b);
    bound.add_resource(port_name(entry, port, direction), host_.io_bandwidth, b);
    bound.add_link(topology_.hbm_channel(cube, channel), b, hbm.stream_bandwidth());
    route.links.clear();
    route.latency.clear();
    if (down)
      topology_.route_nodes(entry, node, cube, controller, route);
    else
      topology_.route_nodes(cube, controller, entry, node, route);
    Tick way = 0;
    for (const Tick t : route.latency) way += t;
    // Into the entry router, the routes, and the channel; a read's request goes the other way
    // first and waits for its row.
    Tick latency = host_.link_latency + host_.io_latency + router + way + hbm.access_latency();
    if (!down)  // the request crosses the IO die and the routes first
      latency += host_.io_latency + router +
                 topology_.route_latency(entry, node, cube, controller) + hbm.stream_latency();
    bound.add_route(route, b, latency);
  }
  out.latency = bound.latency();
  out.serialisation = bound.serialisation();
  out.bottleneck = bound.bottleneck();
  out.setup = host_.setup;
  out.time = emu::checked_add(out.setup, bound.time(), "host transfer");
  return out;
}

}  // namespace cubesim::components
