#pragma once
// The flow model of a Network (network.hpp), for what-if studies of large systems: a transfer
// moves as one flow instead of packets. The bytes it puts on every link are summed
// (interleaved address ranges are summed per HBM channel first, so a long transfer costs one
// route per controller and cube it touches, not one per packet), each link is reserved for the
// flow's bytes in its first free gap from when the flow's head can reach it (link_calendar.hpp:
// a flow booked later that reaches a link sooner goes before the ones booked ahead), and the
// transfer completes when its last link has drained plus the remaining latency:
//   start_l = the first gap of the link from t0 + lead_l on   end_l = start_l + bytes_l / bw_l
//   done    = max over links of (end_l + tail_l), and no earlier than the DMA window allows
// (lead_l / tail_l: the head latency before / from link l on the routes that use it; t0: when
// the PE's DMA engine takes the transfer, after its earlier flows' share of the window).
// Uncontended, this is the packet model's "path latency + serialisation at the narrowest
// resource"; under contention flows queue whole instead of interleaving packets. With bounded
// buffers a link whose buffer does not cover its credit loop carries the flow at the loop's
// rate (or its router channels' turn, with a pipeline), and a flow that backs up into a
// single-channel class holds the links it backs up into
// (hold_for_back_pressure). One event per transfer. docs/hardware-model.md compares.

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "components/memory/divisor.hpp"
#include "components/network/link_calendar.hpp"
#include "components/network/network.hpp"
#include "components/network/route_cache.hpp"

namespace cubesim::components {

class FlowNetwork final : public Network {
 public:
  FlowNetwork(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map);

 private:
  // What a transfer puts on a link.
  struct LinkLoad {
    LinkId link;
    std::uint64_t bytes;
    emu::Tick lead;     // head latency before the link (shortest over the routes using it)
    emu::Tick tail;     // latency from the link's input to delivery (longest)
    emu::Tick end = 0;  // once booked: when the flow's bytes have left the link
  };
  // Reads of long ranges: cached pieces of routes (see read_group).
  struct Segment {
    std::vector<LinkId> links;
    std::vector<emu::Tick> latency;
    emu::Tick total = 0;
    std::int32_t leaf = -1;  // a prefix: its first link's node in its destination's PrefixForest
    // A prefix: what its suffixes are keyed by, the link entering the destination cube (or,
    // within one cube, links().size() + cube * nodes + source node).
    std::uint64_t entry = 0;
  };
  // Reads of long ranges: every prefix toward one destination cube, merged. Routes
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
  // Long ranges: the bytes a range puts on each HBM channel, grouped by the
  // controller node the channels sit behind. It depends on the range only, so the many PEs
  // that read one block (a broadcast operand) cut it into pieces once.
  struct ChannelGroup {
    std::uint32_t cube, node, channel;  // `channel`: the group's lowest
    std::uint32_t begin, end;           // its channels in RangeLayout::links / bytes
    std::uint64_t bytes;
  };
  struct RangeLayout {
    std::vector<LinkId> links;  // channel links (or their cache slices)
    std::vector<std::uint64_t> bytes;
    std::vector<ChannelGroup> groups;
  };
  struct RangeKey {
    std::uint64_t addr, bytes;
    bool cached = false;
    bool operator==(const RangeKey&) const = default;
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

  void start(Transfer& t) override;
  void forget_in_flight() override;

  void add_load(LinkId id, std::uint64_t bytes, emu::Tick lead, emu::Tick tail);
  // With bounded buffers: a link's time for the flow's bytes when its credit loop is longer
  // than the buffer beyond it covers, or its class's channels there turn round slower than the
  // link serialises (a router pipeline), and the links the flow backs up into stay held.
  emu::Tick credit_limited(TransferKind kind, LinkId id, std::uint64_t bytes, emu::Tick ser) const;
  void hold_for_back_pressure(TransferKind kind, std::uint64_t bytes, emu::Tick t0,
                              emu::Tick done_at, emu::Tick latency);
  // Adds a route's links (all but hop `skip`) carrying `bytes`.
  void add_route(const Route& r, std::uint64_t bytes, std::size_t skip = ~std::size_t{0});
  void add_pieces(TransferKind kind, std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes);
  // cached: the links are the channels' cache slices (a cache hit's way), not the channels.
  const RangeLayout& range_layout(std::uint64_t addr, std::uint64_t bytes, bool cached);
  // Adds a group's channel links with their bytes.
  void add_channels(const RangeLayout& layout, const ChannelGroup& group, emu::Tick lead,
                    emu::Tick tail);
  void add_read_group(std::uint32_t pe, const RangeLayout& layout, const ChannelGroup& group,
                      bool cached);
  void add_read_tails(std::uint32_t pe);
  void add_tail(const Segment* suffix, std::uint64_t bytes, emu::Tick lead);
  void merge_prefix(std::uint32_t dst_cube, Segment& prefix);
  void add_forest(PrefixForest& f);
  const ReadGroup& read_group(std::uint32_t pe, std::uint32_t cube, std::uint32_t node,
                              std::uint32_t channel);
  // The link's serialisation of `bytes`, which may pass the end of time on its own.
  emu::Tick flow_serialisation(LinkId id, std::uint64_t bytes) const;

  Divisor packets_of_;  // packet_bytes_, divided by for every link a flow crosses
  RouteCache routes_;
  std::vector<emu::Tick> free_at_;  // per PE: when its DMA engine's window is free again
  // The loads being summed (slot_ maps a link to its entry, kNoSlot when none),
  // and, while a layout is built, a long range's bytes per (cube, channel) with the entries
  // in use.
  std::vector<LinkLoad> loads_;
  std::vector<std::uint32_t> slot_;
  std::vector<LinkCalendar> busy_;  // per link: when the flows booked on it hold it
  // The banked HBM: a channel serves flows at a long stream's rate, and a read waits its
  // stream's first access (HbmModel::stream_bandwidth, stream_latency).
  bool dram_stream_;
  emu::Bandwidth stream_bandwidth_;
  emu::Tick stream_latency_;
  emu::Tick response_time_;  // a write's response through a PE's port
  std::vector<std::uint64_t> channel_bytes_;
  std::vector<std::size_t> touched_;
  struct CachedLayout {
    RangeKey key{0, 0};  // no range is empty: an unused slot matches none
    RangeLayout layout;
  };
  std::vector<CachedLayout> layouts_;
  std::unordered_map<std::uint64_t, Segment> prefixes_, suffixes_;
  std::vector<Tail> tails_;
  // Per PE, made on its first long read: [cube * controllers + controller]. Every PE of a large
  // system reading from every cube would need PEs x cubes x controllers slots, so past a budget
  // the slots are dropped and made again as needed (they are a cache of routes).
  std::vector<std::unique_ptr<ReadGroup[]>> read_groups_;
  std::size_t read_group_slots_ = 0;   // made since the last drop
  std::vector<PrefixForest> forests_;  // per destination cube
};

}  // namespace cubesim::components
