#pragma once
// The links of a system and the routes over them.
//
//  - In a cube: a 2D mesh, one PE per node (PE i on node (i % mesh_x, i / mesh_x)), a pair of
//    directed links between neighbouring nodes, and per PE an injection and an ejection port.
//    HBM channel c is reached through the controller on hbm_nodes[c % hbm_nodes.size()].
//    Routing is dimension-order: X first, then Y.
//  - Between the cubes of a SIP: UCIe links (a Graph: ring, 2D mesh, 2D torus or all-to-all),
//    ucie.connections parallel links per pair of neighbours. Connection j of cube c's side
//    toward its r-th neighbour (neighbours in increasing index) leaves from
//    ucie_nodes[(r * connections + j) % size] and enters the neighbour on the node of its own
//    side's connection j. Routes are the graph's (shortest paths, among equals the
//    lowest-numbered next cube); in each cube a packet leaves by the connection whose node is
//    fewest mesh hops from where it is (the lowest-numbered on a tie), so the choice never
//    depends on where in the last cube it goes.
//  - Between SIPs: links (a Graph over the SIPs: ring, mesh or torus on sips.grid, all-to-all)
//    from the inter-SIP port on cube inter_sip.port_cube of every SIP, inter_sip.connections
//    parallel links per pair of neighbouring SIPs; connection j attaches at
//    inter_sip_nodes[j % size] and a route takes connection (its source node % connections).
//  - A switch (UCIe or inter-SIP) is node n of its graph of n: every cube or SIP has
//    `connections` links up to it and as many down from it, taken as its neighbour-0 links
//    (ucie_nodes[j % size], inter_sip_nodes[j % size]). A crossing is connection j up and
//    connection j down to the destination; the down link's latency includes the crossbar's.
//    The crossbar itself never blocks: only the ports (links) are contended.
//
//  - In-network reduction (SwitchLevel): a PE's way up to a switch is the start of a crossing
//    from it, to the end of the link up; the way down from the switch to a PE is the end of a
//    crossing into it, from the link down, over a given connection.
//
// Every route is a list of link ids, plus the head latency of each hop.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "components/hbm/hbm_model.hpp"
#include "components/network/link.hpp"
#include "components/system_config.hpp"
#include "components/topology/graph.hpp"

namespace cubesim::components {

struct Route {
  std::vector<LinkId> links;
  std::vector<Tick> latency;  // per hop: when the head reaches the next link's input
  Tick pre_delay = 0;         // before the first hop (a read's request and the HBM access)
};

// A route walked one hop at a time, as routers forward a packet: it holds where the packet is
// and where it goes, not the links, so what a packet in flight keeps does not grow with the
// route or with the number of routes a run uses. Topology::start_* put it on the first hop
// and Topology::next moves it on; a route is exactly the one the Route functions list.
struct RouteCursor {
  LinkId link = 0;   // the hop the packet is at
  Tick latency = 0;  // the hop's head latency: when the head reaches the next hop's input
  bool last = false;

  // Which part of the route the hop is in: the port it starts at, the links between nodes, or
  // the port it ends at.
  enum class Stage : std::uint8_t { first_port, nodes, last_port };
  // What follows when the walk reaches `target` in its cube.
  // ucie_down: the walk is on the link up to a UCIe switch; the link down from it follows.
  enum class Then : std::uint8_t { ucie, ucie_down, inter_sip, end };
  Stage stage = Stage::nodes;
  Then then = Then::end;
  std::uint32_t cube = 0, node = 0, target = 0;  // where the walk is, and heads for in the cube
  std::uint32_t sip = 0;  // on inter-SIP links: the SIP it has reached (SIP count: the switch)
  std::uint32_t connection = 0;  // the inter-SIP connection of the route
  std::uint32_t dst_cube = 0, dst_node = 0;
  // Then::ucie: the link out of the cube (on a switch, up to it; Then::ucie_down: the link down
  // from it), and the cube and node it enters.
  LinkId exit = 0;
  std::uint32_t exit_cube = 0, exit_node = 0;
  LinkId final_link = 0;  // the port after the last node
  Tick final_latency = 0;
};

// The switch a PE reaches up to: its SIP's UCIe switch, or the inter-SIP switch.
enum class SwitchLevel : std::uint8_t { ucie, inter_sip };

class Topology {
 public:
  explicit Topology(const SystemConfig& config);

  const SystemConfig& config() const { return config_; }
  // A router's pipeline (system.cube.noc.router.pipeline_cycles): it is part of the latency of
  // every link into a router (mesh, UCIe and inter-SIP links, a PE's injection port, an HBM
  // channel read from), so a route's latency counts it once per router crossed.
  Tick router_delay() const { return config_.cube.noc.router_timing.pipeline; }
  std::uint32_t cubes() const { return cubes_; }
  std::uint32_t pes_per_cube() const { return pes_; }
  std::uint32_t total_pes() const { return cubes_ * pes_; }
  std::uint32_t node_of_pe(std::uint32_t local_pe) const { return local_pe; }
  MeshCoord coord(std::uint32_t node) const { return {node % mesh_x_, node / mesh_x_}; }
  std::uint32_t node(MeshCoord c) const { return c.y * mesh_x_ + c.x; }
  // The mesh node of the controller that serves HBM channel `channel` (< channels per cube).
  std::uint32_t hbm_node(std::uint32_t channel) const { return hbm_node_of_channel_[channel]; }
  // How every HBM channel serves requests: the channel links' rate and the access latency.
  const HbmModel& hbm() const { return *hbm_; }

  std::vector<Link>& links() { return links_; }
  const std::vector<Link>& links() const { return links_; }
  Link& link(LinkId id) { return links_[id]; }
  const Link& link(LinkId id) const { return links_[id]; }
  std::string link_name(LinkId id) const;

  LinkId inject_port(std::uint32_t global_pe) const { return inject_base_ + global_pe; }
  LinkId eject_port(std::uint32_t global_pe) const { return eject_base_ + global_pe; }
  LinkId hbm_channel(std::uint32_t global_cube, std::uint32_t channel) const {
    return channel_base_ + global_cube * channels_ + channel;
  }
  // The slice of the cube's cache in front of HBM channel `channel` (system.cube.cache): a hit
  // leaves from it as a read from the channel would, at the slice's share of the cache's
  // bandwidth and after its hit latency. Only when the spec has a cache.
  bool has_cache() const { return config_.cube.cache.enabled(); }
  LinkId cache_slice(std::uint32_t global_cube, std::uint32_t channel) const {
    return cache_base_ + global_cube * channels_ + channel;
  }

  // Appends to `r` the hops from a node of one cube to a node of another (or the same) cube.
  void route_nodes(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                   std::uint32_t dst_node, Route& r) const;
  // The sum of that route's hop latencies, without building it.
  Tick route_latency(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                     std::uint32_t dst_node) const;
  // Data paths of the three kinds of transfer.
  Route pe_to_pe(std::uint32_t src_pe, std::uint32_t dst_pe) const;
  Route pe_to_memory(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const;
  // Data from memory to the PE; pre_delay holds the request's way there and the HBM access.
  Route memory_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const;
  // A hit in the cube's cache: from the channel's cache slice, after the hit latency.
  Route cache_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const;
  // The same paths hop by hop: the cursor is on their first hop. A read's request latency
  // (memory_to_pe's pre_delay) is read_request_delay.
  RouteCursor start_pe_to_pe(std::uint32_t src_pe, std::uint32_t dst_pe) const;
  RouteCursor start_pe_to_memory(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const;
  RouteCursor start_memory_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const;
  Tick read_request_delay(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const;
  RouteCursor start_cache_to_pe(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe) const;
  Tick cache_request_delay(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel) const;
  // In-network reduction through the switch of `level` (which must be a switch): the
  // connection a crossing from `pe` takes, the way up to the switch over it (ending with the
  // link up) and the way down from the switch to `pe` over `connection` (starting with the
  // link down, whose latency includes the crossbar's).
  std::uint32_t switch_connection(std::uint32_t pe, SwitchLevel level) const;
  RouteCursor start_pe_to_switch(std::uint32_t pe, SwitchLevel level) const;
  RouteCursor start_switch_to_pe(SwitchLevel level, std::uint32_t connection,
                                 std::uint32_t pe) const;
  Route pe_to_switch(std::uint32_t pe, SwitchLevel level) const;
  Route switch_to_pe(SwitchLevel level, std::uint32_t connection, std::uint32_t pe) const;
  // Where a switch's port is: the cube (global) and node that a link up over `connection`
  // leaves from for a PE of `cube` (global).
  std::pair<std::uint32_t, std::uint32_t> switch_port(SwitchLevel level, std::uint32_t cube,
                                                      std::uint32_t connection) const;
  // Moves the cursor to the next hop; not past the last.
  void next(RouteCursor& c) const;

  // Hop counts, for tests and reports.
  std::uint32_t mesh_hops(std::uint32_t a, std::uint32_t b) const;
  std::uint32_t cube_hops(std::uint32_t sip, std::uint32_t a, std::uint32_t b) const;
  std::uint32_t sip_hops(std::uint32_t a, std::uint32_t b) const;

 private:
  // The directed links of a graph of cubes or SIPs: `connections` parallel links per ordered
  // pair of neighbours, with consecutive ids from the one in adj.
  struct GraphLinks {
    // sorted by neighbour; a switch's graph has one more node, the switch, last
    std::vector<std::vector<std::pair<std::uint32_t, LinkId>>> adj;
    std::uint32_t connections = 1;
    bool switched = false;
    LinkId first = 0;  // the first of its links
  };
  LinkId add_link(LinkKind kind, Bandwidth bw, Tick latency, std::uint32_t owner,
                  std::uint32_t from, std::uint32_t to);
  void build_graph(GraphLinks& g, std::uint32_t n,
                   const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges, LinkKind kind,
                   Bandwidth bw, Tick latency, std::uint32_t owner, std::uint32_t connections);
  // A switch's links: up from each of n nodes to node n, and down from it.
  void build_switch(GraphLinks& g, std::uint32_t n, LinkKind kind, Bandwidth bw, Tick latency,
                    Tick down_latency, std::uint32_t owner, std::uint32_t connections);
  std::uint32_t neighbour_rank(const GraphLinks& g, std::uint32_t from, std::uint32_t to) const;
  LinkId graph_link(const GraphLinks& g, std::uint32_t from, std::uint32_t to,
                    std::uint32_t connection) const;
  // A walk between two nodes, before its first hop; plan chooses the way on where the walk
  // starts or enters a cube.
  RouteCursor between(std::uint32_t src_cube, std::uint32_t src_node, std::uint32_t dst_cube,
                      std::uint32_t dst_node) const;
  void plan(RouteCursor& c) const;
  // One hop of the walk between nodes: false when the walk has reached its destination node.
  bool step(RouteCursor& c) const;
  // Data leaving an HBM controller's node from `port` (a channel or its cache slice) to a PE,
  // and the latency of the request that asks for it, with `access` at the far end.
  RouteCursor from_controller(LinkId port, std::uint32_t cube, std::uint32_t channel,
                              std::uint32_t pe) const;
  Tick request_delay(std::uint32_t pe, std::uint32_t cube, std::uint32_t channel,
                     Tick access) const;
  // A route from a port, through the nodes, to a port.
  RouteCursor ported(LinkId first, Tick first_latency, RouteCursor walk, LinkId last,
                     Tick last_latency) const;
  // The way out of a cube toward cube `to` of its SIP, from node `at`: the next cube, the node
  // of the connection taken, the node it enters there and the link (SIP 0's; another SIP's is
  // ucie_sip_stride_ per SIP further on).
  struct UcieStep {
    std::uint32_t next, target, entry;
    LinkId link;
  };
  UcieStep ucie_step(std::uint32_t local, std::uint32_t to, std::uint32_t at) const;
  std::uint32_t ucie_node(std::uint32_t cube_in_sip, std::uint32_t neighbour,
                          std::uint32_t connection) const;
  // The connection toward `neighbour` a packet on node `at` of the cube takes.
  std::uint32_t ucie_connection(std::uint32_t cube_in_sip, std::uint32_t neighbour,
                                std::uint32_t at) const;
  LinkId add_graph_links(LinkKind kind, Bandwidth bw, Tick latency, std::uint32_t owner,
                         std::uint32_t from, std::uint32_t to, std::uint32_t connections);

  SystemConfig config_;
  std::uint32_t mesh_x_, mesh_y_, pes_, cubes_, cubes_per_sip_, sips_, channels_;
  std::unique_ptr<const HbmModel> hbm_;
  std::vector<Link> links_;
  std::vector<LinkId> mesh_ids_;  // [(cube * nodes + node) * 4 + direction]
  std::vector<std::uint32_t> hbm_node_of_channel_;
  LinkId mesh_base_ = 0, inject_base_ = 0, eject_base_ = 0, channel_base_ = 0, cache_base_ = 0;
  std::unique_ptr<Graph> cube_graph_, sip_graph_;  // routes over the cubes of a SIP, the SIPs
  std::vector<GraphLinks> ucie_;                   // per SIP
  GraphLinks inter_sip_;
  // ucie_step for every (cube, destination cube, node) of a SIP, where that table is small
  // (every spec but the largest all-to-all ones); empty otherwise. Packets plan their way at
  // every cube they enter.
  std::vector<UcieStep> ucie_steps_;
  LinkId ucie_sip_stride_ = 0;
};

}  // namespace cubesim::components
