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
              add_link(LinkKind::noc, noc.link_bandwidth, noc.hop_latency, c, n, to[d]);
    }
  mesh_ids_ = std::move(mesh_ids);
  inject_base_ = static_cast<LinkId>(links_.size());
  for (std::uint32_t pe = 0; pe < total_pes(); ++pe)
    add_link(LinkKind::inject, noc.link_bandwidth, 0, pe / pes_, pe % pes_, pe % pes_);
  eject_base_ = static_cast<LinkId>(links_.size());
  for (std::uint32_t pe = 0; pe < total_pes(); ++pe)
    add_link(LinkKind::eject, noc.link_bandwidth, 0, pe / pes_, pe % pes_, pe % pes_);
  channel_base_ = static_cast<LinkId>(links_.size());
  hbm_ = make_hbm_model(config.cube.hbm);
  for (std::uint32_t c = 0; c < cubes_; ++c)
    for (std::uint32_t ch = 0; ch < channels_; ++ch)
      add_link(LinkKind::hbm_channel, hbm_->channel_bandwidth(), 0, c, ch, ch);

  const auto& u = config.ucie;
  cube_graph_ = std::make_unique<Graph>(u.topology, cubes_per_sip_, u.mesh_x, u.mesh_y);
  ucie_.resize(sips_);
  const auto edges = cube_graph_->edges();
  for (std::uint32_t s = 0; s < sips_; ++s)
    build_graph(ucie_[s], cubes_per_sip_, edges, LinkKind::ucie, u.bandwidth, u.latency, s,
                u.connections);
  const auto& is = config.inter_sip;
  sip_graph_ = std::make_unique<Graph>(is.topology, sips_, is.grid_x, is.grid_y);
  build_graph(inter_sip_, sips_, sip_graph_->edges(), LinkKind::inter_sip, is.bandwidth, is.latency,
              0, is.connections);

  for (auto& l : links_) l.full_packet_time = l.bandwidth.transfer_time(noc.packet_bytes);
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
  g.adj.assign(n, {});
  for (auto [a, b] : edges) {
    g.adj[a].emplace_back(b, add_graph_links(kind, bw, latency, owner, a, b, connections));
    g.adj[b].emplace_back(a, add_graph_links(kind, bw, latency, owner, b, a, connections));
  }
  for (auto& v : g.adj) std::sort(v.begin(), v.end());
}

std::uint32_t Topology::neighbour_rank(const GraphLinks& g, std::uint32_t from,
                                       std::uint32_t to) const {
  const auto& v = g.adj[from];
  for (std::uint32_t i = 0; i < v.size(); ++i)
    if (v[i].first == to) return i;
  throw std::logic_error("Topology: no link between neighbours");
}

LinkId Topology::graph_link(const GraphLinks& g, std::uint32_t from, std::uint32_t to,
                            std::uint32_t connection) const {
  return g.adj[from][neighbour_rank(g, from, to)].second + connection;
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

// One routing algorithm, walked link by link: route_nodes records the links, route_latency
// only sums their latencies (the flow model asks for ~10^5 request latencies on rack-scale
// specs and must not build a route for each).
template <class Visit>
void Topology::walk_mesh(std::uint32_t cube, std::uint32_t from, std::uint32_t to,
                         Visit& visit) const {
  const std::uint32_t nodes = mesh_x_ * mesh_y_;
  MeshCoord p = coord(from);
  const MeshCoord q = coord(to);
  auto hop = [&](Dir d) { visit(mesh_ids_[(std::size_t{cube} * nodes + node(p)) * 4 + d]); };
  while (p.x < q.x) {
    hop(kEast);
    ++p.x;
  }
  while (p.x > q.x) {
    hop(kWest);
    --p.x;
  }
  while (p.y < q.y) {
    hop(kSouth);
    ++p.y;
  }
  while (p.y > q.y) {
    hop(kNorth);
    --p.y;
  }
}

template <class Visit>
void Topology::walk_in_sip(std::uint32_t sip, std::uint32_t src_cube, std::uint32_t src_node,
                           std::uint32_t dst_cube, std::uint32_t dst_node, Visit& visit) const {
  const GraphLinks& g = ucie_[sip];
  std::uint32_t cube = src_cube, at = src_node;
  const std::uint32_t base = sip * cubes_per_sip_;
  while (cube != dst_cube) {
    const std::uint32_t next = cube_graph_->next_hop(cube, dst_cube);
    const std::uint32_t j = ucie_connection(cube, next, at);
    walk_mesh(base + cube, at, ucie_node(cube, next, j), visit);
    visit(graph_link(g, cube, next, j));
    at = ucie_node(next, cube, j);
    cube = next;
  }
  walk_mesh(base + cube, at, dst_node, visit);
}

template <class Visit>
void Topology::walk_nodes(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                          std::uint32_t dst_node, Visit& visit) const {
  std::uint32_t sip = src_cube / cubes_per_sip_;
  const std::uint32_t dst_sip = dst_cube / cubes_per_sip_;
  if (sip == dst_sip) {
    walk_in_sip(sip, src_cube % cubes_per_sip_, src_node, dst_cube % cubes_per_sip_, dst_node,
                visit);
    return;
  }
  const std::uint32_t port_cube = config_.inter_sip.port_cube;
  const std::uint32_t connection = src_node % config_.inter_sip.connections;
  const auto& port_nodes = config_.cube.noc.inter_sip_nodes;
  const std::uint32_t port_node = node(port_nodes[connection % port_nodes.size()]);
  walk_in_sip(sip, src_cube % cubes_per_sip_, src_node, port_cube, port_node, visit);
  while (sip != dst_sip) {
    const std::uint32_t next = sip_graph_->next_hop(sip, dst_sip);
    visit(graph_link(inter_sip_, sip, next, connection));
    sip = next;
  }
  walk_in_sip(sip, port_cube, port_node, dst_cube % cubes_per_sip_, dst_node, visit);
}

void Topology::route_nodes(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                           std::uint32_t dst_node, Route& r) const {
  auto record = [&](LinkId id) {
    r.links.push_back(id);
    r.latency.push_back(links_[id].latency);
  };
  walk_nodes(src_cube, src_node, dst_cube, dst_node, record);
}

Tick Topology::route_latency(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                             std::uint32_t dst_node) const {
  Tick sum = 0;
  auto add = [&](LinkId id) { sum += links_[id].latency; };
  walk_nodes(src_cube, src_node, dst_cube, dst_node, add);
  return sum;
}

Route Topology::pe_to_pe(std::uint32_t src_pe, std::uint32_t dst_pe) const {
  Route r;
  r.links.push_back(inject_port(src_pe));
  r.latency.push_back(0);
  route_nodes(src_pe / pes_, node_of_pe(src_pe % pes_), dst_pe / pes_, node_of_pe(dst_pe % pes_),
              r);
  r.links.push_back(eject_port(dst_pe));
  r.latency.push_back(0);
  return r;
}

Route Topology::pe_to_memory(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const {
  Route r;
  r.links.push_back(inject_port(pe));
  r.latency.push_back(0);
  route_nodes(pe / pes_, node_of_pe(pe % pes_), cube, hbm_node(channel), r);
  r.links.push_back(hbm_channel(cube, channel));
  r.latency.push_back(hbm_->access_latency());  // the write lands after the access latency
  return r;
}

Route Topology::memory_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const {
  // The request travels the reverse way first; it is small, so it costs latency only.
  Route request;
  route_nodes(pe / pes_, node_of_pe(pe % pes_), cube, hbm_node(channel), request);
  Route r;
  for (Tick t : request.latency) r.pre_delay += t;
  r.pre_delay += hbm_->access_latency();
  r.links.push_back(hbm_channel(cube, channel));
  r.latency.push_back(0);
  route_nodes(cube, hbm_node(channel), pe / pes_, node_of_pe(pe % pes_), r);
  r.links.push_back(eject_port(pe));
  r.latency.push_back(0);
  return r;
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
    case LinkKind::ucie:
      return "sip" + std::to_string(l.owner) + ".ucie.cube" + std::to_string(l.from) + "->cube" +
             std::to_string(l.to) + connection_suffix(l, config_.ucie.connections);
    case LinkKind::inter_sip:
      return "inter_sip.sip" + std::to_string(l.from) + "->sip" + std::to_string(l.to) +
             connection_suffix(l, config_.inter_sip.connections);
  }
  return "?";
}

}  // namespace cubesim::components
