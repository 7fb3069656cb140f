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

  struct Occupant {
    std::uint64_t bytes = 0;
    Tick release = kUnknown;  // when its credit is back at the sender
    Occupant* next = nullptr;
    void* packet = nullptr;  // the packet holding it (the packet model's)
  };
  struct Channel {
    Occupant* head = nullptr;  // oldest occupant not yet released
    Occupant* tail = nullptr;
    Occupant* waiting = nullptr;   // first occupant whose packet has not been granted on
    std::uint64_t used = 0;        // bytes of the occupants from head on
    Tick clear_at = 0;             // when the last packet granted on has left the buffer
    Tick head_release = kUnknown;  // head->release, kept here: most looks need no more
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
  // few others as can be. kNone when none has room; `ready` then gets the time one will
  // (kUnknown when that is not known yet), else `at`.
  std::uint32_t choose(LinkId id, std::uint32_t crossed, std::uint64_t bytes, Tick at,
                       Tick* ready) {
    const Port& port = ports_[id];
    const VcRange r = ranges_[port.kind][plan_.class_index(port.link_kind, crossed)];
    std::uint32_t best = kNone;
    Tick best_at = kUnknown;
    std::uint64_t best_used = 0;
    for (std::uint32_t ch = port.first + r.first; ch < port.first + r.last; ++ch) {
      Channel& c = channels_[ch];
      if (c.head == nullptr) {  // empty: the emptiest there can be
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
  // The packet enters channel `ch` (from choose) with `bytes`; its occupant is returned.
  Occupant* enter(std::uint32_t ch, std::uint64_t bytes, void* packet) {
    Occupant* o = free_;
    if (o != nullptr)
      free_ = o->next;
    else
      o = &store_.emplace_back();
    *o = Occupant{bytes, kUnknown, nullptr, packet};
    Channel& c = channels_[ch];
    if (c.tail != nullptr) {
      c.tail->next = o;
    } else {
      c.head = o;
      c.head_release = kUnknown;
    }
    c.tail = o;
    if (c.waiting == nullptr) c.waiting = o;
    c.used += bytes;
    return o;
  }
  // The packet holding `o`, first in line in channel `ch` beyond `id`, was granted the next
  // link: its tail leaves at `leaves` and the credit is back at `leaves + credit latency`.
  // Returns the next occupant, now first in line (nullptr if none).
  Occupant* leave(LinkId id, std::uint32_t ch, Occupant* o, Tick leaves) {
    Channel& c = channels_[ch];
    o->release = emu::checked_add(leaves, ports_[id].credit_latency, "credit return");
    if (o == c.head) c.head_release = o->release;
    c.clear_at = leaves;
    c.waiting = o->next;
    return c.waiting;
  }
  Channel& channel(std::uint32_t ch) { return channels_[ch]; }
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

  // Room for `bytes` in the channel at time `at` or later: the time, or kUnknown. Requests on
  // a link come in time order, so what is released by `at` stays released.
  Tick room_at(Channel& c, std::uint64_t capacity, std::uint64_t bytes, Tick at) {
    while (c.head_release <= at) {  // never true of an empty channel's kUnknown
      Occupant* o = c.head;
      c.used -= o->bytes;
      c.head = o->next;
      c.head_release = c.head != nullptr ? c.head->release : kUnknown;
      o->next = free_;
      free_ = o;
    }
    if (c.head == nullptr) c.tail = nullptr;
    std::uint64_t room = capacity - c.used;
    if (room >= bytes) return at;
    for (const Occupant* o = c.head; o != nullptr && o->release != kUnknown; o = o->next) {
      room += o->bytes;
      if (room >= bytes) return o->release;
    }
    return kUnknown;
  }

  VcPlan plan_;
  bool any_ = false;
  std::vector<Port> ports_;  // per link (empty when no buffer is bounded)
  // Per buffer configuration (router, UCIe, inter-SIP): each class index's channels.
  std::array<std::vector<VcRange>, 3> ranges_;
  std::vector<Channel> channels_;
  std::deque<Occupant> store_;
  Occupant* free_ = nullptr;
};

}  // namespace cubesim::components
