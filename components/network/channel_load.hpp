#pragma once
// The channel-load bound of a traffic pattern (Dally & Towles, ch. 3): every route of the
// pattern carries a weight (its share of the pattern's rate, or of a node's), each link sums the
// weights of the routes that cross it, and the pattern's rate can grow until the first link is
// full: bandwidth / load, smallest over the links. Used for what the mesh delivers to a port
// (port_capacity.hpp) and for the saturation throughput of synthetic traffic.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "components/network/topology.hpp"

namespace cubesim::components {

class ChannelLoad {
 public:
  explicit ChannelLoad(const Topology& topology) : t_(topology) {}
  void add(const Route& route, double weight);
  bool empty() const { return load_.empty(); }

  struct Bound {
    double rate = 0;  // bytes per second of the pattern's unit (infinite when nothing was added)
    LinkId link = 0;  // the first link to fill (the lowest id among equals)
    std::string link_name;
  };
  Bound bound() const;

 private:
  const Topology& t_;
  std::unordered_map<LinkId, double> load_;
};

}  // namespace cubesim::components
