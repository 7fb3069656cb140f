#pragma once
// The input buffers at the far end of the links, for the packet model's credit flow control.
//
// Contract: a link whose far end is a router input port (a mesh link, a PE's injection port, an
// HBM controller's port into its router), a UCIe or an inter-SIP port has a buffer there when
// its section of the spec bounds it (BufferConfig); ejection ports and HBM channels written to
// end in a sink that always accepts. A buffer is split into virtual channels of vc_bytes each;
// a packet takes a channel of its class (VcPlan) only when the channel has room for all of it
// (virtual cut-through), and holds those bytes until its tail has left the buffer onto the next
// link plus the credit latency. Packets leave a channel in the order they entered it (a FIFO:
// one that cannot move blocks those behind it, head-of-line).
//
// Each channel keeps its occupants in entry order. An occupant's release time is unknown until
// its packet is granted the next link; then it is that link's end of serialisation plus the
// credit latency. So the room a channel will have at a time t is known up to the first occupant
// still waiting, and releases are applied lazily, when a later request looks at the channel.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "components/network/topology.hpp"
#include "components/network/virtual_channels.hpp"

namespace cubesim::components {

class InputBuffers {
 public:
  static constexpr Tick kUnknown = emu::kTickMax;

  struct Occupant {
    std::uint64_t bytes = 0;
    Tick release = kUnknown;  // when its credit is back at the sender
    Occupant* next = nullptr;
    void* packet = nullptr;  // the packet holding it (the fabric's)
  };
  struct Channel {
    Occupant* head = nullptr;  // oldest occupant not yet released
    Occupant* tail = nullptr;
    Occupant* waiting = nullptr;  // first occupant whose packet has not been granted on
    std::uint64_t used = 0;       // bytes of the occupants from head on
    Tick clear_at = 0;            // when the last packet granted on has left the buffer
  };

  explicit InputBuffers(const Topology& topology);
  InputBuffers(const InputBuffers&) = delete;
  InputBuffers& operator=(const InputBuffers&) = delete;

  // Whether any link has a bounded buffer (else the fabric runs without credits).
  bool any() const { return any_; }
  // Whether the far end of `id` has a bounded buffer.
  bool bounded(LinkId id) const { return first_[id] != kNone; }
  const VcPlan& plan() const { return plan_; }

  // The channel a packet that has crossed `crossed` UCIe and inter-SIP links (counting `id`)
  // takes beyond `id` at time `at`, or kNone: the channel of its class with room soonest.
  // `ready` gets the time the chosen channel has room (>= at), or, when none is known yet,
  // kUnknown with kNone returned.
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t choose(LinkId id, std::uint32_t crossed, std::uint64_t bytes, Tick at, Tick* ready);
  // The packet enters channel `ch` (from choose) with `bytes`; its occupant is returned.
  Occupant* enter(std::uint32_t ch, std::uint64_t bytes, void* packet);
  // The packet holding `o` in channel `ch` was granted the next link: its tail leaves at
  // `leaves` and the credit is back at `leaves + credit latency`. Returns the next occupant,
  // now first in line (nullptr if none).
  Occupant* leave(LinkId id, std::uint32_t ch, Occupant* o, Tick leaves);
  Channel& channel(std::uint32_t ch) { return channels_[ch]; }
  Tick credit_latency(LinkId id) const { return credit_latency_[id]; }
  // The bytes beyond `id` one class of packets can hold (its channels' share of the buffer),
  // for the flow model; kUnbounded for a link without a bounded buffer.
  static constexpr std::uint64_t kUnbounded = ~std::uint64_t{0};
  std::uint64_t class_bytes(LinkId id) const {
    return bounded(id) ? capacity_[id] * class_channels(id) : kUnbounded;
  }
  // The channels of one class beyond `id` (the fewest any class has; 0 if unbounded).
  std::uint32_t class_channels(LinkId id) const {
    if (!bounded(id)) return 0;
    return vcs_[id] / plan_.classes(static_cast<LinkKind>(kind_[id]));
  }
  // Empties every buffer (a run that stopped early).
  void clear();

 private:
  // Room for `bytes` in the channel at time `at` or later: the time, or kUnknown.
  Tick room_at(Channel& c, std::uint64_t capacity, std::uint64_t bytes, Tick at);

  VcPlan plan_;
  bool any_ = false;
  std::vector<std::uint32_t> first_;     // per link: its first channel, kNone when unbounded
  std::vector<std::uint16_t> vcs_;       // per link: channels
  std::vector<std::uint8_t> kind_;       // per link: LinkKind, for the class of a packet
  std::vector<std::uint64_t> capacity_;  // per link: bytes per channel
  std::vector<Tick> credit_latency_;     // per link
  std::vector<Channel> channels_;
  std::deque<Occupant> store_;
  Occupant* free_ = nullptr;
};

}  // namespace cubesim::components
