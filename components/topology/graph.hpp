#pragma once
// The graphs that join cubes (UCIe links) and SIPs (inter-SIP links), chosen by name: ring, 2D
// mesh, 2D torus, all-to-all and switch. Routes are shortest paths; among the neighbours one step
// closer, the lowest-numbered is taken, so every route is fixed. A switch is a crossbar every node
// has a port on: each node is one hop from every other, a hop being the link up to the switch
// and the link down from it (the topology builds the two). Distances and next hops are
// computed, not tabled: a system may have thousands of SIPs.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "emu/name_table.hpp"

namespace cubesim::components {

enum class GraphKind : std::uint8_t { ring, mesh, torus, all_to_all, switch_ };

// The kinds by name (emu/name_table.hpp): system.ucie.topology's and system.inter_sip.topology's
// allowed values, in the order the spec reference lists them.
const emu::NameTable<GraphKind>& graph_kinds();
const std::string& to_string(GraphKind kind);
// Mesh and torus lay the nodes out on an x * y grid, node i at (i % x, i / x).
inline bool has_grid(GraphKind kind) {
  return kind == GraphKind::mesh || kind == GraphKind::torus;
}

class Graph {
 public:
  // n nodes; for a mesh or torus, grid_x * grid_y == n (std::invalid_argument otherwise).
  Graph(GraphKind kind, std::uint32_t n, std::uint32_t grid_x = 0, std::uint32_t grid_y = 0);

  GraphKind kind() const { return kind_; }
  std::uint32_t size() const { return n_; }
  // The grid of a mesh or torus (0 for other kinds).
  std::uint32_t grid_x() const { return x_; }
  std::uint32_t grid_y() const { return y_; }

  // Every undirected edge once, (a, b) with a < b, in a fixed order: a ring's (i, i + 1) then
  // (0, n - 1); a grid's nodes in order, each with its +x then its +y neighbour (wrapping on a
  // torus); all-to-all's pairs in order; none for a switch (its links are its ports).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges() const;
  // As edges().size(), without building them.
  static std::uint64_t edge_count(GraphKind kind, std::uint32_t n, std::uint32_t grid_x,
                                  std::uint32_t grid_y);

  std::uint32_t hops(std::uint32_t a, std::uint32_t b) const;
  // The most hops from `a` to any node, and between any two nodes.
  std::uint32_t eccentricity(std::uint32_t a) const;
  std::uint32_t diameter() const;
  // The nodes one link from `a`, in ascending order (what tl.ucie(k) / tl.inter_sip(k) index).
  std::vector<std::uint32_t> neighbours(std::uint32_t a) const;
  // The first node after a on the route to b (a != b).
  std::uint32_t next_hop(std::uint32_t a, std::uint32_t b) const;

 private:
  // Distance along one dimension of `size` nodes from p to q.
  std::uint32_t axis(std::uint32_t p, std::uint32_t q, std::uint32_t size, bool wraps) const;

  GraphKind kind_;
  std::uint32_t n_, x_, y_;  // x_, y_: the grid of a mesh or torus
};

}  // namespace cubesim::components
