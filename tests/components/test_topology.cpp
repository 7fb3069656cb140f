#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "components/network/topology.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

// Every route leaves its source's injection port, crosses links that join up (a mesh link
// starts where the last one ended, a UCIe or inter-SIP link leaves the cube or SIP the walk is
// in), crosses as many UCIe links as the graph's shortest path has, and ends at the
// destination's ejection port. Checked where the exits from each cube are tabulated (small
// SIPs) and where they are worked out per packet (a SIP too large for the table).
void expect_connected_routes(const Topology& t, std::uint32_t stride) {
  const SystemConfig& c = t.config();
  ASSERT_EQ(c.ucie.topology, GraphKind::ring);
  const std::uint32_t pes = t.pes_per_cube(), per_sip = c.cubes_per_sip;
  // Connection j from cube `from` enters cube `to` on the node of to's own side toward `from`:
  // ucie_nodes[(rank * connections + j) % size], rank among to's neighbours in increasing order.
  const auto entry = [&](std::uint32_t to, std::uint32_t from, std::uint32_t j) {
    std::vector<std::uint32_t> near{(to + 1) % per_sip, (to + per_sip - 1) % per_sip};
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
    const auto rank =
        static_cast<std::uint32_t>(std::find(near.begin(), near.end(), from) - near.begin());
    const auto& nodes = c.cube.noc.ucie_nodes;
    return t.node(nodes[(rank * c.ucie.connections + j) % nodes.size()]);
  };
  for (std::uint32_t a = 0; a < t.total_pes(); a += stride)
    for (std::uint32_t b = 3; b < t.total_pes(); b += stride + 2) {
      const Route r = t.pe_to_pe(a, b);
      ASSERT_GE(r.links.size(), 2u);
      EXPECT_EQ(r.links.front(), t.inject_port(a));
      EXPECT_EQ(r.links.back(), t.eject_port(b));
      std::uint32_t cube = a / pes, node = t.node_of_pe(a % pes), ucie = 0;
      // The walk crosses a link only from the node it is on, and ends on the destination's.
      for (std::size_t i = 1; i + 1 < r.links.size(); ++i) {
        const Link& l = t.link(r.links[i]);
        if (l.kind == LinkKind::noc) {
          ASSERT_EQ(l.owner, cube) << "route " << a << " -> " << b << ", hop " << i;
          ASSERT_EQ(l.from, node) << "route " << a << " -> " << b << ", hop " << i;
          node = l.to;
        } else if (l.kind == LinkKind::ucie) {
          ASSERT_EQ(l.owner, cube / per_sip);
          ASSERT_EQ(l.from, cube % per_sip);
          cube = l.owner * per_sip + l.to;
          node = entry(l.to, l.from, l.connection);
          ++ucie;
        } else {
          ASSERT_EQ(l.kind, LinkKind::inter_sip);
          ASSERT_EQ(l.from, cube / per_sip);
          cube = l.to * per_sip + c.inter_sip.port_cube;
          const auto& ports = c.cube.noc.inter_sip_nodes;
          node = t.node(ports[l.connection % ports.size()]);
        }
      }
      EXPECT_EQ(cube, b / pes) << "route " << a << " -> " << b;
      EXPECT_EQ(node, t.node_of_pe(b % pes)) << "route " << a << " -> " << b;
      if (a / pes / per_sip == b / pes / per_sip) {
        EXPECT_EQ(ucie, t.cube_hops(0, a / pes % per_sip, b / pes % per_sip));
      }
    }
}

TEST(Topology, RoutesJoinUpWhereCubeExitsAreTabulated) {
  SystemConfig c = testing::small_config(3, 5, 4);
  c.ucie.connections = 2;
  c.cube.noc.ucie_nodes = {{3, 0}, {0, 3}, {3, 3}, {1, 2}};  // each side its own nodes
  expect_connected_routes(Topology(c), 7);
}

TEST(Topology, RoutesJoinUpWhereCubeExitsAreWorkedOutPerPacket) {
  // 64 cubes of 17 x 17 nodes: 64^2 x 289 exits, more than the table holds.
  SystemConfig c = testing::small_config(1, 64, 17);
  c.ucie.connections = 2;
  c.cube.noc.ucie_nodes = {{16, 0}, {0, 16}, {16, 16}, {5, 9}};
  expect_connected_routes(Topology(c), 1543);
}

TEST(Topology, XyRouteOnFourByFourMeshCostsSixHopsAndGoesXFirst) {
  const Topology t(testing::small_config(1, 1, 4));
  const Route r = t.pe_to_pe(0, 15);
  ASSERT_EQ(r.links.size(), 8u);  // inject + 6 mesh hops + eject
  EXPECT_EQ(t.link_name(r.links[1]), "sip0.cube0.noc.(0,0)->(1,0).east");
  EXPECT_EQ(t.link_name(r.links[3]), "sip0.cube0.noc.(2,0)->(3,0).east");
  EXPECT_EQ(t.link_name(r.links[4]), "sip0.cube0.noc.(3,0)->(3,1).south");
  EXPECT_EQ(t.link_name(r.links[7]), "sip0.cube0.pe15.eject");
}

TEST(Topology, RingOfCubesTakesTheShorterWayAndBreaksTiesTowardsTheLowerCube) {
  const Topology t(testing::small_config(1, 6));
  EXPECT_EQ(t.cube_hops(0, 0, 1), 1u);
  EXPECT_EQ(t.cube_hops(0, 0, 5), 1u);
  EXPECT_EQ(t.cube_hops(0, 1, 4), 3u);
  // 0 -> 3 is three hops either way: the tie goes through cube 1 (lower than 5).
  Route r;
  t.route_nodes(0, 0, 3, 0, r);
  std::vector<std::string> ucie;
  for (LinkId id : r.links)
    if (t.link(id).kind == LinkKind::ucie) ucie.push_back(t.link_name(id));
  EXPECT_EQ(ucie, (std::vector<std::string>{"sip0.ucie.cube0->cube1", "sip0.ucie.cube1->cube2",
                                            "sip0.ucie.cube2->cube3"}));
}

TEST(Topology, MeshAndAllToAllCubeTopologies) {
  SystemConfig c = testing::small_config(1, 6);
  c.ucie.topology = GraphKind::mesh;
  c.ucie.mesh_x = 3;
  c.ucie.mesh_y = 2;
  const Topology mesh(c);
  EXPECT_EQ(mesh.cube_hops(0, 0, 5), 3u);
  EXPECT_EQ(mesh.cube_hops(0, 1, 4), 1u);
  c.ucie.topology = GraphKind::all_to_all;
  const Topology full(c);
  for (std::uint32_t a = 0; a < 6; ++a)
    for (std::uint32_t b = 0; b < 6; ++b) EXPECT_EQ(full.cube_hops(0, a, b), a == b ? 0u : 1u);
}

TEST(Topology, InterSipRingAndAllToAll) {
  SystemConfig c = testing::small_config(5, 1);
  const Topology ring(c);
  EXPECT_EQ(ring.sip_hops(0, 2), 2u);
  EXPECT_EQ(ring.sip_hops(0, 3), 2u);
  EXPECT_EQ(ring.sip_hops(1, 4), 2u);
  c.inter_sip.topology = GraphKind::all_to_all;
  const Topology full(c);
  EXPECT_EQ(full.sip_hops(0, 3), 1u);
}

// Two UCIe connections between two cubes of a 4x4 mesh, on (3,0) and (3,2) of each. A packet leaves
// by the connection nearest where it is and enters the next cube on that connection's node of the
// other side.
TEST(Topology, SeveralUcieConnectionsPerSideEachTakenFromTheNearestNode) {
  SystemConfig c = testing::small_config(1, 2, 4);
  c.ucie.connections = 2;
  c.cube.noc.ucie_nodes = {{3, 0}, {3, 2}};
  const Topology t(c);
  std::uint32_t ucie_links = 0;
  for (const Link& l : t.links()) ucie_links += l.kind == LinkKind::ucie;
  EXPECT_EQ(ucie_links, 4u);  // two each way
  const auto ucie_of = [&](std::uint32_t src_node, std::uint32_t dst_node) {
    Route r;
    t.route_nodes(0, src_node, 1, dst_node, r);
    std::vector<std::string> names;
    for (LinkId id : r.links)
      if (t.link(id).kind == LinkKind::ucie) names.push_back(t.link_name(id));
    return std::pair{names, r.links.size()};
  };
  // From (0,0): (3,0) is 3 hops away, (3,2) 5: connection 0; then from (3,0) of cube 1 to (0,0).
  auto [names, hops] = ucie_of(0, 0);
  EXPECT_EQ(names, std::vector<std::string>{"sip0.ucie.cube0->cube1.c0"});
  EXPECT_EQ(hops, 3u + 1u + 3u);
  // From (1,3): (3,2) is 3 hops away, (3,0) 5: connection 1, entering cube 1 on (3,2).
  std::tie(names, hops) = ucie_of(13, 14);  // to (2,3)
  EXPECT_EQ(names, std::vector<std::string>{"sip0.ucie.cube0->cube1.c1"});
  EXPECT_EQ(hops, 3u + 1u + 2u);
  // A tie ((3,1) is one hop from both) goes to the lower-numbered connection.
  std::tie(names, hops) = ucie_of(7, 7);
  EXPECT_EQ(names, std::vector<std::string>{"sip0.ucie.cube0->cube1.c0"});
}

// Between SIPs a route takes connection (source node mod connections), on the port cube's node
// of that connection in both SIPs.
TEST(Topology, SeveralInterSipConnectionsChosenBySourceNode) {
  SystemConfig c = testing::small_config(2, 1, 4);
  c.inter_sip.connections = 2;
  c.cube.noc.inter_sip_nodes = {{0, 0}, {3, 3}};
  const Topology t(c);
  for (std::uint32_t src = 0; src < 16; ++src) {
    Route r;
    t.route_nodes(0, src, 1, 5, r);
    std::string via;
    for (LinkId id : r.links)
      if (t.link(id).kind == LinkKind::inter_sip) via = t.link_name(id);
    const std::uint32_t j = src % 2;
    EXPECT_EQ(via, "inter_sip.sip0->sip1.c" + std::to_string(j)) << src;
    const std::uint32_t port = j == 0 ? 0 : 15;
    EXPECT_EQ(r.links.size(), t.mesh_hops(src, port) + 1 + t.mesh_hops(port, 5)) << src;
  }
}

// Six SIPs on a 3x2 grid: SIP 5 sits at (2, 1), three hops from SIP 0 on a mesh and two on a
// torus (the row wraps from column 0 to column 2). A route crosses that many inter-SIP links.
TEST(Topology, InterSipMeshAndTorusOnTheSipGrid) {
  SystemConfig c = testing::small_config(6, 1);
  c.inter_sip.grid_x = 3;
  c.inter_sip.grid_y = 2;
  const auto crossings = [](const Topology& t, std::uint32_t a, std::uint32_t b) {
    Route r;
    t.route_nodes(a, 0, b, 0, r);
    std::vector<std::string> names;
    for (const LinkId id : r.links)
      if (t.link(id).kind == LinkKind::inter_sip) names.push_back(t.link_name(id));
    return names;
  };
  c.inter_sip.topology = GraphKind::mesh;
  const Topology mesh(c);
  EXPECT_EQ(mesh.sip_hops(0, 5), 3u);
  EXPECT_EQ(crossings(mesh, 0, 5),
            (std::vector<std::string>{"inter_sip.sip0->sip1", "inter_sip.sip1->sip2",
                                      "inter_sip.sip2->sip5"}));
  c.inter_sip.topology = GraphKind::torus;
  const Topology torus(c);
  EXPECT_EQ(torus.sip_hops(0, 5), 2u);
  EXPECT_EQ(crossings(torus, 0, 5),
            (std::vector<std::string>{"inter_sip.sip0->sip2", "inter_sip.sip2->sip5"}));
}

// The names of a route's links of one kind, and the sum of their hop latencies.
std::pair<std::vector<std::string>, Tick> links_of(const Topology& t, const Route& r,
                                                   LinkKind kind) {
  std::pair<std::vector<std::string>, Tick> out;
  for (std::size_t i = 0; i < r.links.size(); ++i)
    if (t.link(r.links[i]).kind == kind) {
      out.first.push_back(t.link_name(r.links[i]));
      out.second += r.latency[i];
    }
  return out;
}

// A UCIe switch: four cubes, two ports each on (3,0) and (3,2). Every cube pair is one crossing:
// up to the switch on the connection nearest the packet, down to the destination on the same
// connection, entering on that connection's node; the down link carries the crossbar's latency.
TEST(Topology, UcieSwitchCrossesUpAndDownOnTheNearestConnection) {
  SystemConfig c = testing::small_config(2, 4, 4);
  c.ucie.topology = GraphKind::switch_;
  c.ucie.connections = 2;
  c.ucie.latency = 10000;
  c.ucie.switch_latency = 3000;
  c.cube.noc.ucie_nodes = {{3, 0}, {3, 2}};
  const Topology t(c);
  std::uint32_t ucie_links = 0;
  for (const Link& l : t.links()) ucie_links += l.kind == LinkKind::ucie;
  EXPECT_EQ(ucie_links, 2u * 4u * 2u * 2u);  // SIPs x cubes x connections x (up, down)
  for (std::uint32_t sip = 0; sip < 2; ++sip)
    for (std::uint32_t a = 0; a < 4; ++a)
      for (std::uint32_t b = 0; b < 4; ++b) {
        if (a == b) continue;
        EXPECT_EQ(t.cube_hops(sip, a, b), 1u);
        for (const std::uint32_t src : {0u, 13u}) {  // (0,0) nearest (3,0); (1,3) nearest (3,2)
          const std::uint32_t j = src == 0 ? 0 : 1, port = j == 0 ? 3 : 11;
          Route r;
          t.route_nodes(sip * 4 + a, src, sip * 4 + b, 5, r);
          const auto [names, ucie_latency] = links_of(t, r, LinkKind::ucie);
          const std::string suffix = ".c" + std::to_string(j);
          const std::string s = "sip" + std::to_string(sip) + ".ucie.";
          EXPECT_EQ(names,
                    (std::vector<std::string>{s + "cube" + std::to_string(a) + "->switch" + suffix,
                                              s + "switch->cube" + std::to_string(b) + suffix}));
          EXPECT_EQ(ucie_latency, 2 * 10000 + 3000);
          EXPECT_EQ(r.links.size(), t.mesh_hops(src, port) + 2 + t.mesh_hops(port, 5));
          EXPECT_EQ(t.route_latency(sip * 4 + a, src, sip * 4 + b, 5),
                    Tick{t.mesh_hops(src, port) + t.mesh_hops(port, 5)} * c.cube.noc.hop_latency +
                        2 * 10000 + 3000);
        }
      }
}

// An inter-SIP switch: every SIP pair is one crossing, up from the source SIP's port and down to
// the destination's on the route's connection, with the crossbar's latency on the way down.
TEST(Topology, InterSipSwitchCrossesUpAndDown) {
  SystemConfig c = testing::small_config(5, 2, 4);
  c.inter_sip.topology = GraphKind::switch_;
  c.inter_sip.connections = 2;
  c.inter_sip.switch_latency = 7000;
  c.cube.noc.inter_sip_nodes = {{0, 0}, {3, 3}};
  const Topology t(c);
  std::uint32_t links = 0;
  for (const Link& l : t.links()) links += l.kind == LinkKind::inter_sip;
  EXPECT_EQ(links, 5u * 2u * 2u);
  for (std::uint32_t a = 0; a < 5; ++a)
    for (std::uint32_t b = 0; b < 5; ++b) {
      if (a == b) continue;
      EXPECT_EQ(t.sip_hops(a, b), 1u);
      for (const std::uint32_t src : {4u, 9u}) {
        Route r;
        t.route_nodes(a * 2 + 1, src, b * 2 + 1, 6, r);
        const auto [names, latency] = links_of(t, r, LinkKind::inter_sip);
        const std::string j = ".c" + std::to_string(src % 2);
        EXPECT_EQ(names,
                  (std::vector<std::string>{"inter_sip.sip" + std::to_string(a) + "->switch" + j,
                                            "inter_sip.switch->sip" + std::to_string(b) + j}));
        EXPECT_EQ(latency, 2 * c.inter_sip.latency + 7000);
      }
    }
}

// In-network reduction's ways: up to a switch from a PE, then down to another PE over the same
// connection, are a crossing between them cut at the switch (links and latencies alike), for a
// UCIe switch (cubes of a SIP, two connections) and an inter-SIP switch (port on cube 1).
TEST(Topology, WaysUpToASwitchAndDownAreACrossingCutInTwo) {
  SystemConfig c = testing::small_config(3, 4, 4);
  c.ucie.topology = GraphKind::switch_;
  c.ucie.connections = 2;
  c.ucie.latency = 10000;
  c.ucie.switch_latency = 3000;
  c.cube.noc.ucie_nodes = {{3, 0}, {3, 2}};
  c.inter_sip.topology = GraphKind::switch_;
  c.inter_sip.connections = 2;
  c.inter_sip.port_cube = 1;
  c.inter_sip.switch_latency = 7000;
  c.cube.noc.inter_sip_nodes = {{0, 0}, {3, 3}};
  const Topology t(c);
  const auto joined = [](Route up, const Route& down) {
    up.links.insert(up.links.end(), down.links.begin(), down.links.end());
    up.latency.insert(up.latency.end(), down.latency.begin(), down.latency.end());
    return up;
  };
  std::size_t checked = 0;
  for (std::uint32_t a = 0; a < t.total_pes(); a += 3)
    for (std::uint32_t b = 0; b < t.total_pes(); b += 5) {
      const std::uint32_t cube_a = a / 16, cube_b = b / 16;
      if (cube_a == cube_b) continue;
      const SwitchLevel level =
          cube_a / 4 == cube_b / 4 ? SwitchLevel::ucie : SwitchLevel::inter_sip;
      SCOPED_TRACE(t.link_name(t.inject_port(a)) + " to " + t.link_name(t.eject_port(b)));
      const std::uint32_t j = t.switch_connection(a, level);
      const Route up = t.pe_to_switch(a, level), down = t.switch_to_pe(level, j, b);
      const Route whole = t.pe_to_pe(a, b);
      const Route cut = joined(up, down);
      EXPECT_EQ(cut.links, whole.links);
      EXPECT_EQ(cut.latency, whole.latency);
      EXPECT_EQ(t.link(up.links.back()).kind,
                level == SwitchLevel::ucie ? LinkKind::ucie : LinkKind::inter_sip);
      EXPECT_THAT(t.link_name(up.links.back()), ::testing::HasSubstr("->switch"));
      EXPECT_THAT(t.link_name(down.links.front()), ::testing::HasSubstr("switch->"));
      ++checked;
    }
  EXPECT_GT(checked, 100u);
}

// route_latency walks the same route as route_nodes without recording it: equal sums for
// every pair of nodes, within a cube, across UCIe (a mesh of cubes) and across SIPs, with
// distinct NOC, UCIe and inter-SIP latencies so a wrong hop shows.
TEST(Topology, RouteLatencyIsTheSumOverTheRoutesHops) {
  SystemConfig c = testing::small_config(3, 4);
  c.ucie.topology = GraphKind::mesh;
  c.ucie.mesh_x = 2;
  c.ucie.mesh_y = 2;
  c.cube.noc.hop_latency = 700;
  c.ucie.latency = 5000;
  c.inter_sip.latency = 80000;
  const Topology t(c);
  std::size_t pairs = 0, between_sips = 0;
  for (std::uint32_t a = 0; a < t.cubes(); ++a)
    for (std::uint32_t na = 0; na < t.pes_per_cube(); na += 3)
      for (std::uint32_t b = 0; b < t.cubes(); ++b)
        for (std::uint32_t nb = 0; nb < t.pes_per_cube(); nb += 5) {
          Route r;
          t.route_nodes(a, na, b, nb, r);
          Tick sum = 0;
          for (const Tick lat : r.latency) sum += lat;
          ASSERT_EQ(t.route_latency(a, na, b, nb), sum)
              << a << ":" << na << " -> " << b << ":" << nb;
          ++pairs;
          if (a / 4 != b / 4) {
            ++between_sips;
            EXPECT_GE(sum, 80000);
          }
        }
  EXPECT_GT(between_sips, 100u);
  EXPECT_GT(pairs, between_sips);
}

}  // namespace
}  // namespace cubesim::components
