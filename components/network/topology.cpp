#include "components/network/topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>

namespace cubesim::components {
namespace {
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
enum Dir : std::uint32_t { kEast = 0, kWest = 1, kSouth = 2, kNorth = 3 };  // +x, -x, +y, -y
const char* const kDirName[] = {"east", "west", "south", "north"};

// ".c2" for the third of several parallel links; nothing when there is one.
std::string connection_suffix(const Link& l, std::uint32_t connections) {
  return connections > 1 ? ".c" + std::to_string(l.connection) : "";
}
}  // namespace

Topology::Topology(const SystemConfig& config)
    : config_(config),
      mesh_x_(config.cube.noc.mesh_x),
      mesh_y_(config.cube.noc.mesh_y),
      pes_(config.cube.pes),
      cubes_(static_cast<std::uint32_t>(config.total_cubes())),
      cubes_per_sip_(config.cubes_per_sip),
      sips_(config.sips),
      channels_(config.cube.hbm.channels) {
  const auto& noc = config.cube.noc;
  // A link into a router carries the packet to the end of the router's pipeline: its head is
  // then ready to cross the crossbar onto the next link.
  const Tick router = router_delay();
  if (pes_ != mesh_x_ * mesh_y_)
    throw std::invalid_argument("Topology: cube.pes must equal mesh_x * mesh_y");
  if (noc.hbm_nodes.empty()) throw std::invalid_argument("Topology: cube.noc.hbm_nodes is empty");
  for (std::uint32_t ch = 0; ch < channels_; ++ch)  // channel c: controller c mod controllers
    hbm_node_of_channel_.push_back(node(noc.hbm_nodes[ch % noc.hbm_nodes.size()]));
  // Mesh links: four slots per node, id kNone where the mesh ends.
  const std::uint32_t nodes = mesh_x_ * mesh_y_;
  mesh_base_ = 0;
  std::vector<LinkId> mesh_ids(std::size_t{cubes_} * nodes * 4, kNone);
  for (std::uint32_t c = 0; c < cubes_; ++c)
    for (std::uint32_t n = 0; n < nodes; ++n) {
      const MeshCoord p = coord(n);
      const bool exists[4] = {p.x + 1 < mesh_x_, p.x > 0, p.y + 1 < mesh_y_, p.y > 0};
      const std::uint32_t to[4] = {n + 1, n - 1, n + mesh_x_, n - mesh_x_};
      for (std::uint32_t d = 0; d < 4; ++d)
        if (exists[d])
          mesh_ids[(std::size_t{c} * nodes + n) * 4 + d] =
              add_link(LinkKind::noc, noc.link_bandwidth, noc.hop_latency + router, c, n, to[d]);
    }
  mesh_ids_ = std::move(mesh_ids);
  inject_base_ = static_cast<LinkId>(links_.size());
  for (std::uint32_t pe = 0; pe < total_pes(); ++pe)
    add_link(LinkKind::inject, noc.link_bandwidth, router, pe / pes_, pe % pes_, pe % pes_);
  eject_base_ = static_cast<LinkId>(links_.size());
  for (std::uint32_t pe = 0; pe < total_pes(); ++pe)
    add_link(LinkKind::eject, noc.link_bandwidth, 0, pe / pes_, pe % pes_, pe % pes_);
  channel_base_ = static_cast<LinkId>(links_.size());
  hbm_ = make_hbm_model(config.cube.hbm);
  for (std::uint32_t c = 0; c < cubes_; ++c)
    for (std::uint32_t ch = 0; ch < channels_; ++ch)
      add_link(LinkKind::hbm_channel, hbm_->channel_bandwidth(), 0, c, ch, ch);
  cache_base_ = static_cast<LinkId>(links_.size());
  if (has_cache()) {
    const Bandwidth slice =
        Bandwidth::from_bytes_per_s(config.cube.cache.bandwidth.bytes_per_s() / channels_);
    for (std::uint32_t c = 0; c < cubes_; ++c)
      for (std::uint32_t ch = 0; ch < channels_; ++ch)
        add_link(LinkKind::cache, slice, 0, c, ch, ch);
  }

  const auto& u = config.ucie;
  cube_graph_ = std::make_unique<Graph>(u.topology, cubes_per_sip_, u.mesh_x, u.mesh_y);
  ucie_.resize(sips_);
  const auto edges = cube_graph_->edges();
  for (std::uint32_t s = 0; s < sips_; ++s)
    if (u.topology == GraphKind::switch_)  // up into the switch; down into a cube's router
      build_switch(ucie_[s], cubes_per_sip_, LinkKind::ucie, u.bandwidth, u.latency,
                   u.latency + u.switch_latency + router, s, u.connections);
    else
      build_graph(ucie_[s], cubes_per_sip_, edges, LinkKind::ucie, u.bandwidth, u.latency + router,
                  s, u.connections);
  const auto& is = config.inter_sip;
  sip_graph_ = std::make_unique<Graph>(is.topology, sips_, is.grid_x, is.grid_y);
  if (is.topology == GraphKind::switch_)
    build_switch(inter_sip_, sips_, LinkKind::inter_sip, is.bandwidth, is.latency,
                 is.latency + is.switch_latency + router, 0, is.connections);
  else
    build_graph(inter_sip_, sips_, sip_graph_->edges(), LinkKind::inter_sip, is.bandwidth,
                is.latency + router, 0, is.connections);

  for (auto& l : links_) l.full_packet_time = l.bandwidth.transfer_time(noc.packet_bytes);

  // Every SIP's UCIe links were added alike, one SIP after another.
  if (sips_ > 1) ucie_sip_stride_ = ucie_[1].first - ucie_[0].first;
  constexpr std::size_t kMaxSteps = std::size_t{1} << 20;
  const std::size_t steps = std::size_t{cubes_per_sip_} * cubes_per_sip_ * nodes;
  if (cubes_per_sip_ > 1 && steps <= kMaxSteps) {
    ucie_steps_.resize(steps);
    for (std::uint32_t a = 0; a < cubes_per_sip_; ++a)
      for (std::uint32_t b = 0; b < cubes_per_sip_; ++b)
        if (a != b)
          for (std::uint32_t n = 0; n < nodes; ++n)
            ucie_steps_[(std::size_t{a} * cubes_per_sip_ + b) * nodes + n] = ucie_step(a, b, n);
  }
}

LinkId Topology::add_link(LinkKind kind, Bandwidth bw, Tick latency, std::uint32_t owner,
                          std::uint32_t from, std::uint32_t to) {
  Link l;
  l.bandwidth = bw;
  l.latency = latency;
  l.kind = kind;
  l.owner = owner;
  l.from = from;
  l.to = to;
  links_.push_back(l);
  return static_cast<LinkId>(links_.size() - 1);
}

LinkId Topology::add_graph_links(LinkKind kind, Bandwidth bw, Tick latency, std::uint32_t owner,
                                 std::uint32_t from, std::uint32_t to, std::uint32_t connections) {
  const auto first = static_cast<LinkId>(links_.size());
  for (std::uint32_t j = 0; j < connections; ++j) {
    add_link(kind, bw, latency, owner, from, to);
    links_.back().connection = j;
  }
  return first;
}

void Topology::build_graph(GraphLinks& g, std::uint32_t n,
                           const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                           LinkKind kind, Bandwidth bw, Tick latency, std::uint32_t owner,
                           std::uint32_t connections) {
  g.connections = connections;
  g.first = static_cast<LinkId>(links_.size());
  g.adj.assign(n, {});
  for (auto [a, b] : edges) {
    g.adj[a].emplace_back(b, add_graph_links(kind, bw, latency, owner, a, b, connections));
    g.adj[b].emplace_back(a, add_graph_links(kind, bw, latency, owner, b, a, connections));
  }
  for (auto& v : g.adj) std::sort(v.begin(), v.end());
}

void Topology::build_switch(GraphLinks& g, std::uint32_t n, LinkKind kind, Bandwidth bw,
                            Tick latency, Tick down_latency, std::uint32_t owner,
                            std::uint32_t connections) {
  g.connections = connections;
  g.switched = true;
  g.first = static_cast<LinkId>(links_.size());
  g.adj.assign(n + 1, {});
  if (n < 2) return;  // nothing to cross to
  for (std::uint32_t a = 0; a < n; ++a) {
    g.adj[a].emplace_back(n, add_graph_links(kind, bw, latency, owner, a, n, connections));
    g.adj[n].emplace_back(a, add_graph_links(kind, bw, down_latency, owner, n, a, connections));
  }
}

std::uint32_t Topology::neighbour_rank(const GraphLinks& g, std::uint32_t from,
                                       std::uint32_t to) const {
  if (g.switched) return from + 1 == g.adj.size() ? to : 0;  // down to `to`, or up
  const auto& v = g.adj[from];
  for (std::uint32_t i = 0; i < v.size(); ++i)
    if (v[i].first == to) return i;
  throw std::logic_error("Topology: no link between neighbours");
}

LinkId Topology::graph_link(const GraphLinks& g, std::uint32_t from, std::uint32_t to,
                            std::uint32_t connection) const {
  return g.adj[from][neighbour_rank(g, from, to)].second + connection;
}

Topology::UcieStep Topology::ucie_step(std::uint32_t local, std::uint32_t to,
                                       std::uint32_t at) const {
  const std::uint32_t next = cube_graph_->next_hop(local, to);
  if (ucie_[0].switched) {  // up to the switch (node cubes_per_sip_) on a port of either cube
    const std::uint32_t j = ucie_connection(local, cubes_per_sip_, at);
    return {next, ucie_node(local, cubes_per_sip_, j), ucie_node(next, cubes_per_sip_, j),
            graph_link(ucie_[0], local, cubes_per_sip_, j)};
  }
  const std::uint32_t j = ucie_connection(local, next, at);
  return {next, ucie_node(local, next, j), ucie_node(next, local, j),
          graph_link(ucie_[0], local, next, j)};
}

std::uint32_t Topology::ucie_node(std::uint32_t cube_in_sip, std::uint32_t neighbour,
                                  std::uint32_t connection) const {
  const auto& nodes = config_.cube.noc.ucie_nodes;
  const std::uint32_t rank = neighbour_rank(ucie_[0], cube_in_sip, neighbour);
  return node(nodes[(std::size_t{rank} * ucie_[0].connections + connection) % nodes.size()]);
}

std::uint32_t Topology::ucie_connection(std::uint32_t cube_in_sip, std::uint32_t neighbour,
                                        std::uint32_t at) const {
  std::uint32_t best = 0, best_hops = kNone;
  for (std::uint32_t j = 0; j < ucie_[0].connections; ++j) {
    const std::uint32_t hops = mesh_hops(at, ucie_node(cube_in_sip, neighbour, j));
    if (hops < best_hops) best = j, best_hops = hops;
  }
  return best;
}

// One routing algorithm, walked a hop at a time (RouteCursor): the packet model keeps a cursor
// per packet, route_nodes lists the hops, route_latency sums their latencies a cube at a time
// (the flow model asks for ~10^5 request latencies on rack-scale specs).
RouteCursor Topology::between(std::uint32_t src_cube, std::uint32_t src_node,
                              std::uint32_t dst_cube, std::uint32_t dst_node) const {
  RouteCursor c;
  c.cube = src_cube;
  c.node = src_node;
  c.dst_cube = dst_cube;
  c.dst_node = dst_node;
  c.connection = src_node % config_.inter_sip.connections;
  plan(c);
  return c;
}

void Topology::plan(RouteCursor& c) const {
  // Within the destination's SIP the walk heads for the destination; before it, for the
  // inter-SIP port of the route's connection.
  const std::uint32_t sip = c.cube / cubes_per_sip_, local = c.cube % cubes_per_sip_;
  std::uint32_t to_cube = c.dst_cube % cubes_per_sip_, to_node = c.dst_node;
  RouteCursor::Then after = RouteCursor::Then::end;
  if (sip != c.dst_cube / cubes_per_sip_) {
    const auto& port_nodes = config_.cube.noc.inter_sip_nodes;
    to_cube = config_.inter_sip.port_cube;
    to_node = node(port_nodes[c.connection % port_nodes.size()]);
    after = RouteCursor::Then::inter_sip;
  }
  c.sip = sip;
  if (local == to_cube) {
    c.target = to_node;
    c.then = after;
    return;
  }
  const UcieStep step =
      ucie_steps_.empty()
          ? ucie_step(local, to_cube, c.node)
          : ucie_steps_[(std::size_t{local} * cubes_per_sip_ + to_cube) * mesh_x_ * mesh_y_ +
                        c.node];
  c.target = step.target;
  c.then = RouteCursor::Then::ucie;
  c.exit = step.link + sip * ucie_sip_stride_;
  c.exit_cube = sip * cubes_per_sip_ + step.next;
  c.exit_node = step.entry;
}

bool Topology::step(RouteCursor& c) const {
  if (c.node != c.target) {  // dimension order: X first, then Y
    const MeshCoord p = coord(c.node), q = coord(c.target);
    const Dir d = p.x < q.x ? kEast : p.x > q.x ? kWest : p.y < q.y ? kSouth : kNorth;
    const std::uint32_t nodes = mesh_x_ * mesh_y_;
    c.link = mesh_ids_[(std::size_t{c.cube} * nodes + c.node) * 4 + d];
    c.latency = links_[c.link].latency;
    c.node = links_[c.link].to;
    return true;
  }
  switch (c.then) {
    case RouteCursor::Then::ucie:
      c.link = c.exit;
      if (ucie_[0].switched) {  // on the switch: down to the cube on the same connection
        c.exit = graph_link(ucie_[0], cubes_per_sip_, c.exit_cube % cubes_per_sip_,
                            links_[c.link].connection) +
                 c.sip * ucie_sip_stride_;
        c.then = RouteCursor::Then::ucie_down;
        break;
      }
      c.cube = c.exit_cube;
      c.node = c.exit_node;
      plan(c);
      break;
    case RouteCursor::Then::ucie_down:
      c.link = c.exit;
      c.cube = c.exit_cube;
      c.node = c.exit_node;
      plan(c);
      break;
    case RouteCursor::Then::inter_sip: {
      const std::uint32_t dst_sip = c.dst_cube / cubes_per_sip_;
      // Through a switch (node sips_): up to it, then down to the destination.
      const std::uint32_t next = c.sip == sips_        ? dst_sip
                                 : inter_sip_.switched ? sips_
                                                       : sip_graph_->next_hop(c.sip, dst_sip);
      c.link = graph_link(inter_sip_, c.sip, next, c.connection);
      c.sip = next;
      if (next == dst_sip) {  // on from the same port node of the destination SIP's port cube
        c.cube = next * cubes_per_sip_ + config_.inter_sip.port_cube;
        plan(c);
      }
      break;
    }
    case RouteCursor::Then::end:
      return false;
  }
  c.latency = links_[c.link].latency;
  return true;
}

RouteCursor Topology::ported(LinkId first, Tick first_latency, RouteCursor walk, LinkId last,
                             Tick last_latency) const {
  walk.link = first;
  walk.latency = first_latency;
  walk.last = false;
  walk.stage = RouteCursor::Stage::first_port;
  walk.final_link = last;
  walk.final_latency = last_latency;
  return walk;
}

void Topology::next(RouteCursor& c) const {
  if (c.stage == RouteCursor::Stage::last_port)
    throw std::logic_error("Topology::next: the route has no hop after its last");
  c.stage = RouteCursor::Stage::nodes;
  if (step(c)) return;
  c.stage = RouteCursor::Stage::last_port;
  c.link = c.final_link;
  c.latency = c.final_latency;
  c.last = true;
}

void Topology::route_nodes(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                           std::uint32_t dst_node, Route& r) const {
  RouteCursor c = between(src_cube, src_node, dst_cube, dst_node);
  while (step(c)) {
    r.links.push_back(c.link);
    r.latency.push_back(c.latency);
  }
}

Tick Topology::route_latency(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                             std::uint32_t dst_node) const {
  // Mesh links all have the hop latency: a cube's stretch costs its XY hop count times it.
  const Tick hop = config_.cube.noc.hop_latency + router_delay();
  RouteCursor c = between(src_cube, src_node, dst_cube, dst_node);
  Tick sum = 0;
  for (;;) {
    sum += Tick{mesh_hops(c.node, c.target)} * hop;
    c.node = c.target;
    if (!step(c)) return sum;
    sum += c.latency;
  }
}

RouteCursor Topology::start_pe_to_pe(std::uint32_t src_pe, std::uint32_t dst_pe) const {
  return ported(
      inject_port(src_pe), router_delay(),
      between(src_pe / pes_, node_of_pe(src_pe % pes_), dst_pe / pes_, node_of_pe(dst_pe % pes_)),
      eject_port(dst_pe), 0);
}

RouteCursor Topology::start_pe_to_memory(std::uint32_t pe, std::uint32_t cube,
                                         std::uint32_t channel) const {
  // The write lands after the access latency.
  return ported(inject_port(pe), router_delay(),
                between(pe / pes_, node_of_pe(pe % pes_), cube, hbm_node(channel)),
                hbm_channel(cube, channel), hbm_->access_latency());
}

RouteCursor Topology::from_controller(LinkId port, std::uint32_t cube, std::uint32_t channel,
                                      std::uint32_t pe) const {
  return ported(port, router_delay(),
                between(cube, hbm_node(channel), pe / pes_, node_of_pe(pe % pes_)), eject_port(pe),
                0);
}

Tick Topology::request_delay(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel,
                             Tick access) const {
  // The request travels the reverse way first; it is small, so it costs latency only.
  return router_delay() + route_latency(pe / pes_, node_of_pe(pe % pes_), cube, hbm_node(channel)) +
         access;
}

RouteCursor Topology::start_memory_to_pe(std::uint32_t cube, std::uint32_t channel,
                                         std::uint32_t pe) const {
  return from_controller(hbm_channel(cube, channel), cube, channel, pe);
}

Tick Topology::read_request_delay(std::uint32_t pe, std::uint32_t cube,
                                  std::uint32_t channel) const {
  return request_delay(pe, cube, channel, hbm_->access_latency());
}

RouteCursor Topology::start_cache_to_pe(std::uint32_t cube, std::uint32_t channel,
                                        std::uint32_t pe) const {
  return from_controller(cache_slice(cube, channel), cube, channel, pe);
}

Tick Topology::cache_request_delay(std::uint32_t pe, std::uint32_t cube,
                                   std::uint32_t channel) const {
  return request_delay(pe, cube, channel, config_.cube.cache.hit_latency);
}

std::uint32_t Topology::switch_connection(std::uint32_t pe, SwitchLevel level) const {
  const std::uint32_t at = node_of_pe(pe % pes_);
  if (level == SwitchLevel::inter_sip) return at % config_.inter_sip.connections;
  return ucie_connection((pe / pes_) % cubes_per_sip_, cubes_per_sip_, at);
}

std::pair<std::uint32_t, std::uint32_t> Topology::switch_port(SwitchLevel level, std::uint32_t cube,
                                                              std::uint32_t connection) const {
  const std::uint32_t sip = cube / cubes_per_sip_;
  if (level == SwitchLevel::inter_sip) {
    const auto& nodes = config_.cube.noc.inter_sip_nodes;
    return {sip * cubes_per_sip_ + config_.inter_sip.port_cube,
            node(nodes[connection % nodes.size()])};
  }
  return {cube, ucie_node(cube % cubes_per_sip_, cubes_per_sip_, connection)};
}

RouteCursor Topology::start_pe_to_switch(std::uint32_t pe, SwitchLevel level) const {
  const bool sips = level == SwitchLevel::inter_sip;
  if (!(sips ? inter_sip_.switched : ucie_[0].switched))
    throw std::logic_error("Topology::start_pe_to_switch: that level has no switch");
  const std::uint32_t cube = pe / pes_, j = switch_connection(pe, level);
  const auto [port_cube, port_node] = switch_port(level, cube, j);
  const LinkId up = sips ? graph_link(inter_sip_, cube / cubes_per_sip_, sips_, j)
                         : graph_link(ucie_[0], cube % cubes_per_sip_, cubes_per_sip_, j) +
                               (cube / cubes_per_sip_) * ucie_sip_stride_;
  return ported(inject_port(pe), router_delay(),
                between(cube, node_of_pe(pe % pes_), port_cube, port_node), up, links_[up].latency);
}

RouteCursor Topology::start_switch_to_pe(SwitchLevel level, std::uint32_t connection,
                                         std::uint32_t pe) const {
  const bool sips = level == SwitchLevel::inter_sip;
  if (!(sips ? inter_sip_.switched : ucie_[0].switched))
    throw std::logic_error("Topology::start_switch_to_pe: that level has no switch");
  const std::uint32_t cube = pe / pes_;
  const auto [port_cube, port_node] = switch_port(level, cube, connection);
  const LinkId down =
      sips ? graph_link(inter_sip_, sips_, cube / cubes_per_sip_, connection)
           : graph_link(ucie_[0], cubes_per_sip_, cube % cubes_per_sip_, connection) +
                 (cube / cubes_per_sip_) * ucie_sip_stride_;
  return ported(down, links_[down].latency,
                between(port_cube, port_node, cube, node_of_pe(pe % pes_)), eject_port(pe), 0);
}

namespace {
Route listed(const Topology& t, RouteCursor c) {
  Route r;
  for (;;) {
    r.links.push_back(c.link);
    r.latency.push_back(c.latency);
    if (c.last) return r;
    t.next(c);
  }
}
}  // namespace

Route Topology::pe_to_pe(std::uint32_t src_pe, std::uint32_t dst_pe) const {
  return listed(*this, start_pe_to_pe(src_pe, dst_pe));
}

Route Topology::pe_to_memory(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const {
  return listed(*this, start_pe_to_memory(pe, cube, channel));
}

Route Topology::memory_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const {
  Route r = listed(*this, start_memory_to_pe(cube, channel, pe));
  r.pre_delay = read_request_delay(pe, cube, channel);
  return r;
}

Route Topology::cache_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const {
  Route r = listed(*this, start_cache_to_pe(cube, channel, pe));
  r.pre_delay = cache_request_delay(pe, cube, channel);
  return r;
}

Route Topology::pe_to_switch(std::uint32_t pe, SwitchLevel level) const {
  return listed(*this, start_pe_to_switch(pe, level));
}

Route Topology::switch_to_pe(SwitchLevel level, std::uint32_t connection, std::uint32_t pe) const {
  return listed(*this, start_switch_to_pe(level, connection, pe));
}

std::uint32_t Topology::mesh_hops(std::uint32_t a, std::uint32_t b) const {
  const MeshCoord p = coord(a), q = coord(b);
  return (p.x > q.x ? p.x - q.x : q.x - p.x) + (p.y > q.y ? p.y - q.y : q.y - p.y);
}

std::uint32_t Topology::cube_hops(std::uint32_t /*sip*/, std::uint32_t a, std::uint32_t b) const {
  return cube_graph_->hops(a, b);
}

std::uint32_t Topology::sip_hops(std::uint32_t a, std::uint32_t b) const {
  return sip_graph_->hops(a, b);
}

std::string Topology::link_name(LinkId id) const {
  const Link& l = links_[id];
  auto cube_name = [&](std::uint32_t g) {
    return "sip" + std::to_string(g / cubes_per_sip_) + ".cube" +
           std::to_string(g % cubes_per_sip_);
  };
  auto node_name = [&](std::uint32_t n) {
    const MeshCoord c = coord(n);
    return "(" + std::to_string(c.x) + "," + std::to_string(c.y) + ")";
  };
  switch (l.kind) {
    case LinkKind::noc: {
      const MeshCoord a = coord(l.from), b = coord(l.to);
      const Dir d = b.x > a.x ? kEast : b.x < a.x ? kWest : b.y > a.y ? kSouth : kNorth;
      return cube_name(l.owner) + ".noc." + node_name(l.from) + "->" + node_name(l.to) + "." +
             kDirName[d];
    }
    case LinkKind::inject:
      return cube_name(l.owner) + ".pe" + std::to_string(l.from) + ".inject";
    case LinkKind::eject:
      return cube_name(l.owner) + ".pe" + std::to_string(l.from) + ".eject";
    case LinkKind::hbm_channel:
      return cube_name(l.owner) + ".hbm.ch" + std::to_string(l.from);
    case LinkKind::cache:
      return cube_name(l.owner) + ".cache.ch" + std::to_string(l.from);
    case LinkKind::ucie: {
      const auto end = [&](std::uint32_t c) {
        return c == cubes_per_sip_ ? std::string("switch") : "cube" + std::to_string(c);
      };
      return "sip" + std::to_string(l.owner) + ".ucie." + end(l.from) + "->" + end(l.to) +
             connection_suffix(l, config_.ucie.connections);
    }
    case LinkKind::inter_sip: {
      const auto end = [&](std::uint32_t s) {
        return s == sips_ ? std::string("switch") : "sip" + std::to_string(s);
      };
      return "inter_sip." + end(l.from) + "->" + end(l.to) +
             connection_suffix(l, config_.inter_sip.connections);
    }
  }
  return "?";
}

}  // namespace cubesim::components
