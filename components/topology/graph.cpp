#include "components/topology/graph.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cubesim::components {

const emu::NameTable<GraphKind>& graph_kinds() {
  static const emu::NameTable<GraphKind> table(
      "topology", {{"ring", GraphKind::ring, "each node joined to the next, the last to the first"},
                   {"mesh", GraphKind::mesh, "a 2D grid"},
                   {"torus", GraphKind::torus, "a 2D grid whose rows and columns wrap"},
                   {"all_to_all", GraphKind::all_to_all, "a link between every two nodes"},
                   {"switch", GraphKind::switch_,
                    "a crossbar with a port per node: every node one crossing from every other"}});
  return table;
}

const std::string& to_string(GraphKind kind) {
  return graph_kinds().name_of(kind);
}

Graph::Graph(GraphKind kind, std::uint32_t n, std::uint32_t grid_x, std::uint32_t grid_y)
    : kind_(kind), n_(n), x_(grid_x), y_(grid_y) {
  if (has_grid(kind) && std::uint64_t{grid_x} * grid_y != n)
    throw std::invalid_argument("Graph: a " + std::string(to_string(kind)) +
                                " needs grid_x * grid_y == n");
}

std::uint64_t Graph::edge_count(GraphKind kind, std::uint32_t n, std::uint32_t x, std::uint32_t y) {
  const auto along = [](std::uint64_t size, bool wraps) -> std::uint64_t {
    return size < 2 ? 0 : size - 1 + (wraps && size > 2 ? 1 : 0);  // edges of one line
  };
  switch (kind) {
    case GraphKind::ring:
      return along(n, true);
    case GraphKind::mesh:
    case GraphKind::torus:
      return along(x, kind == GraphKind::torus) * y + along(y, kind == GraphKind::torus) * x;
    case GraphKind::all_to_all:
      return std::uint64_t{n} * (n - (n > 0 ? 1 : 0)) / 2;
    case GraphKind::switch_:
      return 0;
  }
  return 0;
}

std::vector<std::uint32_t> Graph::neighbours(std::uint32_t a) const {
  std::vector<std::uint32_t> v;
  switch (kind_) {
    case GraphKind::ring:
      if (n_ > 1) v = {(a + 1) % n_, (a + n_ - 1) % n_};
      break;
    case GraphKind::mesh:
    case GraphKind::torus: {
      const bool wraps = kind_ == GraphKind::torus;
      const std::uint32_t x = a % x_, y = a / x_;
      const auto along = [&](std::uint32_t p, std::uint32_t size, auto at) {
        if (p + 1 < size)
          v.push_back(at(p + 1));
        else if (wraps && size > 1)
          v.push_back(at(0));
        if (p > 0)
          v.push_back(at(p - 1));
        else if (wraps && size > 1)
          v.push_back(at(size - 1));
      };
      along(x, x_, [&](std::uint32_t q) { return y * x_ + q; });
      along(y, y_, [&](std::uint32_t q) { return q * x_ + x; });
      break;
    }
    case GraphKind::all_to_all:
    case GraphKind::switch_:
      for (std::uint32_t b = 0; b < n_; ++b)
        if (b != a) v.push_back(b);
      break;
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::erase(v, a);
  return v;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> Graph::edges() const {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> e;
  const auto add = [&e](std::uint32_t a, std::uint32_t b) {
    e.emplace_back(std::min(a, b), std::max(a, b));
  };
  switch (kind_) {
    case GraphKind::ring:
      for (std::uint32_t c = 0; c + 1 < n_; ++c) add(c, c + 1);
      if (n_ > 2) add(0, n_ - 1);
      break;
    case GraphKind::mesh:
    case GraphKind::torus: {
      const bool wraps = kind_ == GraphKind::torus;
      for (std::uint32_t c = 0; c < n_; ++c) {
        const std::uint32_t x = c % x_, y = c / x_;
        if (x + 1 < x_)
          add(c, c + 1);
        else if (wraps && x_ > 2)
          add(c, c - x);  // the wrap to column 0
        if (y + 1 < y_)
          add(c, c + x_);
        else if (wraps && y_ > 2)
          add(c, x);  // the wrap to row 0
      }
      break;
    }
    case GraphKind::all_to_all:
      for (std::uint32_t a = 0; a < n_; ++a)
        for (std::uint32_t b = a + 1; b < n_; ++b) add(a, b);
      break;
    case GraphKind::switch_:
      break;
  }
  return e;
}

std::uint32_t Graph::axis(std::uint32_t p, std::uint32_t q, std::uint32_t size, bool wraps) const {
  const std::uint32_t d = p > q ? p - q : q - p;
  return wraps ? std::min(d, size - d) : d;
}

std::uint32_t Graph::hops(std::uint32_t a, std::uint32_t b) const {
  if (a == b) return 0;
  switch (kind_) {
    case GraphKind::ring:
      return axis(a, b, n_, true);
    case GraphKind::all_to_all:
    case GraphKind::switch_:
      return 1;
    case GraphKind::mesh:
    case GraphKind::torus: {
      const bool wraps = kind_ == GraphKind::torus;
      return axis(a % x_, b % x_, x_, wraps) + axis(a / x_, b / x_, y_, wraps);
    }
  }
  return 0;
}

std::uint32_t Graph::eccentricity(std::uint32_t a) const {
  std::uint32_t most = 0;
  for (std::uint32_t b = 0; b < n_; ++b) most = std::max(most, hops(a, b));
  return most;
}

std::uint32_t Graph::diameter() const {
  if (n_ < 2) return 0;
  switch (kind_) {
    case GraphKind::ring:
      return n_ / 2;
    case GraphKind::all_to_all:
    case GraphKind::switch_:
      return 1;
    case GraphKind::mesh:
      return (x_ - 1) + (y_ - 1);
    case GraphKind::torus:
      return x_ / 2 + y_ / 2;
  }
  return 0;
}

std::uint32_t Graph::next_hop(std::uint32_t a, std::uint32_t b) const {
  if (kind_ == GraphKind::all_to_all || kind_ == GraphKind::switch_) return b;
  // The neighbours of a, and of those one step closer to b the lowest-numbered.
  std::uint32_t candidates[4];
  std::uint32_t count = 0;
  const auto offer = [&](std::uint32_t v) {
    if (v != a) candidates[count++] = v;
  };
  if (kind_ == GraphKind::ring) {
    offer((a + 1) % n_);
    offer((a + n_ - 1) % n_);
  } else {
    const bool wraps = kind_ == GraphKind::torus;
    const std::uint32_t x = a % x_, y = a / x_;
    if (x + 1 < x_ || wraps) offer(y * x_ + (x + 1) % x_);
    if (x > 0 || wraps) offer(y * x_ + (x + x_ - 1) % x_);
    if (y + 1 < y_ || wraps) offer((y + 1) % y_ * x_ + x);
    if (y > 0 || wraps) offer((y + y_ - 1) % y_ * x_ + x);
  }
  const std::uint32_t want = hops(a, b) - 1;
  std::uint32_t best = n_;
  for (std::uint32_t i = 0; i < count; ++i)
    if (candidates[i] < best && hops(candidates[i], b) == want) best = candidates[i];
  return best;
}

}  // namespace cubesim::components
