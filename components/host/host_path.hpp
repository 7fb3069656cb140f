#pragma once
// The way between the host and the device's HBM (system.host): each SIP's host link into its
// IO die, the IO die's ports into the meshes of the cubes it joins, and from there the routes
// of the network to the HBM channels that hold the bytes.
//
// A host transfer runs between launches, with nothing else on the links, so it is timed as one
// pipelined flow over every resource it crosses (docs/hardware-model.md, "Host transfers"):
//
//   time = setup + the longest way's latency + max over resources (bytes through it / its rate)
//
// where the resources are each SIP's host link, each IO-die port, every NOC, UCIe and inter-SIP
// link of the routes and every HBM channel (at the rate a long stream sustains). Bytes of HBM
// channel c of a cube enter (or leave) through the joined cube of its SIP fewest UCIe hops away,
// by port c mod (number of ports).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/network/topology.hpp"

namespace cubesim::components {

enum class HostDirection : std::uint8_t { to_device, to_host };
inline constexpr const char* host_direction_name(HostDirection d) {
  return d == HostDirection::to_device ? "to_device" : "to_host";
}

struct HostRange {
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
};

struct HostTransferTime {
  HostDirection direction = HostDirection::to_device;
  std::uint64_t bytes = 0;
  Tick time = 0;  // setup + latency + serialisation; 0 for no bytes
  Tick setup = 0;
  Tick latency = 0;        // of the longest way, first byte out to its arrival
  Tick serialisation = 0;  // of the most loaded resource
  std::string bottleneck;  // that resource's name
};

class HostPath {
 public:
  HostPath(const Topology& topology, const AddressMap& map);

  // The time to move `ranges` (mapped, placed addresses) in `direction`, all at once. Throws
  // AddressError for an unmapped byte.
  HostTransferTime time(HostDirection direction, std::span<const HostRange> ranges) const;

  // The global cube whose IO-die port serves global cube `cube`.
  std::uint32_t entry_cube(std::uint32_t cube) const;
  // The names of the host's own resources, as the bottleneck reports them.
  std::string host_link_name(std::uint32_t sip, HostDirection d) const;
  std::string port_name(std::uint32_t cube, std::uint32_t port, HostDirection d) const;

 private:
  const Topology& topology_;
  const AddressMap& map_;
  const HostConfig& host_;
  std::vector<std::uint32_t> entry_;  // per cube of a SIP: the joined cube (index in the SIP)
};

}  // namespace cubesim::components
