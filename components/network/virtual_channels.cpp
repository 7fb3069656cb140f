#include "components/network/virtual_channels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cubesim::components {

namespace {

// The potentials of a ladder, lowest class first, for the routes Graph::next_hop takes.
std::vector<std::vector<std::int64_t>> potentials(const Graph& g) {
  const std::int64_t n = g.size();
  std::vector<std::vector<std::int64_t>> p;
  const auto add = [&](auto f) {
    std::vector<std::int64_t>& v = p.emplace_back(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = f(i);
  };
  switch (g.kind()) {
    case GraphKind::switch_:  // never asked: ClassLadder gives a switch one class
      break;
    case GraphKind::all_to_all:  // one hop: up the index, or down it
      add([](std::int64_t i) { return i; });
      add([](std::int64_t i) { return -i; });
      break;
    case GraphKind::ring:  // up the index, down it, then on from the dateline at node 0
      add([](std::int64_t i) { return i; });
      add([](std::int64_t i) { return -i; });
      add([n](std::int64_t i) { return std::min(i, n - i); });
      break;
    case GraphKind::mesh:
    case GraphKind::torus: {
      // Among the nodes one step closer, next_hop takes the lowest-numbered: a route goes down
      // in y (to lower rows) before it moves in x and up in y after, so its turns split into
      // two sets that each climb one potential: down in y or up in x; down in x or up in y.
      const std::int64_t gx = g.grid_x(), gy = g.grid_y();
      const auto x = [gx](std::int64_t i) { return i % gx; };
      const auto y = [gx](std::int64_t i) { return i / gx; };
      add([=](std::int64_t i) { return (gy - 1 - y(i)) * gx + x(i); });
      add([=](std::int64_t i) { return y(i) * gx + (gx - 1 - x(i)); });
      if (g.kind() == GraphKind::torus) {
        // After a wrap link a route moves away from it: first in x (rising in y after), then
        // in y alone.
        const auto rx = [=](std::int64_t i) { return std::min(x(i), gx - x(i)); };
        const auto ry = [=](std::int64_t i) { return std::min(y(i), gy - y(i)); };
        add([=](std::int64_t i) { return rx(i) * gy + y(i); });
        add([=](std::int64_t i) { return ry(i) * gx + rx(i); });
      }
      break;
    }
  }
  return p;
}

// Graphs up to this many nodes have the classes their routes use counted (every route walked);
// larger ones take the whole ladder.
constexpr std::uint32_t kCountedNodes = 128;

}  // namespace

ClassLadder::ClassLadder(const Graph& g, bool bounded) {
  // Through a switch every route is the link up to it and a link down from it: a wait for a
  // down link never waits on an up link, so one class has no cycle.
  if (!bounded || g.size() < 2 || g.kind() == GraphKind::switch_) return;
  nodes_ = g.size();
  const auto p = potentials(g);
  classes_ = static_cast<std::uint32_t>(p.size());
  for (const auto& v : p) potential_.insert(potential_.end(), v.begin(), v.end());
  used_ = classes_;
  if (nodes_ > kCountedNodes) return;
  std::vector<std::uint32_t> hops(std::size_t{nodes_} * nodes_, 0);
  std::uint32_t most = 0;
  for (std::uint32_t a = 0; a < nodes_; ++a)
    for (std::uint32_t b = 0; b < nodes_; ++b) {
      if (a == b) continue;
      std::uint32_t u = a, v = g.next_hop(a, b);
      std::uint32_t cls = enter(u, v);
      hops[std::size_t{u} * nodes_ + v] |= 1u << cls;
      while (v != b) {
        u = v;
        v = g.next_hop(u, b);
        cls = climb(cls, u, v);
        hops[std::size_t{u} * nodes_ + v] |= 1u << cls;
      }
      most = std::max(most, cls);
    }
  used_ = most + 1;
  hops_ = std::move(hops);
}

std::uint32_t ClassLadder::rise(std::uint32_t from, std::uint32_t u, std::uint32_t v) const {
  for (std::uint32_t c = from; c < classes_; ++c)
    if (potential(c, v) > potential(c, u)) return c;
  return from;
}

std::uint32_t ClassLadder::enter(std::uint32_t u, std::uint32_t v) const {
  if (potential_.empty()) return 0;
  return rise(0, u, v);
}

std::uint32_t ClassLadder::climb(std::uint32_t cls, std::uint32_t u, std::uint32_t v) const {
  if (potential_.empty() || potential(cls, v) > potential(cls, u)) return cls;
  if (cls + 1 >= classes_)
    throw std::logic_error("ClassLadder: a route over " + std::to_string(nodes_) +
                           " nodes needs more classes than its ladder has");
  return rise(cls + 1, u, v);
}

VcPlan VcPlan::of(const SystemConfig& c) {
  VcPlan p;
  const bool ucie = c.ucie.buffers.bounded(), inter_sip = c.inter_sip.buffers.bounded();
  if (!ucie && !inter_sip) return p;  // every wait ends in its own cube: one class
  const Graph cubes(c.ucie.topology, c.cubes_per_sip, c.ucie.mesh_x, c.ucie.mesh_y);
  p.cubes_ = ClassLadder(cubes, ucie);
  const std::uint32_t kc = p.cubes_.size();
  p.separate_ = inter_sip && c.sips > 1;
  if (p.separate_) {
    p.sips_ = ClassLadder(
        Graph(c.inter_sip.topology, c.sips, c.inter_sip.grid_x, c.inter_sip.grid_y), true);
    p.middle_base_ = kc;
    p.last_base_ = kc + p.sips_.size();
    p.classes_ = p.last_base_ + kc;
  } else {
    p.classes_ = kc;
  }
  p.most_[static_cast<std::size_t>(BufferKind::router)] = p.separate_ ? 2 * kc : kc;
  p.most_[static_cast<std::size_t>(BufferKind::inter_sip)] = p.separate_ ? p.sips_.size() + 1 : 1;
  std::uint32_t most = 1;
  Link hop;
  hop.kind = LinkKind::ucie;
  for (hop.from = 0; hop.from < cubes.size(); ++hop.from)
    for (const std::uint32_t v : cubes.neighbours(hop.from)) {
      hop.to = v;
      most = std::max(most, static_cast<std::uint32_t>(__builtin_popcount(p.holds(hop))));
    }
  p.most_[static_cast<std::size_t>(BufferKind::ucie)] = most;
  return p;
}

std::uint32_t VcPlan::holds(const Link& link) const {
  const std::uint32_t kc = cubes_.size();
  const std::uint32_t first = (1u << kc) - 1;  // the first phase's classes
  switch (buffer_kind(link.kind)) {
    case BufferKind::router:
      return separate_ ? first | first << last_base_ : first;
    case BufferKind::ucie: {
      const std::uint32_t hop = cubes_.hop_classes(link.from, link.to);
      return separate_ ? hop | hop << last_base_ : hop;
    }
    case BufferKind::inter_sip:
      return separate_ ? ((1u << sips_.size()) - 1) << middle_base_ | 1u << last_base_
                       : 1u << last_base_;
  }
  return first;
}

}  // namespace cubesim::components
