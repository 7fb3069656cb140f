#pragma once
// A transfer in flight: what a PE asked a Network to move, and how far it has got.

#include <cstdint>
#include <functional>
#include <vector>

#include "components/network/link.hpp"

namespace cubesim::components {

// to_switch / from_switch: in-network reduction's ways up to a switch and down from it
// (Topology::start_pe_to_switch); `peer` holds the SwitchLevel, a from_switch's `addr` its
// connection, and its `pe` the PE it goes to (the switch sends it: no PE's DMA window).
// cache_read: a read of lines the cube's cache holds, served by the cache slice of their channel.
// reply: from an HBM controller's router to `pe` (an atomic unit's reply): `addr` holds the
// global cube, `peer` the channel; the controller sends it, so no PE's DMA window.
enum class TransferKind : std::uint8_t {
  read,
  write,
  send,
  to_switch,
  from_switch,
  cache_read,
  reply
};
// Whether a transfer's packets hold slots of its PE's DMA window: not those a switch or a
// memory controller sends to the PE.
inline constexpr bool uses_dma_window(TransferKind k) {
  return k != TransferKind::from_switch && k != TransferKind::reply;
}

struct Transfer {
  using Done = std::function<void()>;
  TransferKind kind = TransferKind::read;
  // A write that completes when its responses are back at the PE (Network::write), not when
  // its data has landed (Network::write_posted).
  bool acknowledged = false;
  std::uint32_t pe = 0;
  std::uint32_t peer = 0;  // send: destination PE
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;
  emu::Tick born = 0;  // when it was asked for: its packets' age, for routers that grant by age
  // Packet model: bytes handed to packets so far, bytes delivered, packets on their way.
  std::uint64_t issued = 0;
  std::uint64_t delivered = 0;
  std::uint32_t in_flight = 0;
  Done done;
  Transfer* next_free = nullptr;
  std::uint64_t trace_flow = 0;      // its trace flow (0: none)
  std::vector<LinkId> traced_links;  // links its flow has a step on
};

}  // namespace cubesim::components
