// The graphs that join cubes and SIPs: edges, hop counts and next hops of ring, mesh, torus and
// all-to-all, checked against a breadth-first search over the edges (the route rule: the
// lowest-numbered neighbour one step closer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

#include "components/topology/graph.hpp"

namespace cubesim::components {
namespace {

struct Shape {
  GraphKind kind;
  std::uint32_t n, x, y;
};

// Distances from every node to `dst` over the edges, and the rule's next hop.
void check_against_bfs(const Shape& s) {
  const Graph g(s.kind, s.n, s.x, s.y);
  std::vector<std::set<std::uint32_t>> adj(s.n);
  for (auto [a, b] : g.edges()) {
    ASSERT_LT(a, b);
    ASSERT_TRUE(adj[a].insert(b).second) << "edge " << a << "-" << b << " twice";
    adj[b].insert(a);
  }
  EXPECT_EQ(g.edges().size(), Graph::edge_count(s.kind, s.n, s.x, s.y));
  constexpr auto kFar = std::numeric_limits<std::uint32_t>::max();
  for (std::uint32_t dst = 0; dst < s.n; ++dst) {
    std::vector<std::uint32_t> dist(s.n, kFar);
    std::deque<std::uint32_t> q{dst};
    dist[dst] = 0;
    while (!q.empty()) {
      const std::uint32_t v = q.front();
      q.pop_front();
      for (const std::uint32_t w : adj[v])
        if (dist[w] == kFar) dist[w] = dist[v] + 1, q.push_back(w);
    }
    for (std::uint32_t src = 0; src < s.n; ++src) {
      ASSERT_EQ(g.hops(src, dst), dist[src]) << to_string(s.kind) << " " << src << "->" << dst;
      if (src == dst) continue;
      std::uint32_t next = kFar;
      for (const std::uint32_t w : adj[src])  // a set: in increasing order
        if (dist[w] + 1 == dist[src]) {
          next = w;
          break;
        }
      ASSERT_EQ(g.next_hop(src, dst), next) << to_string(s.kind) << " " << src << "->" << dst;
    }
  }
}

TEST(Graph, EveryKindRoutesAsABreadthFirstSearchWithTheLowestNumberedTieBreak) {
  for (std::uint32_t n : {1u, 2u, 3u, 4u, 5u, 8u, 9u}) {
    check_against_bfs({GraphKind::ring, n, 0, 0});
    check_against_bfs({GraphKind::all_to_all, n, 0, 0});
  }
  for (auto [x, y] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {1, 1}, {2, 1}, {1, 3}, {2, 2}, {3, 2}, {4, 2}, {3, 3}, {4, 4}, {5, 3}, {6, 4}}) {
    check_against_bfs({GraphKind::mesh, x * y, x, y});
    check_against_bfs({GraphKind::torus, x * y, x, y});
  }
}

// A 4x4 torus: every node has four neighbours, and the farthest is 2 + 2 hops away (a mesh:
// 3 + 3). Wrap edges appear only where a dimension has three nodes or more.
TEST(Graph, ATorusWrapsEachRowAndColumn) {
  const Graph torus(GraphKind::torus, 16, 4, 4);
  EXPECT_EQ(torus.edges().size(), 32u);
  EXPECT_EQ(torus.hops(0, 15), 2u);
  EXPECT_EQ(torus.next_hop(0, 3), 3u);  // west, around the row
  EXPECT_EQ(Graph(GraphKind::mesh, 16, 4, 4).hops(0, 15), 6u);
  EXPECT_EQ(Graph::edge_count(GraphKind::torus, 4, 2, 2), 4u);  // a 2x2 torus is a 2x2 mesh
  EXPECT_EQ(Graph::edge_count(GraphKind::torus, 3, 3, 1), 3u);  // a 3x1 torus is a ring of 3
}

TEST(Graph, NamesAndBadGrids) {
  EXPECT_THAT(graph_kinds().names(),
              ::testing::ElementsAre("ring", "mesh", "torus", "all_to_all", "switch"));
  for (const std::string& name : graph_kinds().names())
    EXPECT_EQ(to_string(graph_kinds().at(name)), name);
  try {
    (void)graph_kinds().at("hypercube", "system.ucie.topology");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("unknown topology 'hypercube' (system.ucie.topology)"));
    for (const std::string& name : graph_kinds().names())
      EXPECT_THAT(e.what(), ::testing::HasSubstr("'" + name + "'"));
  }
  EXPECT_THROW(Graph(GraphKind::mesh, 6, 4, 2), std::invalid_argument);
}

}  // namespace
}  // namespace cubesim::components
