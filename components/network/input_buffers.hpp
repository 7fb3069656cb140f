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
// latency, so non-decreasing in entry order), then those still waiting. So the room a channel
// will have at a time t is known up to the first occupant still waiting, and releases are
// applied lazily, when a later request looks at the channel. The (release, bytes) of the first
// granted occupants are kept in the channel record itself, the rest in a spill queue: releasing
// them reads no record but the channel's. The occupants still waiting are their packets (Place),
// linked in entry order; a packet waits in at most one channel at a time.

#include <array>
#include <cstdint>
#include <deque>
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
    std::uint32_t granted = 0;    // granted occupants not yet released (inline and spilled)
    std::uint32_t spill = kNone;  // the spill queue of those beyond kInline, if any
    Place* waiting = nullptr;     // the first occupant whose packet has not been granted on
    Place* last = nullptr;        // the last one (when `waiting` is not null)
    bool empty() const { return granted == 0 && waiting == nullptr; }
  };

  explicit InputBuffers(const Topology& topology);
  InputBuffers(const InputBuffers&) = delete;
  InputBuffers& operator=(const InputBuffers&) = delete;

  // Whether any link has a bounded buffer (else the packet model runs without credits).
  bool any() const { return any_; }
  // Whether the far end of `id` has a bounded buffer.
  bool bounded(LinkId id) const { return !ports_.empty() && ports_[id].first != kNone; }
  const VcPlan& plan() const { return plan_; }

  // The channel a packet that has crossed `crossed` UCIe and inter-SIP links (counting `id`)
  // takes beyond `id` at time `at`: of its class's channels with room then, the emptiest (the
  // lowest on a tie), so that packets spread over the channels and one that waits holds up as
  // few others as can be. A channel with no occupant left (before releasing what is due) is
  // taken at once. kNone when none has room; `ready` then gets the time one will (kUnknown when
  // that is not known yet), else `at`.
  std::uint32_t choose(LinkId id, std::uint32_t crossed, std::uint64_t bytes, Tick at,
                       Tick* ready) {
    const Port& port = ports_[id];
    const VcRange r = ranges_[port.kind][plan_.class_index(port.link_kind, crossed)];
    std::uint32_t best = kNone;
    Tick best_at = kUnknown;
    std::uint64_t best_used = 0;
    for (std::uint32_t ch = port.first + r.first; ch < port.first + r.last; ++ch) {
      Channel& c = channels_[ch];
      if (c.empty()) {
        *ready = at;
        return ch;
      }
      const Tick t = room_at(c, port.capacity, bytes, at);
      if (t < best_at || (t == at && c.used < best_used)) {
        best_at = t;
        best = ch;
        best_used = c.used;
      }
    }
    *ready = best_at;
    return best_at == at ? best : kNone;
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
  // Whether the packet at `place` in channel `ch` is first in line there.
  bool first_in_line(std::uint32_t ch, const Place* place) const {
    return channels_[ch].waiting == place;
  }
  // When the packet ahead in channel `ch` has left the buffer.
  Tick clear_at(std::uint32_t ch) const { return channels_[ch].clear_at; }
  // The packet at `place`, with `bytes`, first in line in channel `ch` beyond `id`, was granted
  // the next link: its tail leaves at `leaves` and the credit is back at `leaves + credit
  // latency` (returned). `*next` gets the next place waiting, now first in line (or nullptr).
  Tick leave(LinkId id, std::uint32_t ch, const Place* place, std::uint32_t bytes, Tick leaves,
             Place** next) {
    Channel& c = channels_[ch];
    const Tick release = emu::checked_add(leaves, ports_[id].credit_latency, "credit return");
    if (c.granted < kInline) {
      c.release[c.granted] = release;
      c.bytes[c.granted] = bytes;
    } else {
      spill_push(c, release, bytes);
    }
    ++c.granted;
    c.clear_at = leaves;
    c.waiting = place->next;
    *next = c.waiting;
    return release;
  }
  Tick credit_latency(LinkId id) const { return ports_[id].credit_latency; }
  // The bytes beyond `id` one class of packets can hold (its channels' share of the buffer),
  // for the flow model; kUnbounded for a link without a bounded buffer.
  std::uint64_t class_bytes(LinkId id) const {
    return bounded(id) ? ports_[id].capacity * class_channels(id) : kUnbounded;
  }
  // The channels of one class beyond `id` (the fewest any class has; 0 if unbounded).
  std::uint32_t class_channels(LinkId id) const {
    return bounded(id) ? ports_[id].vcs / plan_.classes(ports_[id].link_kind) : 0;
  }
  // Empties every buffer (a run that stopped early).
  void clear();

 private:
  // The buffer beyond one link.
  struct Port {
    std::uint32_t first = kNone;  // its first channel; kNone when unbounded (or a sink)
    std::uint16_t vcs = 0;
    std::uint8_t kind = 0;  // which of the three buffer configurations: ranges_[kind]
    LinkKind link_kind = LinkKind::noc;
    std::uint64_t capacity = 0;  // bytes per channel
    Tick credit_latency = 0;
  };
  struct Granted {
    Tick release;
    std::uint32_t bytes;
  };

  // Room for `bytes` in the channel at time `at` or later: the time, or kUnknown. Requests on
  // a link come in time order, so what is released by `at` stays released.
  Tick room_at(Channel& c, std::uint64_t capacity, std::uint64_t bytes, Tick at) {
    while (c.granted != 0 && c.release[0] <= at) release_first(c);
    std::uint64_t room = capacity - c.used;
    if (room >= bytes) return at;
    const std::uint32_t inline_count = c.granted < kInline ? c.granted : kInline;
    for (std::uint32_t i = 0; i < inline_count; ++i) {
      room += c.bytes[i];
      if (room >= bytes) return c.release[i];
    }
    if (c.spill != kNone) {
      for (const Granted& g : spills_[c.spill]) {
        room += g.bytes;
        if (room >= bytes) return g.release;
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
    if (c.spill != kNone) spill_pop(c);
  }
  // The queues of granted occupants beyond a channel's first kInline, for the channels that
  // have more (small packets): spill_push appends, spill_pop moves the oldest into the record.
  void spill_push(Channel& c, Tick release, std::uint32_t bytes);
  void spill_pop(Channel& c);

  VcPlan plan_;
  bool any_ = false;
  std::vector<Port> ports_;  // per link (empty when no buffer is bounded)
  // Per buffer configuration (router, UCIe, inter-SIP): each class index's channels.
  std::array<std::vector<VcRange>, 3> ranges_;
  std::vector<Channel> channels_;
  std::vector<std::deque<Granted>> spills_;
  std::vector<std::uint32_t> free_spills_;  // spill queues not in use
};

}  // namespace cubesim::components
