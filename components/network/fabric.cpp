#include "components/network/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace cubesim::components {

namespace {
constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
// Flow model: a transfer of at most this many packets uses cached routes piece by piece; a
// longer one its range's cached layout (range_layout), which costs less from 3 pieces on (a
// 16 KiB operand a GEMM engine streams for every product: -4 % wall on large.json's
// sharded_gemm, same reports).
constexpr std::uint64_t kFewPieces = 2;
// Routes remembered per PE (Dma::routes); a power of two. 128: the channels of 4 cubes on
// default.json (every (cube, channel) a PE's interleaved reads meet), 2 KiB per PE.
constexpr std::uint64_t kRouteSlots = 128;
// Flow model: the range layouts cached (channel and group entries) before the cache restarts.
constexpr std::size_t kLayoutEntries = std::size_t{1} << 20;
constexpr std::size_t kReadGroupSlots = std::size_t{1} << 21;  // of ReadGroup: some 100 MB

constexpr const char* kEndOfTime = "simulated time (2^64 ps = 213 days)";

// The value of link_bandwidth_field(kind) in the spec, in GB/s.
double spec_GBps(const SystemConfig& c, LinkKind kind) {
  Bandwidth b = c.cube.noc.link_bandwidth;
  if (kind == LinkKind::ucie) b = c.ucie.bandwidth;
  if (kind == LinkKind::inter_sip) b = c.inter_sip.bandwidth;
  if (kind == LinkKind::hbm_channel) b = c.cube.hbm.bandwidth;
  return static_cast<double>(b.bytes_per_s()) / 1e9;
}

}  // namespace

const char* network_model_name(NetworkModel m) {
  return m == NetworkModel::flow ? "flow" : "packet";
}

NetworkModel parse_network_model(const std::string& name) {
  if (name == "packet") return NetworkModel::packet;
  if (name == "flow") return NetworkModel::flow;
  throw std::invalid_argument("unknown network model '" + name +
                              "': use 'packet' (every packet and hop, the default) or 'flow' "
                              "(one reservation per transfer and link, for large what-if runs)");
}

LinkTrace parse_link_trace(const std::string& name) {
  if (name == "none") return LinkTrace::none;
  if (name == "busy") return LinkTrace::busy;
  if (name == "all") return LinkTrace::all;
  throw std::invalid_argument("unknown link trace mode '" + name +
                              "': use 'none', 'busy' (busy periods, the default) or 'all' (every "
                              "uninterrupted busy interval)");
}

Fabric::Fabric(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map,
               NetworkModel model)
    : model_(model),
      sched_(scheduler),
      topology_(topology),
      map_(map),
      links_(topology.links()),
      packet_bytes_(topology.config().cube.noc.packet_bytes),
      packets_of_(topology.config().cube.noc.packet_bytes),
      window_(topology.config().pe.dma.max_outstanding_packets),
      buffers_(topology),
      credits_(model == NetworkModel::packet && buffers_.any()),
      dma_(topology.total_pes()) {
  if (model_ == NetworkModel::flow) slot_.assign(links_.size(), kNoSlot);
  if (credits_) waiters_.resize(links_.size());
}

void Fabric::read(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "read");
  begin(Kind::read, pe, 0, addr, bytes, std::move(done));
}

void Fabric::write(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "write");
  begin(Kind::write, pe, 0, addr, bytes, std::move(done));
}

void Fabric::send(std::uint32_t src_pe, std::uint32_t dst_pe, std::uint64_t bytes, Done done) {
  if (dst_pe >= topology_.total_pes())
    throw std::out_of_range("Fabric::send: destination PE index out of range");
  begin(Kind::send, src_pe, dst_pe, 0, bytes, std::move(done));
}

void Fabric::begin(Kind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
                   std::uint64_t bytes, Done done) {
  if (pe >= dma_.size()) throw std::out_of_range("Fabric: PE index out of range");
  if (model_ == NetworkModel::flow) {
    begin_flow(kind, pe, peer, addr, bytes, std::move(done));
    return;
  }
  Transfer& t = *new_transfer();
  t.kind = kind;
  t.pe = pe;
  t.peer = peer;
  t.addr = addr;
  t.bytes = bytes;
  t.done = std::move(done);
  start(t);
}

void Fabric::start(Transfer& t) {
  ++transfers_;
  ++live_transfers_;
  if (t.bytes == 0) {
    sched_.schedule_in(
        0,
        [this, &t] {
          --live_transfers_;
          Done d = std::move(t.done);
          t.next_free = free_transfers_;
          free_transfers_ = &t;
          if (d) d();
        },
        0, "empty transfer");
    return;
  }
  Dma& d = dma_[t.pe];
  if (d.ready.empty() && d.in_flight < window_) {
    // What pump() does with this transfer alone in the queue, without the queue: a small
    // transfer (every small tl.load) is one packet, issued at once.
    issue_packet(t);
    if (t.issued == t.bytes) return;
  }
  d.ready.push_back(&t);
  pump(t.pe);
}

void Fabric::pump(std::uint32_t pe) {
  Dma& d = dma_[pe];
  while (d.in_flight < window_ && !d.ready.empty()) {
    Transfer& t = *d.ready.front();
    d.ready.pop_front();
    issue_packet(t);
    if (t.issued < t.bytes) d.ready.push_back(&t);
  }
}

Fabric::RouteKey Fabric::route_key(Kind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                                   std::uint32_t channel) {
  const std::uint64_t who = std::uint64_t{static_cast<std::uint32_t>(kind)} << 32 | pe;
  if (kind == Kind::send) return {who, peer};
  return {who, std::uint64_t{loc.global_cube} << 32 | channel};
}

const Route& Fabric::cached_route(Kind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                                  std::uint32_t channel) {
  const RouteKey key = route_key(kind, pe, peer, loc, channel);
  Dma& d = dma_[pe];
  if (key == d.last.key) return *d.last.route;
  if (d.routes.empty()) d.routes.resize(kRouteSlots);
  // The PE is the same for all of its slots: index by where the route goes (low bits: the
  // channel, or the peer), the kind mixed in.
  Dma::RouteSlot& slot =
      d.routes[(key.where + (key.where >> 29) + (key.who >> 32) * 0x9e37) & (kRouteSlots - 1)];
  if (key != slot.key) {
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      Route r = kind == Kind::send   ? topology_.pe_to_pe(pe, peer)
                : kind == Kind::read ? topology_.memory_to_pe(loc.global_cube, channel, pe)
                                     : topology_.pe_to_memory(pe, loc.global_cube, channel);
      it = routes_.emplace(key, std::move(r)).first;  // nodes are stable: pointers stay valid
    }
    slot.key = key;
    slot.route = &it->second;
  }
  d.last = slot;
  return *slot.route;
}

const Route& Fabric::route_for(Transfer& t, std::uint64_t addr, std::uint32_t* bytes) {
  const std::uint64_t left = t.bytes - t.issued;
  Location loc{};
  std::uint32_t ch = 0;
  if (t.kind == Kind::send) {
    // Packets of a PE-to-PE transfer are cut at packet_bytes of the transfer's own offset.
    *bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, packet_bytes_));
  } else {
    // The first piece of the remaining range: one cube, one channel, at most one packet.
    const auto piece = map_.first_piece(addr, left, packet_bytes_);
    loc = piece.loc;
    *bytes = static_cast<std::uint32_t>(piece.len);
    ch = map_.channel(loc);
  }
  return cached_route(t.kind, t.pe, t.peer, loc, ch);
}

// ---- Flow model ---------------------------------------------------------------------------------

void Fabric::add_load(LinkId id, std::uint64_t bytes, emu::Tick lead, emu::Tick tail) {
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

void Fabric::add_route(const Route& r, std::uint64_t bytes, std::size_t skip) {
  emu::Tick total = r.pre_delay;
  for (const emu::Tick lat : r.latency) total += lat;
  emu::Tick lead = r.pre_delay;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    if (i != skip) add_load(r.links[i], bytes, lead, total - lead);
    lead += r.latency[i];
  }
}

void Fabric::add_pieces(Kind kind, std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes) {
  if (bytes <= kFewPieces * packet_bytes_) {  // a few pieces: their routes, cached
    while (bytes > 0) {
      const auto piece = map_.first_piece(addr, bytes, packet_bytes_);
      add_route(cached_route(kind, pe, 0, piece.loc, map_.channel(piece.loc)), piece.len);
      addr += piece.len;
      bytes -= piece.len;
    }
    return;
  }
  // A long range: its bytes per (cube, channel), grouped by HBM controller (range_layout).
  // Channels behind one controller node share the rest of their route, so one route is
  // followed per (cube, node), and the channel links are added one by one. (Caching every
  // (PE, cube, channel) route instead would take GiBs on a rack-scale spec.)
  const RangeLayout& layout = range_layout(addr, bytes);
  for (const ChannelGroup& group : layout.groups) {
    if (kind == Kind::read) {
      add_read_group(pe, layout, group);
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

const Fabric::RangeLayout& Fabric::range_layout(std::uint64_t addr, std::uint64_t bytes) {
  const RangeKey key{addr, bytes};
  if (const auto it = layouts_.find(key); it != layouts_.end()) return it->second;
  if (layout_entries_ > kLayoutEntries) {  // keep the cache bounded: start again
    layouts_.clear();
    layout_entries_ = 0;
  }
  RangeLayout& layout = layouts_[key];
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
        layout.links.push_back(topology_.hbm_channel(cube, c));
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
  layout_entries_ += layout.links.size() + layout.groups.size();
  return layout;
}

void Fabric::add_channels(const RangeLayout& layout, const ChannelGroup& group, emu::Tick lead,
                          emu::Tick tail) {
  // A channel link is crossed by no other part of a transfer and appears once in its layout:
  // no merging (add_load) needed.
  for (std::uint32_t k = group.begin; k < group.end; ++k)
    loads_.push_back({layout.links[k], layout.bytes[k], lead, tail});
}

const Fabric::ReadGroup& Fabric::read_group(std::uint32_t pe, std::uint32_t cube,
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
  g.pre =
      topology_.hbm().access_latency() + topology_.route_latency(dst_cube, dst_node, cube, node);
  g.arrival = g.pre + g.prefix->total;
  g.total = g.arrival + g.suffix->total;
  g.leaf = g.prefix->leaf;
  g.prefix_hops = static_cast<std::uint32_t>(g.prefix->links.size());
  return g;
}

void Fabric::merge_prefix(std::uint32_t dst_cube, Segment& prefix) {
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

void Fabric::add_read_group(std::uint32_t pe, const RangeLayout& layout,
                            const ChannelGroup& group) {
  // The same loads as add_route(memory_to_pe(cube, ch, pe)) for each channel ch behind `node`:
  // [channel] + prefix + suffix + [eject], after the request and the HBM access. Prefixes in a
  // forest and suffixes are added once per transfer, in add_read_tails.
  const ReadGroup& g = read_group(pe, group.cube, group.node, group.channel);
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

void Fabric::add_tail(const Segment* suffix, std::uint64_t bytes, emu::Tick lead) {
  for (auto& t : tails_) {
    if (t.suffix != suffix) continue;
    t.bytes += bytes;
    t.lead = std::min(t.lead, lead);
    return;
  }
  tails_.push_back({suffix, bytes, lead});
}

void Fabric::add_forest(PrefixForest& f) {
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

void Fabric::add_read_tails(std::uint32_t pe) {
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

void Fabric::begin_flow(Kind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
                        std::uint64_t bytes, Done done) {
  ++transfers_;
  ++live_transfers_;
  Transfer& t = *new_transfer();
  t.done = std::move(done);
  const auto finish = [this, &t] { complete(t); };
  if (bytes == 0) {
    sched_.schedule_in(0, finish, 0, "empty transfer");
    return;
  }
  if (kind == Kind::send)
    add_route(cached_route(kind, pe, peer, {}, 0), bytes);
  else
    add_pieces(kind, pe, addr, bytes);

  // Reserve every link the flow crosses, first come first served.
  Dma& d = dma_[pe];
  const emu::Tick t0 = std::max(sched_.now(), d.flow_free_at);
  emu::Tick done_at = t0, latency = 0, packet_time = 0;
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
    const LinkLoad& f = loads_[k];
    Link& l = links_[f.link];
    const emu::Tick ser = flow_serialisation(f.link, f.bytes);
    const emu::Tick held = buffers_.any() ? credit_limited(kind, f.link, f.bytes, ser) : ser;
    if (f.lead > emu::kTickMax - t0) [[unlikely]]
      request_overflow(pe, t0, f.lead);
    const emu::Tick start = std::max(t0 + f.lead, l.free_at);
    if (held > emu::kTickMax - start) [[unlikely]]
      busy_overflow(f.link, f.bytes, start);
    const emu::Tick end = start + held;
    if (f.tail > emu::kTickMax - end) [[unlikely]]
      arrival_overflow(f.link, end, f.tail);
    l.free_at = end;
    l.busy += ser;
    l.bytes += f.bytes;
    l.packets += packets_of_.quot(f.bytes + packet_bytes_ - 1);
    ++packet_hops_;
    if (trace_) trace_busy(f.link, start, end, f.bytes, t);
    done_at = std::max(done_at, end + f.tail);
    latency = std::max(latency, f.lead + f.tail);
    packet_time =
        std::max(packet_time, f.bytes >= packet_bytes_ ? l.full_packet_time
                                                       : l.bandwidth.transfer_time(f.bytes));
    slot_[f.link] = kNoSlot;
  }
  if (buffers_.any()) hold_for_back_pressure(kind, bytes, t0, done_at, latency);
  loads_.clear();
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
  d.flow_free_at = t0 + static_cast<emu::Tick>(share);
  done_at = std::max(done_at, t0 + static_cast<emu::Tick>(rounds));
  packets_ += packets;
  sched_.schedule_at(done_at, finish, 0, "flow delivery");
}

emu::Tick Fabric::credit_limited(Kind kind, LinkId id, std::uint64_t bytes, emu::Tick ser) const {
  // A buffer of n packets beyond the link lets n packets cross per credit loop (a packet's
  // hop latency, its serialisation onward and the credit's way back), so after the first each
  // packet takes max(its serialisation, loop / n): the packet model's stream, exactly for n = 1.
  const std::uint64_t buffer = buffers_.class_bytes(id);
  if (buffer == InputBuffers::kUnbounded) return ser;
  if (kind == Kind::write && links_[id].kind == LinkKind::hbm_channel) return ser;  // a sink
  const Link& l = links_[id];
  const std::uint64_t n = buffer / packet_bytes_;
  const emu::Tick loop = l.latency + l.full_packet_time + buffers_.credit_latency(id);
  if (loop <= n * l.full_packet_time) return ser;
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t packets = (bytes + packet_bytes_ - 1) / packet_bytes_;
  const u128 wait = u128{packets - 1} * (loop - n * l.full_packet_time) / n;
  if (wait > emu::kTickMax - ser) [[unlikely]]
    busy_overflow(id, bytes, 0);
  return ser + static_cast<emu::Tick>(wait);
}

void Fabric::hold_for_back_pressure(Kind kind, std::uint64_t bytes, emu::Tick t0, emu::Tick done_at,
                                    emu::Tick latency) {
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
    if (kind == Kind::write && links_[f.link].kind == LinkKind::hbm_channel) continue;  // a sink
    const u128 drain = u128{buffer} * span / f.bytes;
    const emu::Tick last = done_at - f.tail;
    if (drain >= last) continue;
    Link& l = links_[f.link];
    l.free_at = std::max(l.free_at, last - static_cast<emu::Tick>(drain));
  }
}

void Fabric::issue_packet(Transfer& t) {
  Packet& p = *new_packet();
  p.transfer = &t;
  p.route = &route_for(t, t.addr + t.issued, &p.bytes);
  p.hop = 0;
  if (p.route->pre_delay > emu::kTickMax - sched_.now()) [[unlikely]]
    request_overflow(t.pe, sched_.now(), p.route->pre_delay);
  p.tail = sched_.now() + p.route->pre_delay;
  t.issued += p.bytes;
  ++t.in_flight;
  ++dma_[t.pe].in_flight;  // the packet holds a slot of its PE's window until delivered
  ++packets_;
  if (credits_) {
    p.held = nullptr;
    p.crossed = 0;
    p.in_line = false;
    p.next_waiting = nullptr;
    p.waiting_since = emu::kTickMax;
    if (p.route->pre_delay == 0)
      arrive(p);
    else
      sched_.schedule_in(
          p.route->pre_delay, [this, &p] { arrive(p); }, 0, "noc packet");
    return;
  }
  if (p.route->pre_delay == 0)
    advance(p);
  else
    sched_.schedule_in(
        p.route->pre_delay, [this, &p] { advance(p); }, 0, "noc packet");
}

void Fabric::advance(Packet& p) {
  const emu::Tick now = sched_.now();
  const Route& r = *p.route;
  for (;;) {
    const LinkId id = r.links[p.hop];
    const emu::Tick start = std::max(now, links_[id].free_at);
    const emu::Tick end = occupy(p, id, start);
    const emu::Tick lat = r.latency[p.hop];
    if (++p.hop == r.links.size()) {
      sched_.schedule_at(
          end + lat, [this, &p] { delivered(p); }, 0, "noc delivery");
      return;
    }
    p.tail = end + lat;
    const emu::Tick next = start + lat;
    if (next != now) {
      sched_.schedule_at(
          next, [this, &p] { advance(p); }, 0, "noc packet");
      return;
    }
    // A zero-latency port with the next link ready now: go on without another event.
  }
}

emu::Tick Fabric::occupy(Packet& p, LinkId id, emu::Tick start) {
  Link& l = links_[id];
  const emu::Tick ser =
      p.bytes == packet_bytes_ ? l.full_packet_time : l.bandwidth.transfer_time(p.bytes);
  if (ser > emu::kTickMax - start) [[unlikely]]
    busy_overflow(id, p.bytes, start);
  const emu::Tick end = std::max(start + ser, p.tail);
  const emu::Tick lat = p.route->latency[p.hop];
  if (lat > emu::kTickMax - end) [[unlikely]]
    arrival_overflow(id, end, lat);
  l.free_at = end;
  l.busy += end - start;
  l.bytes += p.bytes;
  ++l.packets;
  ++packet_hops_;
  if (trace_) trace_busy(id, start, end, p.bytes, *p.transfer);
  return end;
}

// ---- Credit flow control (bounded buffers, InputBuffers) ----------------------------------------

void Fabric::arrive(Packet& p) {
  // It leaves its channel first in line: behind another packet, it waits for that one's grant.
  if (p.held != nullptr && buffers_.channel(p.held_channel).waiting != p.held) {
    p.in_line = true;  // grant() of the packet ahead goes on with it
    return;
  }
  request(p);
}

void Fabric::request(Packet& p) {
  // Granting one packet can make the next in its channel first in line, and so on down the
  // channel: those requests are queued and taken here one after another, not nested (a
  // callback may run on a program's small fiber stack).
  pending_.push_back(&p);
  if (pending_.size() > 1) return;  // a request further up the stack takes it
  for (std::size_t i = 0; i < pending_.size(); ++i) request_now(*pending_[i]);
  pending_.clear();
}

void Fabric::request_now(Packet& p) {
  if (p.held != nullptr) {
    // Not before the tail of the packet ahead in its channel has left. When the link is busy
    // past that anyway, the request is taken now, as a busy link's always is; otherwise at
    // that time, so that the link is not held idle for it.
    const emu::Tick clear = buffers_.channel(p.held_channel).clear_at;
    if (clear > std::max(sched_.now(), links_[p.route->links[p.hop]].free_at)) {
      sched_.schedule_at(
          clear, [this, &p] { request(p); }, 0, "noc packet");
      return;
    }
  }
  emu::Tick retry = 0;
  if (try_grant(p, &retry)) return;
  p.waiting_since = sched_.now();
  const LinkId id = p.route->links[p.hop];
  Waiters& w = waiters_[id];
  if (w.tail != nullptr)
    w.tail->next_waiting = &p;
  else
    w.head = &p;
  w.tail = &p;
  if (retry != InputBuffers::kUnknown) schedule_wake(id, retry);
}

bool Fabric::try_grant(Packet& p, emu::Tick* retry) {
  const Route& r = *p.route;
  const LinkId id = r.links[p.hop];
  const Link& l = links_[id];
  const emu::Tick start = std::max(sched_.now(), l.free_at);
  std::uint32_t channel = InputBuffers::kNone;
  if (p.hop + 1 < r.links.size() && buffers_.bounded(id)) {
    channel = buffers_.choose(id, p.crossed + (joins_cubes(l.kind) ? 1 : 0), p.bytes, start, retry);
    if (channel == InputBuffers::kNone) return false;
  }
  grant(p, start, channel);
  return true;
}

void Fabric::grant(Packet& p, emu::Tick start, std::uint32_t channel) {
  const Route& r = *p.route;
  const LinkId id = r.links[p.hop];
  const emu::Tick end = occupy(p, id, start);
  const emu::Tick lat = r.latency[p.hop];
  if (p.waiting_since != emu::kTickMax) {
    links_[id].credit_wait += sched_.now() - p.waiting_since;
    p.waiting_since = emu::kTickMax;
  }
  if (p.held != nullptr) {  // its tail leaves the buffer it sat in at `end`
    InputBuffers::Occupant* next = buffers_.leave(p.held_link, p.held_channel, p.held, end);
    if (next != nullptr && static_cast<Packet*>(next->packet)->in_line) {
      Packet& q = *static_cast<Packet*>(next->packet);  // first in line now
      q.in_line = false;
      request(q);
    }
    if (waiters_[p.held_link].head != nullptr) schedule_wake(p.held_link, p.held->release);
    p.held = nullptr;
  }
  if (joins_cubes(links_[id].kind)) ++p.crossed;
  if (channel != InputBuffers::kNone) {
    p.held = buffers_.enter(channel, p.bytes, &p);
    p.held_link = id;
    p.held_channel = channel;
  }
  if (++p.hop == r.links.size()) {
    sched_.schedule_at(
        end + lat, [this, &p] { delivered(p); }, 0, "noc delivery");
    return;
  }
  p.tail = end + lat;
  if (start + lat == sched_.now()) {
    arrive(p);  // a zero-latency port, granted now: on without another event
    return;
  }
  sched_.schedule_at(
      start + lat, [this, &p] { arrive(p); }, 0, "noc packet");
}

void Fabric::schedule_wake(LinkId id, emu::Tick at) {
  Waiters& w = waiters_[id];
  at = std::max(at, sched_.now());
  if (at >= w.wake_at) return;  // an earlier one will look again
  w.wake_at = at;
  sched_.schedule_at(
      at,
      [this, id] {
        if (waiters_[id].wake_at != sched_.now()) return;  // replaced by an earlier one
        waiters_[id].wake_at = emu::kTickMax;
        wake(id);
      },
      0, "credit");
}

void Fabric::wake(LinkId id) {
  Waiters& w = waiters_[id];
  Packet* p = w.head;
  w.head = w.tail = nullptr;
  emu::Tick soonest = InputBuffers::kUnknown;
  // Per class (links crossed): the smallest packet that found no room in this pass. A packet
  // of that class at least as big is passed over without looking: many packets often wait on
  // one link (a DMA window at an injection port, a busy HBM channel), and one look per class
  // tells them all.
  constexpr std::uint32_t kClassesTracked = 16;
  std::array<std::uint32_t, kClassesTracked> no_room;
  no_room.fill(~std::uint32_t{0});
  while (p != nullptr) {
    Packet* next = p->next_waiting;
    p->next_waiting = nullptr;
    const bool tracked = p->crossed < kClassesTracked;
    emu::Tick retry = 0;
    if ((tracked && p->bytes >= no_room[p->crossed]) || !try_grant(*p, &retry)) {
      if (w.tail != nullptr)
        w.tail->next_waiting = p;
      else
        w.head = p;
      w.tail = p;
      if (retry != 0) soonest = std::min(soonest, retry);
      if (tracked) no_room[p->crossed] = std::min(no_room[p->crossed], p->bytes);
    }
    p = next;
  }
  if (soonest != InputBuffers::kUnknown) schedule_wake(id, soonest);
}

void Fabric::delivered(Packet& p) {
  Transfer& t = *p.transfer;
  t.delivered += p.bytes;
  --t.in_flight;
  p.next_free = free_packets_;
  free_packets_ = &p;
  --dma_[t.pe].in_flight;
  pump(t.pe);
  if (t.issued < t.bytes || t.in_flight != 0) return;
  complete(t);
}

void Fabric::complete(Transfer& t) {
  // Recycle the record before the callback runs: it may start a transfer that reuses it.
  --live_transfers_;
  Done d = std::move(t.done);
  t.done = nullptr;
  t.next_free = free_transfers_;
  free_transfers_ = &t;
  if (d) d();
}

Fabric::Transfer* Fabric::new_transfer() {
  Transfer* t = free_transfers_;
  if (!t) {
    t = &transfer_store_.emplace_back();
    t->trace_flow = trace_flow_;
    return t;
  }
  free_transfers_ = t->next_free;
  // Field by field: `*t = Transfer{}` zeroed a temporary with `rep stos` and moved it, ~4 % of
  // a small tl.load. The caller sets what a transfer is; this resets its progress.
  if (t->done) t->done = nullptr;
  t->issued = 0;
  t->delivered = 0;
  t->in_flight = 0;
  t->next_free = nullptr;
  t->trace_flow = trace_flow_;
  if (!t->traced_links.empty()) t->traced_links.clear();
  return t;
}

Fabric::Packet* Fabric::new_packet() {
  Packet* p = free_packets_;
  if (p) {
    free_packets_ = p->next_free;
  } else {
    p = &packet_store_.emplace_back();
  }
  return p;
}

emu::Tick Fabric::flow_serialisation(LinkId id, std::uint64_t bytes) const {
  try {
    return links_[id].bandwidth.transfer_time(bytes);
  } catch (const emu::TimeOverflow&) {
    busy_overflow(id, bytes, 0);
  }
}

void Fabric::busy_overflow(LinkId id, std::uint64_t bytes, emu::Tick from) const {
  const Link& l = links_[id];
  const char* field = link_bandwidth_field(l.kind);
  const std::string busy =
      from == 0 ? std::string() : fmt::format(" after being busy until {}", emu::format_time(from));
  throw emu::TimeOverflow(fmt::format(
      "the transfer time of {} bytes over {} = {} overflows {}: link {} would carry them at {} "
      "B/s{}. Raise {} or move fewer bytes over that link",
      bytes, field, spec_GBps(topology_.config(), l.kind), kEndOfTime, topology_.link_name(id),
      l.bandwidth.bytes_per_s(), busy, field));
}

void Fabric::arrival_overflow(LinkId id, emu::Tick from, emu::Tick latency) const {
  const Link& l = links_[id];
  const char* field = link_bandwidth_field(l.kind);
  throw emu::TimeOverflow(fmt::format(
      "a packet leaving link {} at {} would arrive {} later, past the end of {}: the links on its "
      "way ({} = {} here) are busy that long. Raise their bandwidth or move fewer bytes",
      topology_.link_name(id), emu::format_time(from), emu::format_time(latency), kEndOfTime, field,
      spec_GBps(topology_.config(), l.kind)));
}

void Fabric::window_overflow(std::uint32_t pe, std::uint64_t packets, emu::Tick from,
                             emu::Tick round_trip) const {
  throw emu::TimeOverflow(fmt::format(
      "the DMA engine of PE {} (global index) would still hold packets past the end of {}: from "
      "{}, {} packets, {} in flight at a time (system.pe.dma.max_outstanding_packets), each for "
      "a round trip of {}. Raise the bandwidths on the transfer's way or move fewer bytes",
      pe, kEndOfTime, emu::format_time(from), packets, window_, emu::format_time(round_trip)));
}

void Fabric::request_overflow(std::uint32_t pe, emu::Tick from, emu::Tick delay) const {
  throw emu::TimeOverflow(fmt::format(
      "a transfer of PE {} (global index) starting at {} would reach its first link {} later "
      "(the hop latencies and system.cube.hbm.latency_ns on the way), past the end of {}: the "
      "links before it are busy that long. Raise their bandwidth or move fewer bytes",
      pe, emu::format_time(from), emu::format_time(delay), kEndOfTime));
}

void Fabric::set_trace(emu::TraceWriter* trace, LinkTrace mode, emu::Tick busy_gap) {
  trace_ = mode == LinkTrace::none ? nullptr : trace;
  trace_links_ = mode;
  trace_gap_ = mode == LinkTrace::busy ? busy_gap : 0;
  link_trace_.assign(trace_ ? links_.size() : 0, LinkTraceSlice{});
}

emu::TraceWriter::Track Fabric::link_track(LinkId id) {
  LinkTraceSlice& s = link_trace_[id];
  if (!s.has_track) {
    s.track = trace_->track("links", topology_.link_name(id));
    s.has_track = true;
  }
  return s.track;
}

void Fabric::write_link_slice(LinkId id) {
  const LinkTraceSlice& s = link_trace_[id];
  if (!trace_->wants(s.start, s.end)) return;
  const emu::Tick duration = s.end - s.start;
  const std::string args =
      trace_links_ == LinkTrace::busy
          ? fmt::format(R"({{"bytes":{},"busy_ps":{},"utilisation":{:.4f}}})", s.bytes, s.busy,
                        static_cast<double>(s.busy) / static_cast<double>(duration))
          : fmt::format(R"({{"bytes":{}}})", s.bytes);
  trace_->complete_json_args(link_track(id), "busy", s.start, duration, "link", args);
}

void Fabric::trace_busy(LinkId id, emu::Tick start, emu::Tick end, std::uint64_t bytes,
                        Transfer& t) {
  if (trace_->full()) return;
  LinkTraceSlice& s = link_trace_[id];
  if (s.end > s.start && start <= s.end + trace_gap_) {
    s.end = std::max(s.end, end);
  } else {
    if (s.end > s.start) write_link_slice(id);
    s.start = start;
    s.end = end;
    s.busy = 0;
    s.bytes = 0;
  }
  s.busy += end - start;
  s.bytes += bytes;
  // The step sits inside this reservation, so inside the slice that will hold it, and after the
  // flow's start (the transfer's issue).
  if (t.trace_flow == 0 || end <= start) return;
  const emu::Tick step_at = start + (end - start) / 2;
  if (trace_->wants(step_at, step_at) &&
      std::find(t.traced_links.begin(), t.traced_links.end(), id) == t.traced_links.end()) {
    t.traced_links.push_back(id);
    trace_->flow_step(link_track(id), t.trace_flow, step_at);
  }
}

void Fabric::flush_trace() {
  if (!trace_) return;
  for (LinkId id = 0; id < link_trace_.size(); ++id) {
    LinkTraceSlice& s = link_trace_[id];
    if (s.end <= s.start) continue;
    write_link_slice(id);
    s.start = s.end = 0;
  }
}

void Fabric::reset_stats() {
  for (Link& l : links_) {
    l.busy = 0;
    l.credit_wait = 0;
    l.bytes = 0;
    l.packets = 0;
  }
  packets_ = packet_hops_ = transfers_ = 0;
}

void Fabric::abandon_in_flight() {
  for (Dma& d : dma_) {
    d.in_flight = 0;
    d.ready.clear();
    d.flow_free_at = 0;
  }
  for (Link& l : links_) l.free_at = 0;
  buffers_.clear();
  for (Waiters& w : waiters_) w = Waiters{};
  pending_.clear();
  free_transfers_ = nullptr;
  for (Transfer& t : transfer_store_) {
    t.done = nullptr;
    t.next_free = free_transfers_;
    free_transfers_ = &t;
  }
  free_packets_ = nullptr;
  for (Packet& p : packet_store_) {
    p.next_free = free_packets_;
    free_packets_ = &p;
  }
  live_transfers_ = 0;
}

std::uint64_t Fabric::link_bytes(LinkKind kind) const {
  std::uint64_t sum = 0;
  for (const Link& l : links_)
    if (l.kind == kind) sum += l.bytes;
  return sum;
}

nlohmann::json Fabric::stats_json(emu::Tick elapsed) const {
  nlohmann::json links = nlohmann::json::object();
  LinkId busiest = 0, held_back = 0;
  emu::Tick busiest_time = 0, most_wait = 0;
  for (LinkId id = 0; id < links_.size(); ++id) {
    const Link& l = links_[id];
    if (l.packets == 0) continue;
    nlohmann::json& j = links[topology_.link_name(id)] = {
        {"kind", link_kind_name(l.kind)},
        {"bytes", l.bytes},
        {"packets", l.packets},
        {"busy_ps", l.busy},
        {"utilisation",
         elapsed ? static_cast<double>(l.busy) / static_cast<double>(elapsed) : 0.0}};
    if (credits_) j["credit_wait_ps"] = l.credit_wait;
    if (l.busy > busiest_time) {
      busiest_time = l.busy;
      busiest = id;
    }
    if (l.credit_wait > most_wait) {
      most_wait = l.credit_wait;
      held_back = id;
    }
  }
  nlohmann::json out = {{"transfers", transfers_},
                        {"packets", packets_},
                        {"packet_hops", packet_hops_},
                        {"bytes",
                         {{"noc", link_bytes(LinkKind::noc)},
                          {"inject", link_bytes(LinkKind::inject)},
                          {"eject", link_bytes(LinkKind::eject)},
                          {"hbm", link_bytes(LinkKind::hbm_channel)},
                          {"ucie", link_bytes(LinkKind::ucie)},
                          {"inter_sip", link_bytes(LinkKind::inter_sip)}}},
                        {"links", std::move(links)}};
  if (most_wait > 0)
    out["most_held_back"] = {{"name", topology_.link_name(held_back)},
                             {"credit_wait_ps", most_wait}};
  if (busiest_time > 0)
    out["busiest_link"] = {
        {"name", topology_.link_name(busiest)},
        {"busy_ps", busiest_time},
        {"utilisation",
         elapsed ? static_cast<double>(busiest_time) / static_cast<double>(elapsed) : 0.0}};
  return out;
}

}  // namespace cubesim::components
