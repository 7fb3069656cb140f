#pragma once
// Moves bytes between PEs and memory over the links of a Topology, in simulated time.
//
// A transfer is cut into packets at packet_bytes boundaries of its memory address (and at HBM
// channel and interleave granules, so each packet has one source and one destination). Each PE
// has one DMA engine, which keeps at most dma.max_outstanding_packets packets in flight over
// all its transfers; when one is delivered the next leaves, taken round-robin from the PE's
// transfers that still have packets to send (so concurrent transfers share the engine fairly).
//
// Packets are virtual cut-through: the head of a packet moves to the next link after the hop
// latency and may start there while the tail is still behind it; a link carries one packet at a
// time, so packets that meet on a link queue in order of arrival (ties: event order). On hop i:
//   start_i = max(head arrival, link free)       end_i = max(start_i + bytes / bw_i, end_{i-1} +
//   lat_{i-1})
// and the packet is delivered at end_last + lat_last. With no other traffic this gives
//   sum of hop latencies + max over hops of bytes / bw,
// the "path latency + serialisation at the narrowest resource" of the design, with unbounded
// buffers. When the spec bounds them (InputBuffers), a packet also needs room for all of it in
// a channel of its class beyond the link (credit flow control, virtual cut-through): it waits
// in place until a credit comes back, holding its own buffer, so congestion spreads backwards;
// and it leaves its channel in order (head-of-line). docs/hardware-model.md explains both.
//
// Each packet-hop is one event, in (time, insertion) order, so a run is deterministic.
//
// NetworkModel::flow (opt-in, for what-if studies of large systems) moves a transfer as one
// flow instead of packets: the bytes it puts on every link are summed (interleaved address
// ranges are summed per HBM channel first, so a long transfer costs one route per controller
// and cube it touches, not one per packet), each link
// is reserved first-come-first-served for the flow's bytes starting when its head can reach
// it, and the transfer completes when its last link has drained plus the remaining latency:
//   start_l = max(t0 + lead_l, link free)   end_l = start_l + bytes_l / bw_l
//   done    = max over links of (end_l + tail_l), and no earlier than the DMA window allows
// (lead_l / tail_l: the head latency before / from link l on the routes that use it; t0: when
// the PE's DMA engine takes the transfer, after its earlier flows' share of the window).
// Uncontended, this is the packet model's "path latency + serialisation at the narrowest resource";
// under contention flows queue whole instead of interleaving packets. With bounded buffers a
// link whose buffer does not cover its credit loop carries the flow at the loop's rate, and a
// flow that backs up into a single-channel class holds the links it backs up into
// (hold_for_back_pressure). One event per transfer. docs/hardware-model.md compares.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/memory/divisor.hpp"
#include "components/network/input_buffers.hpp"
#include "components/network/link_stats.hpp"
#include "components/network/topology.hpp"
#include "emu/scheduler.hpp"
#include "emu/trace.hpp"

namespace cubesim::components {

enum class NetworkModel : std::uint8_t { packet, flow };

// Which link slices a trace gets (docs/cli.md "Output files and traces"). all: one slice per
// uninterrupted busy interval of a link. busy: one slice per busy period, which idle gaps
// shorter than a given gap do not end; its args say how busy the period was. none: no links.
enum class LinkTrace : std::uint8_t { none, busy, all };
// "none", "busy" or "all"; std::invalid_argument naming the valid ones otherwise.
LinkTrace parse_link_trace(const std::string& name);
const char* network_model_name(NetworkModel m);
// "packet" or "flow"; std::invalid_argument naming the valid ones otherwise.
NetworkModel parse_network_model(const std::string& name);

class Fabric {
 public:
  using Done = std::function<void()>;

  Fabric(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map,
         NetworkModel model = NetworkModel::packet);
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // `done` runs (as a simulation callback) when the last byte has arrived. PEs are global
  // indices (global_cube * pes_per_cube + PE within the cube). Address ranges are checked
  // first (AddressError). A transfer of zero bytes completes at once.
  void read(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  void write(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  void send(std::uint32_t src_pe, std::uint32_t dst_pe, std::uint64_t bytes, Done done);

  // Link slices go to `trace` (one track per link that carries traffic), as `mode` says;
  // `busy_gap` is the longest idle gap inside a busy period. flush_trace() writes the slices
  // still open.
  void set_trace(emu::TraceWriter* trace, LinkTrace mode = LinkTrace::all, emu::Tick busy_gap = 0);
  void flush_trace();
  // While `id` is not 0, the transfers issued carry trace flow `id`: the first time one of them
  // occupies a link, it adds a step of the flow on that link's slice.
  void set_trace_flow(std::uint64_t id) { trace_flow_ = id; }

  // Zeroes the link and packet statistics (a new launch measures from here).
  void reset_stats();
  // Forgets every transfer in flight or queued and frees every link and DMA engine, as on a new
  // fabric. For a run that stopped early, once the scheduler has dropped the events those
  // transfers were waiting for: their callbacks are destroyed without being called.
  void abandon_in_flight();

  NetworkModel model() const { return model_; }
  Topology& topology() { return topology_; }
  const Topology& topology() const { return topology_; }
  // In the flow model: packets the transfers would have been cut into, and link reservations.
  std::uint64_t packets() const { return packets_; }
  std::uint64_t packet_hops() const { return packet_hops_; }
  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t in_flight_transfers() const { return live_transfers_; }

  // Bytes carried by each kind of link, summed over links (bytes x links crossed).
  std::uint64_t link_bytes(LinkKind kind) const;
  // The links' statistics (link_stats.hpp) and the transfer and packet counts above,
  // utilisation measured over `elapsed`.
  LinkStats link_stats(emu::Tick elapsed) const;

 private:
  enum class Kind : std::uint8_t { read, write, send };
  struct Transfer {
    Kind kind;
    std::uint32_t pe;
    std::uint32_t peer;  // send: destination PE
    std::uint64_t addr;
    std::uint64_t bytes;
    std::uint64_t issued = 0;  // bytes handed to packets so far
    std::uint64_t delivered = 0;
    std::uint32_t in_flight = 0;
    Done done;
    Transfer* next_free = nullptr;
    std::uint64_t trace_flow = 0;
    std::vector<LinkId> traced_links;  // links its flow has a step on
  };
  // What a route is cached by: a send's peer PE, or a read's or write's cube and channel. Two
  // words, so no system size can make two routes meet in one key.
  struct RouteKey {
    std::uint64_t who = ~std::uint64_t{0};    // kind << 32 | PE
    std::uint64_t where = ~std::uint64_t{0};  // peer PE, or global cube << 32 | channel
    friend bool operator==(const RouteKey&, const RouteKey&) = default;
  };
  struct RouteKeyHash {
    std::size_t operator()(const RouteKey& k) const noexcept {
      // splitmix64's finaliser over both words: keys differ in few, low bits
      std::uint64_t x = k.who * 0x9e3779b97f4a7c15ULL ^ k.where;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      return static_cast<std::size_t>(x ^ (x >> 31));
    }
  };

  struct Dma {  // one per PE
    std::uint32_t in_flight = 0;
    std::deque<Transfer*> ready;  // transfers with packets left to send, round-robin
    // The PE's recent routes, direct-mapped by route key (made on first use): the packets of
    // one long transfer hop between cubes and channels, and small transfers repeat routes;
    // either way most skip the hash lookup in routes_ (a division and a cache miss).
    struct RouteSlot {
      RouteKey key;
      const Route* route = nullptr;
    };
    RouteSlot last;  // checked first: small transfers repeat one route
    std::vector<RouteSlot> routes;
    emu::Tick flow_free_at = 0;  // flow model: when the engine's window is free again
  };
  // Flow model: what a transfer puts on a link.
  struct LinkLoad {
    LinkId link;
    std::uint64_t bytes;
    emu::Tick lead;  // head latency before the link (shortest over the routes using it)
    emu::Tick tail;  // latency from the link's input to delivery (longest)
  };
  // Flow model, reads of long ranges: cached pieces of routes (see read_group).
  struct Segment {
    std::vector<LinkId> links;
    std::vector<emu::Tick> latency;
    emu::Tick total = 0;
    std::int32_t leaf = -1;  // a prefix: its first link's node in its destination's PrefixForest
    // A prefix: what its suffixes are keyed by, the link entering the destination cube (or,
    // within one cube, links().size() + cube * nodes + source node).
    std::uint64_t entry = 0;
  };
  // Flow model, reads of long ranges: every prefix toward one destination cube, merged. Routes
  // are deterministic, so from any link the way on to the cube is fixed and the prefixes form a
  // forest whose roots are the links entering the cube (parents before children in the arrays).
  // A read from many (cube, controller) groups adds each group's bytes at its first link and
  // pushes the sums toward the roots once, instead of adding every prefix link by link: a
  // link's lead is then the earliest group's arrival at the cube minus the link's remaining
  // latency, and its tail that remaining latency plus the suffix's, as for each group alone.
  struct PrefixForest {
    std::vector<LinkId> link;
    std::vector<std::int32_t> parent;  // -1 for a root
    std::vector<std::int32_t> root;
    std::vector<emu::Tick> rem;  // latency from the link's input to the cube's entry
    std::unordered_map<LinkId, std::int32_t> index;
    bool valid = true;  // false if two prefixes disagreed on a link's way on (never, today)
    // The transfer being summed: bytes and earliest arrival per node (zero / kTickMax between
    // transfers), the suffix at each root, the nodes given bytes, their prefixes' total length.
    std::vector<std::uint64_t> bytes;
    std::vector<emu::Tick> arrival;
    std::vector<const Segment*> suffix;
    std::vector<std::int32_t> touched;
    std::size_t links_added = 0;
  };
  struct Tail {  // a suffix and the bytes of the groups that end with it
    const Segment* suffix;
    std::uint64_t bytes;
    emu::Tick lead;
  };
  // Flow model, long ranges: the bytes a range puts on each HBM channel, grouped by the
  // controller node the channels sit behind. It depends on the range only, so the many PEs
  // that read one block (a broadcast operand) cut it into pieces once.
  struct ChannelGroup {
    std::uint32_t cube, node, channel;  // `channel`: the group's lowest
    std::uint32_t begin, end;           // its channels in RangeLayout::links / bytes
    std::uint64_t bytes;
  };
  struct RangeLayout {
    std::vector<LinkId> links;  // channel links
    std::vector<std::uint64_t> bytes;
    std::vector<ChannelGroup> groups;
  };
  struct RangeKey {
    std::uint64_t addr, bytes;
    bool operator==(const RangeKey&) const = default;
  };
  struct RangeKeyHash {
    std::size_t operator()(const RangeKey& k) const {
      return std::hash<std::uint64_t>{}(k.addr * 0x9E3779B97F4A7C15ULL ^ k.bytes);
    }
  };
  struct ReadGroup {  // what a read from one (cube, controller) to one PE needs
    const Segment* prefix = nullptr;
    const Segment* suffix = nullptr;
    // Copied from the pieces, so that a long read's ~10^2 groups do not each chase both
    // pointers (scattered hash nodes) when the prefix is in a forest.
    emu::Tick pre = 0;       // the request's way there and the HBM access
    emu::Tick arrival = 0;   // pre + the prefix: the data reaches the destination cube's entry
    emu::Tick total = 0;     // arrival + the suffix: the data reaches the PE
    std::int32_t leaf = -1;  // the prefix's
    std::uint32_t prefix_hops = 0;
  };
  struct Packet {
    Transfer* transfer;
    const Route* route;
    std::uint32_t hop;
    std::uint32_t bytes;
    emu::Tick tail;  // when the tail is available at the current hop's input
    Packet* next_free = nullptr;
    // With credits (InputBuffers): the bytes it holds in the buffer before hop `hop` (none at
    // its source or beyond an unbounded link), the UCIe and inter-SIP links crossed (its class),
    // whether its head waits behind another packet of its channel, and the next packet waiting
    // for the same link.
    InputBuffers::Occupant* held = nullptr;
    LinkId held_link = 0;
    std::uint32_t held_channel = 0;
    std::uint32_t crossed = 0;
    bool in_line = false;
    Packet* next_waiting = nullptr;
    emu::Tick waiting_since = emu::kTickMax;  // when it began to wait for room, if it waits
  };
  // With credits: the packets waiting for room beyond a link, in the order they came.
  struct Waiters {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    emu::Tick wake_at = emu::kTickMax;  // the wake-up scheduled, if any
  };

  void begin(Kind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
             std::uint64_t bytes, Done done);
  void start(Transfer& t);
  void issue_packet(Transfer& t);
  void pump(std::uint32_t pe);  // send packets while the PE's DMA has room
  void advance(Packet& p);      // the head reached hop p.hop's input at now()
  // With credits, instead of advance: the head reached hop p.hop's input at now().
  void arrive(Packet& p);
  void request(Packet& p);  // p is first in line for hop p.hop: granted now or waits
  void request_now(Packet& p);
  // Grants p its link at the soonest time there is room beyond it, or says when to try again
  // (InputBuffers::kUnknown: when a packet in the buffer beyond moves on).
  bool try_grant(Packet& p, emu::Tick* retry);
  void grant(Packet& p, emu::Tick start, std::uint32_t channel);
  void schedule_wake(LinkId id, emu::Tick at);
  void wake(LinkId id);  // the packets waiting for `id` try again
  // p crosses hop p.hop, link `id`, from `start`: the link is busy until the returned end of
  // its serialisation (no earlier than p's tail arrives), counted in the link's statistics.
  emu::Tick occupy(Packet& p, LinkId id, emu::Tick start);
  void delivered(Packet& p);
  const Route& route_for(Transfer& t, std::uint64_t addr, std::uint32_t* bytes);
  const Route& cached_route(Kind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                            std::uint32_t channel);
  static RouteKey route_key(Kind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                            std::uint32_t channel);
  // Flow model.
  void begin_flow(Kind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
                  std::uint64_t bytes, Done done);
  void add_load(LinkId id, std::uint64_t bytes, emu::Tick lead, emu::Tick tail);
  // With bounded buffers: a link's time for the flow's bytes when its credit loop is longer
  // than the buffer beyond it covers, and the links the flow backs up into stay held.
  emu::Tick credit_limited(Kind kind, LinkId id, std::uint64_t bytes, emu::Tick ser) const;
  void hold_for_back_pressure(Kind kind, std::uint64_t bytes, emu::Tick t0, emu::Tick done_at,
                              emu::Tick latency);
  // Adds a route's links (all but hop `skip`) carrying `bytes`.
  void add_route(const Route& r, std::uint64_t bytes, std::size_t skip = ~std::size_t{0});
  void add_pieces(Kind kind, std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes);
  const RangeLayout& range_layout(std::uint64_t addr, std::uint64_t bytes);
  // Adds a group's channel links with their bytes.
  void add_channels(const RangeLayout& layout, const ChannelGroup& group, emu::Tick lead,
                    emu::Tick tail);
  void add_read_group(std::uint32_t pe, const RangeLayout& layout, const ChannelGroup& group);
  void add_read_tails(std::uint32_t pe);
  void add_tail(const Segment* suffix, std::uint64_t bytes, emu::Tick lead);
  void merge_prefix(std::uint32_t dst_cube, Segment& prefix);
  void add_forest(PrefixForest& f);
  const ReadGroup& read_group(std::uint32_t pe, std::uint32_t cube, std::uint32_t node,
                              std::uint32_t channel);
  // Simulated time would pass emu::kTickMax: emu::TimeOverflow naming the link or PE, the spec
  // field behind it and what would fix it. A run cannot go on past the end of time.
  [[noreturn]] void busy_overflow(LinkId id, std::uint64_t bytes, emu::Tick from) const;
  [[noreturn]] void arrival_overflow(LinkId id, emu::Tick from, emu::Tick latency) const;
  [[noreturn]] void window_overflow(std::uint32_t pe, std::uint64_t packets, emu::Tick from,
                                    emu::Tick round_trip) const;
  [[noreturn]] void request_overflow(std::uint32_t pe, emu::Tick from, emu::Tick delay) const;
  // Flow model: the link's serialisation of `bytes`, which may pass the end of time on its own.
  emu::Tick flow_serialisation(LinkId id, std::uint64_t bytes) const;
  // A link's slice being built for the trace.
  struct LinkTraceSlice {
    emu::Tick start = 0, end = 0, busy = 0;
    std::uint64_t bytes = 0;
    bool has_track = false;
    emu::TraceWriter::Track track{};
  };
  void trace_busy(LinkId id, emu::Tick start, emu::Tick end, std::uint64_t bytes, Transfer& t);
  emu::TraceWriter::Track link_track(LinkId id);
  void write_link_slice(LinkId id);
  Transfer* new_transfer();
  void complete(Transfer& t);  // the last byte is delivered: recycle it, call its Done
  Packet* new_packet();

  NetworkModel model_;
  emu::Scheduler& sched_;
  Topology& topology_;
  const AddressMap& map_;
  std::vector<Link>& links_;
  std::uint32_t packet_bytes_;
  Divisor packets_of_;  // packet_bytes_, divided by for every link a flow crosses
  std::uint32_t window_;
  InputBuffers buffers_;
  bool credits_;                  // the packet model with bounded buffers
  std::vector<Waiters> waiters_;  // per link, with credits
  std::vector<Packet*> pending_;  // requests being taken in turn (request())
  std::unordered_map<RouteKey, Route, RouteKeyHash> routes_;
  std::vector<Dma> dma_;
  std::deque<Transfer> transfer_store_;
  std::deque<Packet> packet_store_;
  Transfer* free_transfers_ = nullptr;
  Packet* free_packets_ = nullptr;
  emu::TraceWriter* trace_ = nullptr;
  LinkTrace trace_links_ = LinkTrace::all;
  emu::Tick trace_gap_ = 0;
  std::vector<LinkTraceSlice> link_trace_;  // per link, while tracing
  std::uint64_t trace_flow_ = 0;
  // Flow model: the loads being summed (slot_ maps a link to its entry, kNoSlot when none),
  // and, while a layout is built, a long range's bytes per (cube, channel) with the entries
  // in use.
  std::vector<LinkLoad> loads_;
  std::vector<std::uint32_t> slot_;
  std::vector<std::uint64_t> channel_bytes_;
  std::vector<std::size_t> touched_;
  std::unordered_map<RangeKey, RangeLayout, RangeKeyHash> layouts_;
  std::size_t layout_entries_ = 0;
  std::unordered_map<std::uint64_t, Segment> prefixes_, suffixes_;
  std::vector<Tail> tails_;
  // Per PE, made on its first long read: [cube * controllers + controller]. Every PE of a large
  // system reading from every cube would need PEs x cubes x controllers slots, so past a budget
  // the slots are dropped and made again as needed (they are a cache of routes).
  std::vector<std::unique_ptr<ReadGroup[]>> read_groups_;
  std::size_t read_group_slots_ = 0;   // made since the last drop
  std::vector<PrefixForest> forests_;  // per destination cube
  std::uint64_t packets_ = 0, packet_hops_ = 0, transfers_ = 0, live_transfers_ = 0;
};

}  // namespace cubesim::components
