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
// Routers (system.cube.noc.router): a link into a router carries a packet's head to the end of
// the router's pipeline (routing, VC and switch allocation; Topology::router_delay), so each
// router crossed adds the pipeline to the path latency. A packet in a bounded router buffer
// crosses the router at the soonest time t with
//   t >= its head ready (arrival + pipeline)
//   t >= when its channel's previous packet left + turnaround (pipeline less one cycle)
//   fewer than `input_speedup` crossings of its input overlap [t, t + bytes / mesh link
//        bandwidth): a port sends flits of other channels in the cycles a slow output or a
//        late tail leaves it idle
//   the output link free at t, and room for it in a channel beyond (credits).
// Under `fcfs` it books a busy output ahead, first come first served, as above. Under
// `round_robin` and `age` it waits instead, and when the output frees, the output goes to one
// of the packets waiting for it (the next input after the last granted; the oldest transfer),
// chosen after every packet ready in that instant has asked; an input whose ready packet lost
// that choice sends nothing for a router cycle (an input-first separable allocator's loss). A
// packet not in a bounded buffer
// (at its source, or beyond an unbounded link) books its link ahead, unless packets of router
// buffers wait for the link: then it waits behind them.
//
// A packet walks its route hop by hop (RouteCursor), so what it holds does not grow with the
// route. Each packet-hop is one event, in (time, insertion) order, so a run is deterministic.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "components/hbm/banked_hbm.hpp"
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
    // A write's response on its way back (delivered() turned the write into it). Then to or
    // from HBM with the banked model: where it lies in its channel (DramChannel), 48 bits.
    // These three sit in the tail padding of Place (the Itanium C++ ABI reuses it).
    bool response = false;
    std::uint16_t dram_hi = 0;
    std::uint32_t dram_lo = 0;
    std::uint64_t dram_addr() const { return std::uint64_t{dram_hi} << 32 | dram_lo; }
    void set_dram_addr(std::uint64_t a) {
      dram_hi = static_cast<std::uint16_t>(a >> 32);
      dram_lo = static_cast<std::uint32_t>(a);
    }
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
  // With credits: the packets waiting for a link (for room beyond it, or, from a router buffer,
  // for the link or their input), in the order they came. Each entry keeps what a wake-up sorts
  // them by, so that passing over the many that wait on a busy link (a DMA window at an
  // injection port, an HBM channel) reads one array, not each packet.
  struct Waiting {
    Packet* packet;
    std::uint32_t bytes;
    std::uint32_t vc_class;  // kNoRoom: it needs no room beyond (the route's last hop)
  };
  // A class no packet has: class_bit gives it every bit, so a wake-up never passes over such a
  // packet for its class having found no room.
  static constexpr std::uint32_t kNoRoom = ~std::uint32_t{0};
  Waiting waiting(Packet& p) const {
    return {&p, p.bytes, p.route.last || !buffers_.bounded(p.route.link) ? kNoRoom : p.vc_class};
  }
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
  // What a packet that was not granted waits for: room beyond the link; the link (a packet of a
  // router buffer under round_robin and age); its channel to turn round or a crossbar port of
  // its input.
  enum class Wait : std::uint8_t { credits, link, input };

  void start(Transfer& t) override;
  void forget_in_flight() override;
  bool counts_credit_waits() const override { return credits_; }

  void pump(std::uint32_t pe);  // send packets while the PE's DMA has room
  void issue_packet(Transfer& t);
  // The next packet of `t`: its route, bytes and the delay before its first hop (a read's
  // request and the HBM access).
  // And, to or from HBM with the banked model, where it lies in its channel.
  RouteCursor packet_route(const Transfer& t, std::uint32_t* bytes, emu::Tick* delay,
                           std::uint64_t* dram_addr) const;
  // p's head reaches its hop's input at `at` (>= now()) out of no router buffer: its first hop,
  // or the first after a controller it leaves (a read's data, a write's response).
  void set_out(Packet& p, emu::Tick at);
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
  bool try_grant(Packet& p, emu::Tick* retry, Wait* why);
  // When a crossing of `time` from `start` through input `input`'s crossbar ports could begin:
  // `start` when fewer than input_speedup crossings overlap it, else when the first of those
  // ends.
  emu::Tick port_free(LinkId input, emu::Tick start, emu::Tick time);
  // Under round_robin and age: p was ready for an output that went to another input in this
  // instant; its input's crossbar port idles for a router cycle.
  void lost_arbitration(const Packet& p);
  void book_port(LinkId input, emu::Tick from, emu::Tick until);
  emu::Tick crossing(std::uint32_t bytes) const {
    return bytes == packet_bytes_ ? crossbar_packet_time_ : crossbar_.transfer_time(bytes);
  }
  // The outputs' allocation policy puts the packets waiting for `id` in the order it grants them.
  void order_waiting(LinkId id, std::vector<Waiting>& list) const;
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
  // A write's data has landed: the packet goes back to its PE as the write's response.
  void respond(Packet& p);
  Packet* new_packet();

  // The banked HBM (HbmModel::scheduled()): a read's request or a write's data reaches its
  // channel's controller now; the controller serves a request when its bus frees (dram_serve).
  // A read's data then leaves the channel as from a source; a write is delivered when written.
  void to_dram(Packet& p);
  void dram_serve(std::uint32_t channel);
  void dram_schedule(std::uint32_t channel);
  std::optional<DramStats> dram_stats() const override;
  void reset_dram_stats() override;

  bool credits_;  // bounded buffers somewhere
  // The routers (system.cube.noc.router): a channel's turnaround, crossbar ports per input, the
  // outputs' policy; per link (an input, when its buffer is bounded), the crossings through its
  // crossbar ports not over yet; per link, the input it was last granted to (round_robin).
  emu::Tick turnaround_;
  std::uint32_t speedup_;
  // A crossbar port moves a packet at the mesh links' rate, whatever the output's: a packet
  // holds its input's port for that long (a full one: crossbar_packet_time_).
  emu::Bandwidth crossbar_;
  emu::Tick crossbar_packet_time_;
  RouterAllocation allocation_;
  emu::Priority wake_priority_;  // after the tick's requests when outputs arbitrate
  emu::Tick cycle_;              // a router cycle (0 without a pipeline)
  LinkId granted_input_ = 0;     // the input of the last crossing granted
  struct Crossing {
    emu::Tick from, until;
  };
  struct Port {
    emu::Tick last_until = 0;    // when the last crossing booked ends
    std::vector<Crossing> busy;  // the crossings booked, some perhaps over
  };
  std::vector<Port> ports_;
  std::vector<LinkId> last_input_;
  // Per link: packets of router buffers listed as waiting for it to free (or, under round_robin
  // and age, for its allocation). A packet that would book the link ahead waits behind them
  // instead, so that they are not passed over for ever.
  std::vector<std::uint32_t> link_waiters_;
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
  // The banked HBM: a controller per channel (cube x channels + channel), the controller of
  // each HBM channel link (kNone for other links), and when each one's next decision is
  // scheduled (kTickMax: none).
  std::vector<DramChannel> dram_;
  std::vector<std::uint32_t> dram_of_link_;
  std::vector<emu::Tick> dram_wake_;
  emu::Tick dram_latency_ = 0;    // the controller's and PHY's share (HbmModel::access_latency)
  std::uint32_t response_bytes_;  // system.cube.noc.response_bytes
};

}  // namespace cubesim::components
