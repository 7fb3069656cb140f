#pragma once
// What the mesh can deliver to each resource a spec attaches to it, next to the resource's own
// peak: a cube's HBM, the UCIe links between two neighbouring cubes, the inter-SIP links
// between two SIPs. Each is the channel-load bound of one even traffic pattern over the routes
// the network takes: every (source, destination) pair carries the same share, and the pattern's
// throughput is at most the smallest bandwidth / (share of the pattern on a link) over the links
// it crosses. A resource whose bound lies far below its peak is one no kernel can approach:
// its ports sit on too few mesh nodes (`cubesim info` warns).

#include <cstdint>
#include <string>
#include <vector>

#include "components/network/topology.hpp"

namespace cubesim::components {

struct PortCapacity {
  std::string resource;              // "hbm_read", "hbm_write", "ucie", "inter_sip"
  std::string pattern;               // what flows, in words
  double peak_bytes_per_s = 0;       // the resource itself (all its channels or links)
  double delivered_bytes_per_s = 0;  // the pattern's bound through the mesh and the resource
  std::string bottleneck;            // the link that sets the bound
  std::string bottleneck_field;      // its bandwidth's spec field
  double fraction() const {
    return peak_bytes_per_s > 0 ? delivered_bytes_per_s / peak_bytes_per_s : 0;
  }
};

// The patterns, on cube 0 of SIP 0 (every cube is built alike) and its first neighbours:
//  - hbm_read: every PE of a cube reads every channel of its own cube evenly;
//  - hbm_write: the same, writing;
//  - ucie (when a SIP has several cubes): every PE of cube 0 sends to every PE of its first
//    neighbour;
//  - inter_sip (several SIPs): every PE of SIP 0's port cube to every PE of SIP 1's.
// Large meshes sample destinations evenly (at most some 2^18 pairs per pattern).
std::vector<PortCapacity> port_capacities(const Topology& topology);

}  // namespace cubesim::components
