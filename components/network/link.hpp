#pragma once
// A directed, contended resource that packets cross one after another: a NOC link, a PE's
// injection or ejection port, a UCIe or inter-SIP link, an HBM channel, or the slice of the
// cube's cache in front of a channel (what a hit is served from). A link serialises a
// packet in bytes / bandwidth and is busy until the packet's tail has left it.

#include <cstdint>

#include "emu/time.hpp"

namespace cubesim::components {

using LinkId = std::uint32_t;  // index into Topology::links()

enum class LinkKind : std::uint8_t { noc, inject, eject, ucie, inter_sip, hbm_channel, cache };

inline constexpr const char* link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::noc:
      return "noc";
    case LinkKind::inject:
      return "inject";
    case LinkKind::eject:
      return "eject";
    case LinkKind::ucie:
      return "ucie";
    case LinkKind::inter_sip:
      return "inter_sip";
    case LinkKind::hbm_channel:
      return "hbm";
    case LinkKind::cache:
      return "cache";
  }
  return "?";
}

// Whether a link joins two cubes (UCIe) or two SIPs: crossing one moves a packet to the next
// virtual-channel class (virtual_channels.hpp).
inline constexpr bool joins_cubes(LinkKind k) {
  return k == LinkKind::ucie || k == LinkKind::inter_sip;
}

// The spec field a link's bandwidth comes from, for error messages. Ports run at the NOC link
// bandwidth; an HBM channel gets its cube's bandwidth divided by the channel count.
inline constexpr const char* link_bandwidth_field(LinkKind k) {
  switch (k) {
    case LinkKind::noc:
    case LinkKind::inject:
    case LinkKind::eject:
      return "system.cube.noc.link_bandwidth_GBps";
    case LinkKind::ucie:
      return "system.ucie.bandwidth_GBps";
    case LinkKind::inter_sip:
      return "system.inter_sip.bandwidth_GBps";
    case LinkKind::hbm_channel:
      return "system.cube.hbm.bandwidth_GBps";
    case LinkKind::cache:
      return "system.cube.cache.bandwidth_GBps";
  }
  return "?";
}

// What a packet's hop reads and writes comes first, in one cache line: the link's own
// fields, and those of it that a route's walk reads on its way to it (latency, far end).
struct alignas(64) Link {
  emu::Bandwidth bandwidth = emu::Bandwidth::from_bytes_per_s(1);
  emu::Tick full_packet_time = 0;  // serialisation of one full packet, computed once
  // Head latency across the link, to the end of the pipeline of the router it enters, if any
  // (Topology::router_delay; 0 for an HBM channel, whose routes set theirs).
  emu::Tick latency = 0;

  // State and statistics.
  emu::Tick free_at = 0;  // when the tail of the last packet has left
  emu::Tick busy = 0;     // total time occupied
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  LinkKind kind = LinkKind::noc;

  // The two ends (nodes, cubes, SIPs or PE / channel index; a mesh link's `to` is where a
  // route's walk goes on from) and, for naming, the global cube (or SIP for inter_sip), see
  // Topology::link_name.
  std::uint32_t to = 0;
  std::uint32_t from = 0;
  std::uint32_t owner = 0;
  std::uint32_t connection = 0;  // UCIe / inter-SIP: which of the parallel links
  // Time packets waited at its input for room beyond it (credits), summed over packets.
  emu::Tick credit_wait = 0;
};

}  // namespace cubesim::components
