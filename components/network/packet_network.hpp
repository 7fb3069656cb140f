#pragma once
// The packet model of a Network (network.hpp), the reference: every packet and every hop.
//
// Each PE's DmaEngine keeps at most dma.max_outstanding_packets packets in flight over all its
// transfers. Packets are virtual cut-through: the head of a packet moves to the next link after
// the hop latency and may start there while the tail is still behind it; a link carries one
// packet at a time, so packets that meet on a link queue in order of arrival (ties: event
// order). On hop i:
//   start_i = max(head arrival, link free)
//   end_i   = max(start_i + bytes / bw_i, end_{i-1} + lat_{i-1})
// and the packet is delivered at end_last + lat_last. With no other traffic this gives
//   sum of hop latencies + max over hops of bytes / bw,
// the "path latency + serialisation at the narrowest resource" of the design, with unbounded
// buffers. When the spec bounds them (InputBuffers), a packet also needs room for all of it in
// a channel of its class beyond the link (credit flow control, virtual cut-through): it waits
// in place until a credit comes back, holding its own buffer, so congestion spreads backwards;
// and it leaves its channel in order (head-of-line). docs/hardware-model.md explains both.
//
// A packet walks its route hop by hop (RouteCursor), so what it holds does not grow with the
// route. Each packet-hop is one event, in (time, insertion) order, so a run is deterministic.

#include <cstdint>
#include <deque>
#include <vector>

#include "components/network/dma_engine.hpp"
#include "components/network/network.hpp"

namespace cubesim::components {

class PacketNetwork final : public Network {
 public:
  PacketNetwork(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map);

 private:
  // Two cache lines: what a hop reads first (and Place::next, which also links free packets),
  // then the route.
  struct alignas(64) Packet : InputBuffers::Place {
    Transfer* transfer;
    emu::Tick tail;  // when the tail is available at the current hop's input
    std::uint32_t bytes;
    // With credits (InputBuffers): its virtual-channel class (VcPlan), the
    // channel it holds bytes in before its hop (none at its source or beyond an unbounded
    // link) and the link that buffer is beyond, and when it began to wait for room, if it
    // waits. (Place::in_line: whether its head waits behind another packet of its channel.)
    std::uint32_t vc_class = 0;
    std::uint32_t held_channel = InputBuffers::kNone;
    LinkId held_link = 0;
    emu::Tick waiting_since = emu::kTickMax;
    RouteCursor route;  // the hop it is at, and the way on
  };
  static_assert(sizeof(Packet) == 128, "a packet record is two cache lines");
  // With credits: the packets waiting for room beyond a link, in the order they came. Each
  // entry keeps what a wake-up sorts them by, so that passing over the many that wait on a busy
  // link (a DMA window at an injection port, an HBM channel) reads one array, not each packet.
  struct Waiting {
    Packet* packet;
    std::uint32_t bytes;
    std::uint32_t vc_class;
  };
  struct Waiters {
    std::vector<Waiting> list;
    emu::Tick wake_at = emu::kTickMax;  // the wake-up scheduled, if any
    std::uint32_t classes = 0;          // class_bit of every packet listed (perhaps more bits)
    std::uint32_t partial = 0;          // packets listed smaller than a full packet
  };
  static std::uint32_t class_bit(std::uint32_t vc_class) {
    return vc_class < 32 ? std::uint32_t{1} << vc_class : ~std::uint32_t{0};
  }
  void wait_for(LinkId id, const Waiting& e);

  void start(Transfer& t) override;
  void forget_in_flight() override;
  bool counts_credit_waits() const override { return credits_; }

  void pump(std::uint32_t pe);  // send packets while the PE's DMA has room
  void issue_packet(Transfer& t);
  // The next packet of `t`: its route, bytes and the delay before its first hop (a read's
  // request and the HBM access).
  RouteCursor packet_route(const Transfer& t, std::uint32_t* bytes, emu::Tick* delay) const;
  void advance(Packet& p);  // the head reached its hop's input at now()
  // With credits, instead of advance: the head reached its hop's input at now().
  void arrive(Packet& p);
  // The steps of a hop with credits (request_now, try_grant, grant, occupy) are forced inline
  // in the .cpp: a hop is then one call, not five, with the packet's fields kept in registers
  // across the steps.
  void request(Packet& p);  // p is first in line for its hop: granted now or waits
  void request_now(Packet& p);
  // Grants p its link at the soonest time there is room beyond it, or says when to try again
  // (InputBuffers::kUnknown: when a packet in the buffer beyond moves on).
  bool try_grant(Packet& p, emu::Tick* retry);
  void grant(Packet& p, emu::Tick start, std::uint32_t channel);
  void schedule_wake(LinkId id, emu::Tick at);
  void wake(LinkId id);  // the packets waiting for `id` try again
  // p crosses its hop, link `id`, from `start`: the link is busy until the returned end of
  // its serialisation (no earlier than p's tail arrives), counted in the link's statistics.
  emu::Tick occupy(Packet& p, LinkId id, emu::Tick start);
  // p's hop ends at `end`: after the last hop it is delivered the hop's latency later (false);
  // otherwise it moves to its next hop, where its tail arrives then (true).
  bool move_on(Packet& p, emu::Tick end);
  void delivered(Packet& p);
  Packet* new_packet();

  bool credits_;                  // bounded buffers somewhere
  std::vector<DmaEngine> dma_;    // per PE
  std::vector<Waiters> waiters_;  // per link, with credits
  // Per link, with credits: whether its Waiters list is not empty (read on every grant, so
  // kept apart from the lists).
  std::vector<std::uint8_t> listed_;
  std::vector<Waiting> waking_;   // the list wake() goes through
  std::vector<Packet*> pending_;  // requests being taken in turn (request())
  bool requesting_ = false;       // request() is taking them
  std::deque<Packet> packet_store_;
  Packet* free_packets_ = nullptr;
};

}  // namespace cubesim::components
