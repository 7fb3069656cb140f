// Virtual-channel classes (VcPlan, ClassLadder): the channel dependency graph of the routes has
// no cycle, for every pair of topologies (between cubes, between SIPs), and the classes it takes
// do not grow with the system.
//
// The graph: a vertex per bounded input buffer and channel group (the channels one class takes
// there); an edge from the buffer a packet holds to the one beyond its next link, with its class
// there, for every hop of every route (PE to PE, PE to HBM, HBM to PE). A cycle would let
// credit flow control deadlock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "components/network/topology.hpp"
#include "components/network/virtual_channels.hpp"
#include "components/topology/graph.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

constexpr GraphKind kKinds[] = {GraphKind::ring, GraphKind::mesh, GraphKind::torus,
                                GraphKind::all_to_all};

// A grid for n nodes: the squarest x * y == n with x >= y.
std::pair<std::uint32_t, std::uint32_t> grid_of(std::uint32_t n) {
  std::uint32_t y = 1;
  for (std::uint32_t d = 1; d * d <= n; ++d)
    if (n % d == 0) y = d;
  return {n / y, y};
}

// Whether the directed graph on `n` vertices has a cycle (Kahn's algorithm).
bool has_cycle(std::size_t n, std::vector<std::pair<std::uint32_t, std::uint32_t>> edges) {
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<std::uint32_t> in(n, 0), first(n + 1, 0);
  for (const auto& [a, b] : edges) ++in[b], ++first[a + 1];
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::uint32_t> ready;
  for (std::uint32_t v = 0; v < n; ++v)
    if (in[v] == 0) ready.push_back(v);
  std::size_t seen = 0;
  while (!ready.empty()) {
    const std::uint32_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (std::uint32_t e = first[v]; e < first[v + 1]; ++e)
      if (--in[edges[e].second] == 0) ready.push_back(edges[e].second);
  }
  return seen != n;
}

// A system of 2x2-node cubes whose every buffer is bounded. The UCIe connections sit on two
// corners and the inter-SIP port and the HBM controller on the other two, so packets cross the
// mesh between where they enter a cube and where they leave it, and a packet that entered on
// one corner shares mesh links with packets leaving by the other (the case that joins every
// link into a cube to every link out of it).
SystemConfig bounded_system(GraphKind cubes_kind, std::uint32_t cubes, GraphKind sips_kind,
                            std::uint32_t sips, std::uint32_t connections = 2) {
  SystemConfig c = testing::small_config(sips, cubes, 2);
  c.cube.noc.ucie_nodes = {{1, 0}, {0, 1}};
  c.cube.noc.inter_sip_nodes = {{1, 1}, {0, 0}};
  c.cube.noc.hbm_nodes = {{0, 0}, {1, 1}};
  c.cube.hbm.channels = 2;
  c.ucie.topology = cubes_kind;
  c.ucie.connections = connections;
  std::tie(c.ucie.mesh_x, c.ucie.mesh_y) =
      has_grid(cubes_kind) ? grid_of(cubes) : std::pair<std::uint32_t, std::uint32_t>{0, 0};
  c.inter_sip.topology = sips_kind;
  c.inter_sip.connections = 2;
  std::tie(c.inter_sip.grid_x, c.inter_sip.grid_y) =
      has_grid(sips_kind) ? grid_of(sips) : std::pair<std::uint32_t, std::uint32_t>{0, 0};
  const VcPlan plan = VcPlan::of([&] {
    SystemConfig k = c;
    k.ucie.buffers.input_buffer_bytes = k.inter_sip.buffers.input_buffer_bytes = 1;
    return k;
  }());
  const auto buffers = [&](BufferConfig& b, BufferKind kind) {
    b.virtual_channels = plan.classes(kind);
    b.input_buffer_bytes = std::uint64_t{4096} * b.virtual_channels;
  };
  buffers(c.cube.noc.router, BufferKind::router);
  buffers(c.ucie.buffers, BufferKind::ucie);
  buffers(c.inter_sip.buffers, BufferKind::inter_sip);
  return c;
}

// The channel dependency graph of every route of `c`, walked as the packet model walks them
// (Topology's cursor, VcPlan::after at each link between cubes or SIPs); true when it has a
// cycle. `vertices` gets its size.
bool routes_have_a_cycle(const SystemConfig& c, std::size_t* vertices = nullptr) {
  const Topology t(c);
  const VcPlan plan = VcPlan::of(c);
  const std::uint32_t groups =
      std::max({plan.classes(BufferKind::router), plan.classes(BufferKind::ucie),
                plan.classes(BufferKind::inter_sip)});
  const auto group = [&](const Link& l, std::uint32_t cls) {
    const std::uint32_t mask = plan.holds(l);
    EXPECT_NE(mask >> cls & 1, 0u)
        << t.link_name(static_cast<LinkId>(&l - t.links().data())) << " holds no class " << cls;
    return VcPlan::group(mask, cls);
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  const auto walk = [&](RouteCursor r) {
    const std::uint32_t dst_sip = r.dst_cube / c.cubes_per_sip;
    std::uint32_t cls = 0, held = ~0u;
    for (;;) {
      const Link& l = t.link(r.link);
      if (joins_cubes(l.kind)) cls = plan.after(cls, l, l.to == dst_sip);
      if (r.last) return;  // into a sink: an ejection port or an HBM channel written to
      const std::uint32_t v = r.link * groups + group(l, cls);
      if (held != ~0u) edges.emplace_back(held, v);
      held = v;
      t.next(r);
    }
  };
  const std::uint32_t pes = t.total_pes(), cubes = t.cubes(), channels = c.cube.hbm.channels;
  for (std::uint32_t a = 0; a < pes; ++a) {
    for (std::uint32_t b = 0; b < pes; ++b)
      if (a != b) walk(t.start_pe_to_pe(a, b));
    for (std::uint32_t cube = 0; cube < cubes; ++cube)
      for (std::uint32_t ch = 0; ch < channels; ++ch) {
        walk(t.start_pe_to_memory(a, cube, ch));
        walk(t.start_memory_to_pe(cube, ch, a));
      }
  }
  const std::size_t n = t.links().size() * groups;
  if (vertices != nullptr) *vertices = n;
  return has_cycle(n, std::move(edges));
}

TEST(VirtualChannels, TheRoutesOfEveryTopologyPairHaveNoDependencyCycle) {
  // Every pair of kinds, on sizes where the wraps, the datelines and the turns all occur, with
  // one connection per neighbour (a cube's neighbours on different nodes) and three (parallel
  // links on both); the largest, 4 SIPs of 16 cubes, has 256 PEs and 74,000 routes.
  for (const GraphKind cubes_kind : kKinds)
    for (const GraphKind sips_kind : kKinds)
      for (const std::uint32_t cubes : {1u, 2u, 3u, 4u, 5u, 6u, 8u, 9u, 16u})
        for (const std::uint32_t sips : {1u, 2u, 3u, 4u, 5u, 6u, 9u}) {
          const std::uint64_t pes = std::uint64_t{cubes} * sips * 4;
          if (pes > (sips <= 4 || cubes <= 4 ? 256u : 128u)) continue;
          for (const std::uint32_t connections : {1u, 3u}) {
            const SystemConfig c = bounded_system(cubes_kind, cubes, sips_kind, sips, connections);
            EXPECT_FALSE(routes_have_a_cycle(c))
                << to_string(cubes_kind) << " of " << cubes << " cubes, " << to_string(sips_kind)
                << " of " << sips << " SIPs, " << connections << " connections";
          }
        }
  for (const GraphKind kind : kKinds)
    EXPECT_FALSE(routes_have_a_cycle(bounded_system(kind, 16, kind, 4, 3))) << to_string(kind);
}

// The channel dependency graph of `c`'s routes between PEs with every packet in one class.
bool one_class_has_a_cycle(const SystemConfig& c) {
  const Topology t(c);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (std::uint32_t a = 0; a < t.total_pes(); ++a)
    for (std::uint32_t b = 0; b < t.total_pes(); ++b) {
      if (a == b) continue;
      RouteCursor r = t.start_pe_to_pe(a, b);
      std::uint32_t held = ~0u;
      while (!r.last) {
        if (held != ~0u) edges.emplace_back(held, r.link);
        held = r.link;
        t.next(r);
      }
    }
  return has_cycle(t.links().size(), std::move(edges));
}

TEST(VirtualChannels, OneClassForAllWouldDeadlock) {
  // The check can fail: with one class, the routes around a ring of cubes chain into a cycle,
  // and so do those of a mesh or all-to-all of cubes, whose routes alone would not, through the
  // mesh links of the cubes they cross (when a cube's neighbours attach on different nodes).
  EXPECT_TRUE(one_class_has_a_cycle(bounded_system(GraphKind::ring, 5, GraphKind::ring, 1)));
  EXPECT_TRUE(one_class_has_a_cycle(bounded_system(GraphKind::mesh, 4, GraphKind::ring, 1, 1)));
  EXPECT_TRUE(
      one_class_has_a_cycle(bounded_system(GraphKind::all_to_all, 4, GraphKind::ring, 1, 3)));
  // With every neighbour's connections on the same nodes, packets leave a cube where they
  // entered it and the mesh joins nothing: a mesh of cubes alone then has no cycle.
  EXPECT_FALSE(one_class_has_a_cycle(bounded_system(GraphKind::mesh, 4, GraphKind::ring, 1, 2)));
}

// Each class of a ladder: the hops a route makes without leaving it, as edges between nodes;
// they must climb (no cycle), and no route may run off the ladder.
void expect_ladder_acyclic(const Graph& g) {
  const ClassLadder ladder(g, true);
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> stays(ladder.size() + 1);
  std::uint32_t most = 0;
  for (std::uint32_t a = 0; a < g.size(); ++a)
    for (std::uint32_t b = 0; b < g.size(); ++b) {
      if (a == b) continue;
      std::uint32_t u = a, v = g.next_hop(a, b);
      std::uint32_t cls = ladder.enter(u, v);
      while (v != b) {
        u = v;
        v = g.next_hop(u, b);
        const std::uint32_t next = ladder.climb(cls, u, v);
        if (next == cls) stays[cls].emplace_back(u, v);
        cls = next;
      }
      most = std::max(most, cls);
    }
  EXPECT_LT(most, ladder.size());
  for (std::uint32_t k = 0; k < ladder.size(); ++k)
    EXPECT_FALSE(has_cycle(g.size(), stays[k])) << "class " << k;
}

TEST(VirtualChannels, EveryLadderClimbsOnGraphsUpTo64Nodes) {
  // Between cubes (1-16) and between SIPs (1-64): every size, every grid shape.
  for (const GraphKind kind : kKinds)
    for (std::uint32_t n = 1; n <= 64; ++n) {
      if (!has_grid(kind)) {
        SCOPED_TRACE(std::string(to_string(kind)) + " of " + std::to_string(n));
        expect_ladder_acyclic(Graph(kind, n));
        continue;
      }
      for (std::uint32_t x = 1; x <= n; ++x) {
        if (n % x != 0) continue;
        SCOPED_TRACE(std::string(to_string(kind)) + " " + std::to_string(x) + "x" +
                     std::to_string(n / x));
        expect_ladder_acyclic(Graph(kind, n, x, n / x));
      }
    }
  // Larger graphs take the whole ladder unwalked (VcPlan sizes the buffers by it); their routes
  // keep the same shape, so the ladder still suffices.
  expect_ladder_acyclic(Graph(GraphKind::ring, 257));
  expect_ladder_acyclic(Graph(GraphKind::torus, 256, 16, 16));
  expect_ladder_acyclic(Graph(GraphKind::torus, 256, 32, 8));
  expect_ladder_acyclic(Graph(GraphKind::torus, 255, 5, 51));
  expect_ladder_acyclic(Graph(GraphKind::mesh, 256, 8, 32));
}

TEST(VirtualChannels, TheClassesAreBoundedWhateverTheSize) {
  // Between cubes and SIPs alike: all-to-all 2, mesh 2, ring 3, torus 4, for 1-64 SIPs and
  // 1-16 cubes; the router buffers hold the first and last phases' classes (twice the cubes'
  // ladder when inter-SIP buffers are bounded, else once).
  const std::uint32_t ladder[] = {3, 2, 4, 2};
  for (std::size_t i = 0; i < 4; ++i)
    for (const std::uint32_t sips : {2u, 4u, 16u, 64u})
      for (const std::uint32_t cubes : {4u, 9u, 16u}) {
        SystemConfig c = bounded_system(kKinds[i], cubes, kKinds[i], sips);
        EXPECT_LE(VcPlan::of(c).classes(BufferKind::router), 2 * ladder[i]);
        EXPECT_LE(VcPlan::of(c).classes(BufferKind::inter_sip), ladder[i] + 1);
        c.inter_sip.buffers.input_buffer_bytes = 0;
        EXPECT_LE(VcPlan::of(c).classes(BufferKind::router), ladder[i]);
      }
}

}  // namespace
}  // namespace cubesim::components
