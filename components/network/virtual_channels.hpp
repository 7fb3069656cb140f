#pragma once
// Virtual-channel classes: which channels of a bounded input buffer a packet may take, so that
// credit flow control can never deadlock, with a number of classes that does not grow with the
// system.
//
// Contract. A packet waits only for room in the buffer beyond its next link; the waits of all
// packets must form no cycle. In one cube, XY routing orders the mesh links, so the router
// buffers of one cube and one class form no cycle by themselves. Between cubes they can: a
// packet that entered a cube over one UCIe link shares the cube's mesh buffers with packets
// about to leave over any other, so in one class a cube joins every link into it to every link
// out of it (even the reverse of the one it came in by, when the connections sit on different
// nodes). A class is therefore safe when the hops between cubes made within it all climb one
// potential, a number per cube: then no chain of its waits comes back to a cube it left.
//
// A route has up to three phases, each over one graph (components/topology/graph.hpp): UCIe
// hops to the inter-SIP port cube (or to the destination, in the same SIP), inter-SIP hops
// between the SIPs' port cubes, UCIe hops from the port cube to the destination. Each phase has
// a ladder of classes, one potential each, fixed by the graph's kind (rings: up the index, down
// it, away from cube 0, the dateline; 2D meshes: the two halves of the turns the routes take;
// tori: those two, then away from the wrap links in x, then in y; all-to-all: up and down).
// A packet starts a phase on the ladder's lowest class whose potential its first hop climbs and
// stays on a class while its hops climb that class's potential, else moves up to the lowest
// class whose potential the hop climbs. Classes only rise along a route and every hop made
// within a class climbs its potential, so the waits have no cycle; the ladder's length bounds
// the classes whatever the graph's size (virtual_channels.cpp; the channel-dependency test in
// tests/components/test_virtual_channels.cpp checks every topology pair).
//
// The phases take disjoint classes in order (to the port, between SIPs, from the port) when the
// inter-SIP buffers are bounded: a cycle through several SIPs then has to rise through all
// three. When they are unbounded, a packet waiting for an inter-SIP link is always let through,
// no wait crosses SIPs, and the last phase reuses the first's classes. One class is enough when
// the UCIe and inter-SIP buffers are both unbounded: every wait then ends in its own cube.
// Router buffers hold the classes of the first and last phases, inter-SIP buffers those of the
// middle one and the class a packet enters its destination SIP in, and a UCIe buffer the classes
// of the first and last phases that a hop over its link can leave a packet in (on a ring, those
// of one direction).
//
// A class's channels are a contiguous share of the buffer's (virtual_channels / the classes it
// holds each, the first classes taking one more when they do not divide).

#include <cstdint>
#include <vector>

#include "components/network/link.hpp"
#include "components/system_config.hpp"
#include "components/topology/graph.hpp"

namespace cubesim::components {

// The classes of one phase over one graph: one potential per class, a value per node.
class ClassLadder {
 public:
  ClassLadder() = default;
  // The ladder for routes over `g`; with `bounded` false (the links of the phase never hold a
  // packet back), one class that every hop stays in.
  ClassLadder(const Graph& g, bool bounded);

  // The classes the routes over the graph use (at least 1).
  std::uint32_t size() const { return used_; }
  // The classes a hop from u to a neighbour v can leave a packet in, as a bit mask.
  std::uint32_t hop_classes(std::uint32_t u, std::uint32_t v) const {
    return hops_.empty() ? (1u << used_) - 1 : hops_[std::size_t{u} * nodes_ + v];
  }
  // The class after a hop from node u to node v made in class `cls`.
  std::uint32_t climb(std::uint32_t cls, std::uint32_t u, std::uint32_t v) const;
  // The class after a first hop from u to v.
  std::uint32_t enter(std::uint32_t u, std::uint32_t v) const;

 private:
  std::int64_t potential(std::uint32_t cls, std::uint32_t node) const {
    return potential_[std::size_t{cls} * nodes_ + node];
  }
  std::uint32_t rise(std::uint32_t from, std::uint32_t u, std::uint32_t v) const;

  std::uint32_t classes_ = 1, used_ = 1, nodes_ = 0;
  std::vector<std::int64_t> potential_;  // [class * nodes + node]
  std::vector<std::uint32_t> hops_;      // [u * nodes + v]: hop_classes, where counted
};

// The three kinds of bounded buffer.
enum class BufferKind : std::uint8_t { router, ucie, inter_sip };
inline BufferKind buffer_kind(LinkKind link) {
  return link == LinkKind::ucie        ? BufferKind::ucie
         : link == LinkKind::inter_sip ? BufferKind::inter_sip
                                       : BufferKind::router;
}

class VcPlan {
 public:
  static VcPlan of(const SystemConfig& c);

  // Every class a packet can be in; a packet starts in class 0.
  std::uint32_t classes() const { return classes_; }
  // The classes the buffer beyond `link` can hold, as a bit mask (bit k: class k).
  std::uint32_t holds(const Link& link) const;
  // The most classes a buffer of this kind holds (at least 1): the channels it needs.
  std::uint32_t classes(BufferKind kind) const { return most_[static_cast<std::size_t>(kind)]; }
  // Where class `cls` is among the classes of `mask`: the channel group it takes there.
  static std::uint32_t group(std::uint32_t mask, std::uint32_t cls) {
    return static_cast<std::uint32_t>(__builtin_popcount(mask & ((1u << cls) - 1)));
  }
  // The classes of each phase's ladder (0 for the middle phase when its classes are not
  // separate), for messages.
  std::uint32_t cube_classes() const { return cubes_.size(); }
  std::uint32_t sip_classes() const { return separate_ ? sips_.size() : 0; }

  // The class of a packet in class `cls` after it crosses `link` (a UCIe or inter-SIP link);
  // `into_destination_sip`: the link ends in the SIP the packet is bound for.
  std::uint32_t after(std::uint32_t cls, const Link& link, bool into_destination_sip) const {
    if (link.kind == LinkKind::ucie) {
      const std::uint32_t base = cls >= last_base_ ? last_base_ : 0;
      return base + cubes_.climb(cls - base, link.from, link.to);
    }
    if (into_destination_sip || !separate_) return last_base_;
    if (cls >= middle_base_ && cls < last_base_)
      return middle_base_ + sips_.climb(cls - middle_base_, link.from, link.to);
    return middle_base_ + sips_.enter(link.from, link.to);
  }

 private:
  ClassLadder cubes_, sips_;
  bool separate_ = false;  // the phases take disjoint classes (bounded inter-SIP buffers)
  std::uint32_t middle_base_ = 0, last_base_ = 0, classes_ = 1;
  std::uint32_t most_[3] = {1, 1, 1};
};

// Channels [first, last) of class `index` among `vcs` channels shared by `classes` classes.
struct VcRange {
  std::uint32_t first, last;
};
inline VcRange vc_range(std::uint32_t vcs, std::uint32_t classes, std::uint32_t index) {
  const std::uint32_t each = vcs / classes, extra = vcs % classes;
  const std::uint32_t first = index * each + (index < extra ? index : extra);
  return {first, first + each + (index < extra ? 1 : 0)};
}

}  // namespace cubesim::components
