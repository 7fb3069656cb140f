#pragma once
// Virtual-channel classes: which channels of a bounded input buffer a packet may take, so that
// credit flow control can never deadlock.
//
// Contract: in one cube, XY routing orders the mesh links, so no cycle of packets each waiting
// for a buffer the next one holds can form there. Between cubes it can (around a ring of cubes,
// or through a UCIe port whose node is also the exit toward the next cube). So a packet's class
// is the number of UCIe and inter-SIP links it has crossed: within a class it only waits on
// mesh buffers of one cube, in XY order, and crossing a link takes it to the next class, so the
// waits of all packets form no cycle. Every bounded buffer needs a channel of its own for each
// class that can reach it:
//  - a router input buffer: classes 0 to `crossings`, the most links any route crosses; one
//    class is enough when the UCIe and inter-SIP buffers are unbounded, since a packet waiting
//    on such a link is always let through and every wait then ends in its own cube;
//  - a UCIe or inter-SIP input buffer: classes 1 to `crossings` (a packet there has crossed at
//    least its own link).
// A class's channels are a contiguous share of the buffer's (virtual_channels / classes each,
// the first classes taking one more when they do not divide).

#include <cstdint>

#include "components/network/link.hpp"
#include "components/system_config.hpp"

namespace cubesim::components {

struct VcPlan {
  std::uint32_t crossings = 0;  // the most UCIe + inter-SIP links on any route
  std::uint32_t router_classes = 1;
  std::uint32_t link_classes = 1;  // at UCIe and inter-SIP input buffers

  static VcPlan of(const SystemConfig& c);
  // The classes a buffer at the far end of a link of `kind` serves.
  std::uint32_t classes(LinkKind kind) const {
    return joins_cubes(kind) ? link_classes : router_classes;
  }
  // The class index (0 .. classes(kind) - 1) of a packet that has crossed `crossed` UCIe and
  // inter-SIP links, at a buffer beyond a link of `kind` (`crossed` counts that link).
  std::uint32_t class_index(LinkKind kind, std::uint32_t crossed) const {
    if (classes(kind) == 1) return 0;
    return joins_cubes(kind) ? crossed - 1 : crossed;
  }
};

// Channels [first, last) of class `index` among `vcs` channels shared by `classes` classes.
struct VcRange {
  std::uint32_t first, last;
};
inline VcRange vc_range(std::uint32_t vcs, std::uint32_t classes, std::uint32_t index) {
  const std::uint32_t each = vcs / classes, extra = vcs % classes;
  const std::uint32_t first = index * each + (index < extra ? index : extra);
  return {first, first + each + (index < extra ? 1 : 0)};
}

}  // namespace cubesim::components
