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
// Each channel keeps its occupants in entry order: first those whose packets have been granted
// the next link (their release time known: that link's end of serialisation plus the credit
// latency), then those still waiting. So the room a channel will have at a time t is known up to
// the first occupant still waiting, and releases are applied lazily, when a later request looks
// at the channel. The (release, bytes) of the first granted occupants are kept in the channel
// record itself, the rest in a spill queue: releasing them reads no record but the channel's.
// The occupants still waiting are their packets (Place), linked in entry order; a packet waits
// in at most one channel at a time.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "components/network/topology.hpp"
#include "components/network/virtual_channels.hpp"

namespace cubesim::components {

class InputBuffers {
 public:
  static constexpr Tick kUnknown = emu::kTickMax;
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::uint64_t kUnbounded = ~std::uint64_t{0};

  // A packet's place in a channel while it waits there to be granted the next link: the packet
  // model's packet record embeds it, and the channel links its waiting places through it.
  struct Place {
    Place* next = nullptr;  // the next place waiting in the same channel
    bool in_line = false;   // its packet has reached its hop behind another one of the channel
  };
  // The granted occupants kept in the channel record; more go to its spill queue.
  static constexpr std::uint32_t kInline = 2;
  struct alignas(64) Channel {
    Tick clear_at = 0;       // when the last packet granted on has left the buffer
    std::uint64_t used = 0;  // bytes of the occupants not yet released
    // The first granted occupants not yet released, oldest first: when each one's credit is
    // back at the sender, and its bytes.
    std::array<Tick, kInline> release{};
    std::array<std::uint32_t, kInline> bytes{};
    std::uint32_t granted = 0;  // granted occupants not yet released (inline and spilled)
    // Waiting occupants whose packets have reached the hop behind another one (in line), so
    // that moving the channel on looks at the next packet only when there is one.
    std::uint32_t in_line = 0;
    Place* waiting = nullptr;  // the first occupant whose packet has not been granted on
    Place* last = nullptr;     // the last one (when `waiting` is not null)
  };

  explicit InputBuffers(const Topology& topology);
  InputBuffers(const InputBuffers&) = delete;
  InputBuffers& operator=(const InputBuffers&) = delete;

  // Whether any link has a bounded buffer (else the packet model runs without credits).
  bool any() const { return any_; }
  // Whether the far end of `id` has a bounded buffer.
  bool bounded(LinkId id) const { return !ports_.empty() && ports_[id].first != kNone; }
  const VcPlan& plan() const { return plan_; }

  // The channel a packet of class `cls` (its class beyond `id`, VcPlan) takes beyond `id` at
  // time `at`: of its class's channels with room then (the credits due by
  // `at` applied), the emptiest, the lowest on a tie, so that packets spread over the channels
  // and one that waits holds up as few others as can be. kNone when none has room; `ready` then
  // gets the time one will (kUnknown when that is not known yet), else `at`.
  std::uint32_t choose(LinkId id, std::uint32_t cls, std::uint64_t bytes, Tick at, Tick* ready) {
    const Port port = ports_[id];
    const VcRange r = groups_[port.groups].range[cls];
    const std::uint64_t capacity = capacity_[port.kind];
    Channel* const first = &channels_[port.first + r.first];
    Channel* const end = first + (r.last - r.first);
    // The releases due are applied on the way; the first channel left empty is the lowest of
    // the emptiest, so the look ends there (under light load, at the class's first channel). A
    // channel with room now beats one with room later whatever their use, so when they will
    // have room is looked for only when none has.
    Channel* best = nullptr;
    for (Channel* c = first; c != end; ++c) {
      while (c->granted != 0 && c->release[0] <= at) release_first(*c);
      if (c->used == 0) {
        *ready = at;
        return index(c);
      }
      if (capacity - c->used >= bytes && (best == nullptr || c->used < best->used)) best = c;
    }
    if (best != nullptr) {
      *ready = at;
      return index(best);
    }
    Tick soonest = kUnknown;
    for (Channel* c = first; c != end; ++c)
      soonest = std::min(soonest, room_later(*c, capacity, bytes));
    *ready = soonest;
    return kNone;
  }
  // The packet waiting at `place` enters channel `ch` (from choose) with `bytes`.
  void enter(std::uint32_t ch, std::uint32_t bytes, Place* place) {
    Channel& c = channels_[ch];
    place->next = nullptr;
    if (c.waiting == nullptr)
      c.waiting = place;
    else
      c.last->next = place;
    c.last = place;
    c.used += bytes;
  }
  // Whether the packet at `place`, whose head has reached its hop, is first in line in channel
  // `ch`; if not, it is in line there until leave() hands it on.
  bool first_in_line(std::uint32_t ch, Place* place) {
    Channel& c = channels_[ch];
    if (c.waiting == place) return true;
    place->in_line = true;
    ++c.in_line;
    return false;
  }
  // When the packet ahead in channel `ch` has left the buffer.
  Tick clear_at(std::uint32_t ch) const { return channels_[ch].clear_at; }
  // The packet at `place`, with `bytes`, first in line in channel `ch` beyond `id`, was granted
  // the next link: its tail leaves at `leaves` and the credit is back at `leaves + credit
  // latency` (returned). `*next` gets the next place waiting, now first in line, when its
  // packet was in line (else nullptr): it goes on now.
  Tick leave(LinkId id, std::uint32_t ch, const Place* place, std::uint32_t bytes, Tick leaves,
             Place** next) {
    Channel& c = channels_[ch];
    const Tick release =
        emu::checked_add(leaves, credit_latency_[ports_[id].kind], "credit return");
    if (c.granted < kInline) {
      c.release[c.granted] = release;
      c.bytes[c.granted] = bytes;
    } else {
      spills_[ch].queue.push_back({release, bytes});
    }
    ++c.granted;
    c.clear_at = leaves;
    c.waiting = place->next;
    *next = nullptr;
    if (c.in_line != 0 && c.waiting->in_line) {
      c.waiting->in_line = false;
      --c.in_line;
      *next = c.waiting;
    }
    return release;
  }
  Tick credit_latency(LinkId id) const { return credit_latency_[ports_[id].kind]; }
  // The bytes beyond `id` one class of packets can hold (its channels' share of the buffer),
  // for the flow model; kUnbounded for a link without a bounded buffer.
  std::uint64_t class_bytes(LinkId id) const {
    return bounded(id) ? capacity_[ports_[id].kind] * class_channels(id) : kUnbounded;
  }
  // The channels of one class beyond `id` (the fewest any class has; 0 if unbounded).
  std::uint32_t class_channels(LinkId id) const {
    return bounded(id) ? vcs_[ports_[id].kind] / groups_[ports_[id].groups].classes : 0;
  }
  // Empties every buffer (a run that stopped early).
  void clear();

 private:
  // The buffer beyond one link; what its configuration fixes is kept per configuration.
  struct Port {
    std::uint32_t first = kNone;  // its first channel; kNone when unbounded (or a sink)
    std::uint16_t kind = 0;       // which of the three buffer configurations
    std::uint16_t groups = 0;     // how its channels are shared among the classes (groups_)
  };
  struct Granted {
    Tick release;
    std::uint32_t bytes;
  };

  std::uint32_t index(const Channel* c) const {
    return static_cast<std::uint32_t>(c - channels_.data());
  }
  // When a channel without room for `bytes` now (the releases due applied) will have it: the
  // release of the granted occupant that makes room, or kUnknown when that is not known yet.
  // Requests on a link come in time order, so what is released by then stays released.
  Tick room_later(const Channel& c, std::uint64_t capacity, std::uint64_t bytes) const {
    std::uint64_t room = capacity - c.used;
    const std::uint32_t inline_count = std::min(c.granted, kInline);
    for (std::uint32_t i = 0; i < inline_count; ++i) {
      room += c.bytes[i];
      if (room >= bytes) return c.release[i];
    }
    if (c.granted > kInline) {
      const Spill& s = spills_[index(&c)];
      for (std::size_t i = s.head; i < s.queue.size(); ++i) {
        room += s.queue[i].bytes;
        if (room >= bytes) return s.queue[i].release;
      }
    }
    return kUnknown;
  }
  // The oldest granted occupant's credit is back: its bytes are free again.
  void release_first(Channel& c) {
    c.used -= c.bytes[0];
    for (std::uint32_t i = 1; i < kInline; ++i) {
      c.release[i - 1] = c.release[i];
      c.bytes[i - 1] = c.bytes[i];
    }
    --c.granted;
    if (c.granted >= kInline) spill_pop(c);
  }
  // Moves the oldest spilled occupant of `c` into its record.
  void spill_pop(Channel& c);

  VcPlan plan_;
  bool any_ = false;
  std::vector<Port> ports_;  // per link (empty when no buffer is bounded)
  // Per buffer kind (router, UCIe, inter-SIP): bytes per channel, credit latency, channels.
  std::array<std::uint64_t, 3> capacity_{};
  std::array<Tick, 3> credit_latency_{};
  std::array<std::uint32_t, 3> vcs_{};
  // The ways the channels of a buffer are shared: for a kind of buffer and the classes it holds
  // (VcPlan::holds), the channels each class takes.
  struct Groups {
    std::uint32_t kind, mask, classes;
    std::vector<VcRange> range;  // per class
  };
  std::vector<Groups> groups_;
  std::vector<Channel> channels_;
  // Per channel: its granted occupants beyond the first kInline, oldest first (from `head`), for
  // the channels that have more (small packets).
  struct Spill {
    std::vector<Granted> queue;
    std::size_t head = 0;
  };
  std::vector<Spill> spills_;
};

}  // namespace cubesim::components
