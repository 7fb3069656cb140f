#include "components/network/flow_network.hpp"

#include <algorithm>

namespace cubesim::components {

namespace {
constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
// A transfer of at most this many packets uses cached routes piece by piece; a longer one its
// range's cached layout (range_layout), which costs less from 3 pieces on (a 16 KiB operand a
// GEMM engine streams for every product).
constexpr std::uint64_t kFewPieces = 2;
// Range layouts kept, direct-mapped by range: a range read by many PEs in turn (a broadcast
// operand) is laid out once, and a stream of ranges each used once (a collective's rows) costs
// no allocation once the slots have grown to its ranges' size.
constexpr int kLayoutBits = 14;
constexpr std::size_t kLayoutSlots = std::size_t{1} << kLayoutBits;
// Fibonacci hashing: the product's high bits depend on every bit of the range (ranges of one
// buffer differ in their high bits only, which the low bits of a product would lose).
std::size_t layout_slot(std::uint64_t addr, std::uint64_t bytes) {
  return static_cast<std::size_t>(
      ((addr ^ (bytes << 40) ^ (bytes >> 24)) * 0x9E3779B97F4A7C15ULL) >> (64 - kLayoutBits));
}
constexpr std::size_t kReadGroupSlots = std::size_t{1} << 23;  // of ReadGroup: some 400 MB
}  // namespace

FlowNetwork::FlowNetwork(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map)
    : Network(NetworkModel::flow, scheduler, topology, map),
      packets_of_(packet_bytes_),
      routes_(topology),
      free_at_(topology.total_pes(), 0),
      slot_(links_.size(), kNoSlot),
      busy_(links_.size()),
      dram_stream_(topology.hbm().scheduled()),
      stream_bandwidth_(topology.hbm().stream_bandwidth()),
      stream_latency_(topology.hbm().stream_latency()),
      response_time_(topology.config().cube.noc.link_bandwidth.transfer_time(
          topology.config().cube.noc.response_bytes)) {}

void FlowNetwork::forget_in_flight() {
  std::fill(free_at_.begin(), free_at_.end(), 0);
  // A transfer whose booking threw (past the end of time) leaves its loads behind.
  for (const LinkLoad& f : loads_) slot_[f.link] = kNoSlot;
  loads_.clear();
  for (LinkCalendar& c : busy_) c.clear();
}

void FlowNetwork::add_load(LinkId id, std::uint64_t bytes, emu::Tick lead, emu::Tick tail) {
  if (slot_[id] == kNoSlot) {
    slot_[id] = static_cast<std::uint32_t>(loads_.size());
    loads_.push_back({id, bytes, lead, tail});
    return;
  }
  LinkLoad& f = loads_[slot_[id]];
  f.bytes += bytes;
  f.lead = std::min(f.lead, lead);
  f.tail = std::max(f.tail, tail);
}

void FlowNetwork::add_route(const Route& r, std::uint64_t bytes, std::size_t skip) {
  emu::Tick total = r.pre_delay;
  for (const emu::Tick lat : r.latency) total += lat;
  emu::Tick lead = r.pre_delay;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    if (i != skip) add_load(r.links[i], bytes, lead, total - lead);
    lead += r.latency[i];
  }
}

void FlowNetwork::add_pieces(TransferKind kind, std::uint32_t pe, std::uint64_t addr,
                             std::uint64_t bytes) {
  if (bytes <= kFewPieces * packet_bytes_) {  // a few pieces: their routes, cached
    while (bytes > 0) {
      const auto piece = map_.first_piece(addr, bytes, packet_bytes_);
      add_route(routes_.get(kind, pe, 0, piece.loc, map_.channel(piece.loc)), piece.len);
      addr += piece.len;
      bytes -= piece.len;
    }
    return;
  }
  // A long range: its bytes per (cube, channel), grouped by HBM controller (range_layout).
  // Channels behind one controller node share the rest of their route, so one route is
  // followed per (cube, node), and the channel links are added one by one. (Caching every
  // (PE, cube, channel) route instead would take GiBs on a rack-scale spec.)
  const bool cached = kind == TransferKind::cache_read;
  const RangeLayout& layout = range_layout(addr, bytes, cached);
  for (const ChannelGroup& group : layout.groups) {
    if (kind == TransferKind::read || cached) {
      add_read_group(pe, layout, group, cached);
      continue;
    }
    const Route r = topology_.pe_to_memory(pe, group.cube, group.channel);
    const std::size_t hop = r.links.size() - 1;  // the channel, last
    emu::Tick lead = r.pre_delay;
    for (std::size_t h = 0; h < hop; ++h) lead += r.latency[h];
    add_channels(layout, group, lead, r.latency[hop]);
    add_route(r, group.bytes, hop);
  }
  add_read_tails(pe);
}

const FlowNetwork::RangeLayout& FlowNetwork::range_layout(std::uint64_t addr, std::uint64_t bytes,
                                                          bool cached) {
  const RangeKey key{addr, bytes, cached};
  if (layouts_.empty()) layouts_.resize(kLayoutSlots);
  CachedLayout& slot = layouts_[layout_slot(addr, bytes)];
  if (slot.key == key) return slot.layout;
  slot.key = key;
  RangeLayout& layout = slot.layout;
  layout.links.clear();
  layout.bytes.clear();
  layout.groups.clear();
  const std::uint32_t channels = map_.hbm_channels();
  if (channel_bytes_.empty()) channel_bytes_.assign(std::size_t{map_.cubes()} * channels, 0);
  while (bytes > 0) {
    const auto piece = map_.first_piece(addr, bytes, packet_bytes_);
    const std::size_t i = std::size_t{piece.loc.global_cube} * channels + map_.channel(piece.loc);
    if (channel_bytes_[i] == 0) touched_.push_back(i);
    channel_bytes_[i] += piece.len;
    addr += piece.len;
    bytes -= piece.len;
  }
  std::sort(touched_.begin(), touched_.end());
  for (std::size_t first = 0; first < touched_.size();) {
    const auto cube = static_cast<std::uint32_t>(touched_[first] / channels);
    std::size_t end = first;  // the channels of this cube: [first, end)
    while (end < touched_.size() && touched_[end] / channels == cube) ++end;
    // Grouped by controller node, in the order of each node's lowest channel.
    for (std::size_t j = first; j < end; ++j) {
      if (channel_bytes_[touched_[j]] == 0) continue;  // already in its group
      const auto ch = static_cast<std::uint32_t>(touched_[j] % channels);
      const std::uint32_t node = topology_.hbm_node(ch);
      ChannelGroup g{cube, node, ch, static_cast<std::uint32_t>(layout.links.size()), 0, 0};
      for (std::size_t k = j; k < end; ++k) {
        const std::size_t i = touched_[k];
        const auto c = static_cast<std::uint32_t>(i % channels);
        if (channel_bytes_[i] == 0 || topology_.hbm_node(c) != node) continue;
        layout.links.push_back(cached ? topology_.cache_slice(cube, c)
                                      : topology_.hbm_channel(cube, c));
        layout.bytes.push_back(channel_bytes_[i]);
        g.bytes += channel_bytes_[i];
        channel_bytes_[i] = 0;
      }
      g.end = static_cast<std::uint32_t>(layout.links.size());
      layout.groups.push_back(g);
    }
    first = end;
  }
  touched_.clear();
  return layout;
}

void FlowNetwork::add_channels(const RangeLayout& layout, const ChannelGroup& group, emu::Tick lead,
                               emu::Tick tail) {
  // A channel link is crossed by no other part of a transfer and appears once in its layout:
  // no merging (add_load) needed.
  for (std::uint32_t k = group.begin; k < group.end; ++k)
    loads_.push_back({layout.links[k], layout.bytes[k], lead, tail});
}

const FlowNetwork::ReadGroup& FlowNetwork::read_group(std::uint32_t pe, std::uint32_t cube,
                                                      std::uint32_t node, std::uint32_t channel) {
  // One slot per (PE, cube, controller): this runs for every controller of every cube a long
  // read touches.
  const std::size_t controllers = topology_.config().cube.noc.hbm_nodes.size();
  const std::size_t slots = std::size_t{topology_.cubes()} * controllers;
  if (read_groups_.empty()) read_groups_.resize(topology_.total_pes());
  std::unique_ptr<ReadGroup[]>& block = read_groups_[pe];
  if (!block) {
    if (read_group_slots_ + slots > kReadGroupSlots) {
      for (auto& b : read_groups_) b.reset();
      read_group_slots_ = 0;
    }
    block = std::make_unique<ReadGroup[]>(slots);
    read_group_slots_ += slots;
  }
  ReadGroup& g = block[std::size_t{cube} * controllers + channel % controllers];
  if (g.prefix) return g;

  // route_nodes(controller -> PE's node) = prefix (up to the UCIe / inter-SIP link entering the
  // PE's cube) + suffix (that cube's mesh from the entry to the PE): the way between cubes
  // depends on the cubes only, the last mesh leg on the entry link and the PE's node. Pieces
  // are shared: a prefix by every PE of the destination cube, a suffix by every source.
  const std::uint64_t nodes = topology_.pes_per_cube();  // a PE per mesh node
  const std::uint32_t dst_cube = pe / topology_.pes_per_cube();
  const std::uint32_t dst_node = topology_.node_of_pe(pe % topology_.pes_per_cube());
  const std::uint64_t prefix_key =
      (std::uint64_t{cube} * topology_.cubes() + dst_cube) * nodes + node;
  auto prefix = prefixes_.find(prefix_key);
  const Segment* suffix = nullptr;
  if (prefix != prefixes_.end())
    if (const auto it = suffixes_.find(prefix->second.entry * nodes + dst_node);
        it != suffixes_.end())
      suffix = &it->second;
  if (!suffix) {  // a piece not met before: build the route once
    Route r;
    topology_.route_nodes(cube, node, dst_cube, dst_node, r);
    std::size_t split = 0;  // links [0, split) are the prefix
    for (std::size_t i = 0; i < r.links.size(); ++i)
      if (links_[r.links[i]].kind != LinkKind::noc) split = i + 1;
    const auto piece = [&r](std::size_t from, std::size_t to) {
      Segment seg;
      seg.links.assign(r.links.begin() + static_cast<std::ptrdiff_t>(from),
                       r.links.begin() + static_cast<std::ptrdiff_t>(to));
      seg.latency.assign(r.latency.begin() + static_cast<std::ptrdiff_t>(from),
                         r.latency.begin() + static_cast<std::ptrdiff_t>(to));
      for (const emu::Tick t : seg.latency) seg.total += t;
      return seg;
    };
    if (prefix == prefixes_.end()) {
      prefix = prefixes_.emplace(prefix_key, piece(0, split)).first;
      // The suffix starts at the entering link, or at the source node when both are in one
      // cube.
      prefix->second.entry = split > 0 ? std::uint64_t{r.links[split - 1]}
                                       : links_.size() + std::uint64_t{cube} * nodes + node;
      if (split > 0) merge_prefix(dst_cube, prefix->second);
    }
    suffix =
        &suffixes_.emplace(prefix->second.entry * nodes + dst_node, piece(split, r.links.size()))
             .first->second;
  }
  g.prefix = &prefix->second;
  g.suffix = suffix;
  // The request's way there, then the HBM access.
  g.pre = topology_.hbm().access_latency() + topology_.router_delay() +
          topology_.route_latency(dst_cube, dst_node, cube, node);
  g.arrival = g.pre + g.prefix->total;
  g.total = g.arrival + g.suffix->total;
  g.leaf = g.prefix->leaf;
  g.prefix_hops = static_cast<std::uint32_t>(g.prefix->links.size());
  return g;
}

void FlowNetwork::merge_prefix(std::uint32_t dst_cube, Segment& prefix) {
  if (forests_.empty()) forests_.resize(topology_.cubes());
  PrefixForest& f = forests_[dst_cube];
  if (!f.valid) return;
  // From the cube's entry back to the first link: a link met before must have the same way on.
  std::int32_t parent = -1, root = -1;
  emu::Tick rem = 0;
  for (std::size_t h = prefix.links.size(); h-- > 0;) {
    rem += prefix.latency[h];
    const auto [it, fresh] =
        f.index.try_emplace(prefix.links[h], static_cast<std::int32_t>(f.link.size()));
    const std::int32_t i = it->second;
    if (!fresh) {
      if (f.parent[static_cast<std::size_t>(i)] != parent ||
          f.rem[static_cast<std::size_t>(i)] != rem) {
        f.valid = false;  // not a forest: every group adds its own prefix (add_read_group)
        return;
      }
    } else {
      f.link.push_back(prefix.links[h]);
      f.parent.push_back(parent);
      f.root.push_back(root < 0 ? i : root);
      f.rem.push_back(rem);
      f.bytes.push_back(0);
      f.arrival.push_back(emu::kTickMax);
      f.suffix.push_back(nullptr);
    }
    parent = i;
    root = f.root[static_cast<std::size_t>(i)];
  }
  prefix.leaf = parent;
}

void FlowNetwork::add_read_group(std::uint32_t pe, const RangeLayout& layout,
                                 const ChannelGroup& group, bool cached) {
  // The same loads as add_route(memory_to_pe(cube, ch, pe)) for each channel ch behind `node`:
  // [channel] + prefix + suffix + [eject], after the request and the HBM access. Prefixes in a
  // forest and suffixes are added once per transfer, in add_read_tails. A cache hit's way is
  // the same from the channel's cache slice on, after the hit latency instead of the access.
  ReadGroup g = read_group(pe, group.cube, group.node, group.channel);
  if (cached) {
    const emu::Tick pre =
        g.pre - topology_.hbm().access_latency() + topology_.config().cube.cache.hit_latency;
    g.total = g.total - g.pre + pre;
    g.arrival = g.arrival - g.pre + pre;
    g.pre = pre;
  }
  add_channels(layout, group, g.pre, g.total - g.pre);  // channel, eject: no latency
  // A prefix has a leaf only once forests_ exists (merge_prefix).
  if (g.leaf >= 0 && forests_[pe / topology_.pes_per_cube()].valid) {
    PrefixForest& f = forests_[pe / topology_.pes_per_cube()];
    const auto i = static_cast<std::size_t>(g.leaf);
    if (f.bytes[i] == 0) f.touched.push_back(g.leaf);
    f.bytes[i] += group.bytes;
    f.arrival[i] = std::min(f.arrival[i], g.arrival);
    f.suffix[static_cast<std::size_t>(f.root[i])] = g.suffix;
    f.links_added += g.prefix_hops;
    return;
  }
  emu::Tick lead = g.pre;
  for (std::size_t h = 0; h < g.prefix->links.size(); ++h) {
    add_load(g.prefix->links[h], group.bytes, lead, g.total - lead);
    lead += g.prefix->latency[h];
  }
  add_tail(g.suffix, group.bytes, g.arrival);
}

void FlowNetwork::add_tail(const Segment* suffix, std::uint64_t bytes, emu::Tick lead) {
  for (auto& t : tails_) {
    if (t.suffix != suffix) continue;
    t.bytes += bytes;
    t.lead = std::min(t.lead, lead);
    return;
  }
  tails_.push_back({suffix, bytes, lead});
}

void FlowNetwork::add_forest(PrefixForest& f) {
  // A forest's links lie outside its cube (the suffixes' mesh), are not HBM channels, and
  // each appears once in it: a sweep of a valid forest adds each once, so its loads need no
  // merging (add_load). Walking leaf by leaf meets shared links once per leaf.
  const bool sweep = 2 * f.links_added >= f.link.size();
  const bool unique = f.valid && sweep;
  const auto add = [&](std::size_t i, std::uint64_t bytes, emu::Tick arrival) {
    const emu::Tick rem = f.rem[i];
    const Segment* suffix = f.suffix[static_cast<std::size_t>(f.root[i])];
    if (unique)
      loads_.push_back({f.link[i], bytes, arrival - rem, rem + suffix->total});
    else
      add_load(f.link[i], bytes, arrival - rem, rem + suffix->total);
  };
  if (sweep) {
    // Many groups: one pass over the forest, children first, carrying sums to the parents.
    for (std::size_t i = f.link.size(); i-- > 0;) {
      const std::uint64_t bytes = f.bytes[i];
      if (bytes == 0) continue;
      const emu::Tick arrival = f.arrival[i];
      add(i, bytes, arrival);
      if (const std::int32_t p = f.parent[i]; p >= 0) {
        f.bytes[static_cast<std::size_t>(p)] += bytes;
        f.arrival[static_cast<std::size_t>(p)] =
            std::min(f.arrival[static_cast<std::size_t>(p)], arrival);
      } else {
        add_tail(f.suffix[i], bytes, arrival);
      }
      f.bytes[i] = 0;
      f.arrival[i] = emu::kTickMax;
    }
  } else {
    // A few groups: each one's way to its root.
    for (const std::int32_t leaf : f.touched) {
      const auto l = static_cast<std::size_t>(leaf);
      const std::uint64_t bytes = f.bytes[l];
      const emu::Tick arrival = f.arrival[l];
      std::size_t i = l;
      for (;;) {
        add(i, bytes, arrival);
        if (f.parent[i] < 0) break;
        i = static_cast<std::size_t>(f.parent[i]);
      }
      add_tail(f.suffix[i], bytes, arrival);
      f.bytes[l] = 0;
      f.arrival[l] = emu::kTickMax;
    }
  }
  f.touched.clear();
  f.links_added = 0;
}

void FlowNetwork::add_read_tails(std::uint32_t pe) {
  if (!forests_.empty()) add_forest(forests_[pe / topology_.pes_per_cube()]);
  for (const auto& t : tails_) {
    emu::Tick lead = t.lead;
    for (std::size_t h = 0; h < t.suffix->links.size(); ++h) {
      add_load(t.suffix->links[h], t.bytes, lead, t.suffix->total - (lead - t.lead));
      lead += t.suffix->latency[h];
    }
    add_load(topology_.eject_port(pe), t.bytes, lead, 0);
  }
  tails_.clear();
}

void FlowNetwork::start(Transfer& t) {
  const TransferKind kind = t.kind;
  const std::uint32_t pe = t.pe;
  const std::uint64_t bytes = t.bytes;
  const bool from_switch = !uses_dma_window(kind);
  if (kind == TransferKind::send)
    add_route(routes_.get(kind, pe, t.peer, {}, 0), bytes);
  else if (kind == TransferKind::reply) {
    // From the controller's router: the route a read's data takes, less its request and the
    // channel.
    Route r = topology_.memory_to_pe(static_cast<std::uint32_t>(t.addr), t.peer, pe);
    r.pre_delay = 0;
    add_route(r, bytes, 0);
  } else if (kind == TransferKind::to_switch || kind == TransferKind::from_switch)
    add_route(routes_.get(kind, pe, t.peer, {}, static_cast<std::uint32_t>(t.addr)), bytes);
  else
    add_pieces(kind, pe, t.addr, bytes);

  // Reserve every link the flow crosses in its first gap from when the flow's head reaches it,
  // links nearer the source first. Held up at a link that all of its bytes cross (every link
  // of a message's route; a PE's own port and the mesh links next to it for a memory access,
  // which is many routes merged, one per HBM channel), the flow reaches the links after it that
  // much later: its head cuts through, it does not jump the queue. The switch sends what goes
  // down from it: no PE's DMA window.
  const auto by_lead = [](const LinkLoad& a, const LinkLoad& b) { return a.lead < b.lead; };
  if (!std::is_sorted(loads_.begin(), loads_.end(), by_lead))
    std::sort(loads_.begin(), loads_.end(), by_lead);  // no allocation, unlike stable_sort
  const emu::Tick t0 = from_switch ? sched_.now() : std::max(sched_.now(), free_at_[pe]);
  // A read from banked HBM: its stream's first access opens a row and waits out the read
  // latency before any of its data moves.
  emu::Tick done_at = t0, latency = 0, packet_time = 0,
            delay = kind == TransferKind::read ? stream_latency_ : 0;
  // The links are scattered over the system's link table (~10^3 per transfer on rack-scale
  // specs, most not in cache): fetch a few ahead.
  constexpr std::size_t kAhead = 16;
  const auto prefetch = [this](LinkId id) {
    const auto* p = reinterpret_cast<const char*>(&links_[id]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + sizeof(Link) - 1);  // a record may straddle two cache lines
  };
  for (std::size_t k = 0; k < std::min(kAhead, loads_.size()); ++k) prefetch(loads_[k].link);
  for (std::size_t k = 0; k < loads_.size(); ++k) {
    if (k + kAhead < loads_.size()) prefetch(loads_[k + kAhead].link);
    LinkLoad& f = loads_[k];
    Link& l = links_[f.link];
    const emu::Tick ser = flow_serialisation(f.link, f.bytes);
    const emu::Tick held = buffers_.any() ? credit_limited(kind, f.link, f.bytes, ser) : ser;
    if (f.lead > emu::kTickMax - t0) [[unlikely]]
      request_overflow(pe, t0, f.lead);
    const emu::Tick from = t0 + f.lead + delay;  // delay: at most the time to a link's end
    if (const emu::Tick busy = std::max(from, busy_[f.link].last()); held > emu::kTickMax - busy)
        [[unlikely]]
      busy_overflow(f.link, f.bytes, busy);  // the gap is no later than `busy`
    const emu::Tick start = busy_[f.link].gap(from, held), end = start + held;
    busy_[f.link].occupy(start, end, sched_.now());
    if (f.bytes == bytes) delay = start - t0 - f.lead;
    if (f.tail > emu::kTickMax - end) [[unlikely]]
      arrival_overflow(f.link, end, f.tail);
    f.end = end;
    l.busy += ser;
    l.bytes += f.bytes;
    l.packets += packets_of_.quot(f.bytes + packet_bytes_ - 1);
    ++packet_hops_;
    if (tracer_.on()) tracer_.busy(f.link, start, end, f.bytes, t);
    done_at = std::max(done_at, end + f.tail);
    latency = std::max(latency, f.lead + f.tail);
    packet_time =
        std::max(packet_time, f.bytes >= packet_bytes_ ? l.full_packet_time
                                                       : l.bandwidth.transfer_time(f.bytes));
    slot_[f.link] = kNoSlot;
  }
  if (buffers_.any()) hold_for_back_pressure(kind, bytes, t0, done_at, latency);
  loads_.clear();
  // A write completes when its responses are back: the way to the controllers again, less
  // the access, and a response's serialisation (it is a few bytes).
  if (t.acknowledged) {
    const emu::Tick back =
        latency - std::min(latency, topology_.hbm().access_latency()) + response_time_;
    done_at = emu::checked_add(done_at, back, "write response");
    latency += back;
  }
  // The DMA window: at most window_ packets in flight, each holding its slot for about one
  // round trip (path latency + a packet at the slowest link). The flow takes its packets'
  // share of the window (later transfers of the PE start after it: a small one takes 1/window
  // of a round trip, so many run at once, as in the packet model), and it cannot finish before
  // its packets have gone through the window round by round. A latency-bound PE is limited so.
  const std::uint64_t packets = (bytes + packet_bytes_ - 1) / packet_bytes_;
  const emu::Tick round_trip = latency + packet_time;
  __extension__ using u128 = unsigned __int128;  // packets x round trip may pass 64 bits
  const u128 share = (u128{packets} * round_trip + window_ - 1) / window_;
  const u128 rounds = u128{(packets + window_ - 1) / window_} * round_trip;
  if (std::max(share, rounds) > emu::kTickMax - t0) [[unlikely]]
    window_overflow(pe, packets, t0, round_trip);
  if (!from_switch) {
    free_at_[pe] = t0 + static_cast<emu::Tick>(share);
    done_at = std::max(done_at, t0 + static_cast<emu::Tick>(rounds));
  }
  packets_ += packets;
  sched_.schedule_at(
      done_at, [this, &t] { complete(t); }, 0, "flow delivery");
}

emu::Tick FlowNetwork::credit_limited(TransferKind kind, LinkId id, std::uint64_t bytes,
                                      emu::Tick ser) const {
  // A buffer of n packets beyond the link lets n packets cross per credit loop (a packet's
  // hop latency, its serialisation onward and the credit's way back), so after the first each
  // packet takes max(its serialisation, loop / n): the packet model's stream, exactly for n = 1.
  const std::uint64_t buffer = buffers_.class_bytes(id);
  if (buffer == InputBuffers::kUnbounded) return ser;
  if (kind == TransferKind::write && links_[id].kind == LinkKind::hbm_channel)
    return ser;  // a sink
  const Link& l = links_[id];
  const std::uint64_t n = buffer / packet_bytes_;
  // An HBM channel's link holds no latency of its own (it serves reads and writes alike): read
  // from, it ends at its controller's router, whose pipeline the packet goes through first.
  const emu::Tick into_router =
      l.latency +
      (l.kind == LinkKind::hbm_channel || l.kind == LinkKind::cache ? topology_.router_delay() : 0);
  const emu::Tick loop = into_router + l.full_packet_time + buffers_.credit_latency(id);
  // And each channel of the class passes a packet per turn of the router's pipeline at most
  // (packet_network.hpp): its serialisation onward and the turnaround, or the whole pipeline.
  const RouterTiming& router = topology_.config().cube.noc.router_timing;
  const std::uint64_t channels = buffers_.class_channels(id);
  const emu::Tick turn = std::max(router.pipeline, l.full_packet_time + router.turnaround);
  const bool loop_limits = loop > n * l.full_packet_time;
  const bool turn_limits = turn > channels * l.full_packet_time;
  if (!loop_limits && !turn_limits) return ser;
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t packets = (bytes + packet_bytes_ - 1) / packet_bytes_;
  const u128 wait =
      std::max(loop_limits ? u128{packets - 1} * (loop - n * l.full_packet_time) / n : u128{0},
               turn_limits ? u128{packets - 1} * (turn - channels * l.full_packet_time) / channels
                           : u128{0});
  if (wait > emu::kTickMax - ser) [[unlikely]]
    busy_overflow(id, bytes, 0);
  return ser + static_cast<emu::Tick>(wait);
}

void FlowNetwork::hold_for_back_pressure(TransferKind kind, std::uint64_t bytes, emu::Tick t0,
                                         emu::Tick done_at, emu::Tick latency) {
  // With bounded buffers a flow cannot run ahead of its slowest point by more than the buffers
  // hold. It has at most a DMA window of packets in flight, spread over its links as its bytes
  // are; where its share of the window does not fit the buffer beyond a link, that link stays
  // held until the flow's last bytes there could be buffered: the last byte's arrival at it
  // less the time the flow drains that buffer. The flow carries its `bytes_l` over the link in
  // `span` (its end less the path latency), so a buffer of B bytes drains in B * span /
  // bytes_l. Busy time is not counted for the wait: the link is held, not carrying bytes.
  if (done_at <= t0 + latency) return;
  __extension__ using u128 = unsigned __int128;
  const emu::Tick span = done_at - t0 - latency;
  const u128 window = u128{window_} * packet_bytes_;
  for (const LinkLoad& f : loads_) {
    const std::uint64_t buffer = buffers_.class_bytes(f.link);
    if (buffers_.class_channels(f.link) > 1) continue;       // others pass it in another channel
    if (window * f.bytes <= u128{buffer} * bytes) continue;  // unbounded, or its share fits
    if (kind == TransferKind::write && links_[f.link].kind == LinkKind::hbm_channel)
      continue;  // a sink
    const u128 drain = u128{buffer} * span / f.bytes;
    const emu::Tick last = done_at - f.tail;
    if (drain >= last) continue;
    const emu::Tick held_to = last - static_cast<emu::Tick>(drain);
    busy_[f.link].occupy(f.end, held_to, sched_.now());
  }
}

emu::Tick FlowNetwork::flow_serialisation(LinkId id, std::uint64_t bytes) const {
  try {
    // A banked HBM channel serves a flow at the rate a long stream sustains.
    if (dram_stream_ && links_[id].kind == LinkKind::hbm_channel)
      return stream_bandwidth_.transfer_time(bytes);
    return links_[id].bandwidth.transfer_time(bytes);
  } catch (const emu::TimeOverflow&) {
    busy_overflow(id, bytes, 0);
  }
}

}  // namespace cubesim::components
