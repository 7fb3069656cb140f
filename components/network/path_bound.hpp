#pragma once
// A transfer that moves bytes over several routes at once with the links to itself, as a
// pipelined flow:
//
//  - time(): the longest way's latency + the most loaded resource's serialisation, the closed
//    form the host path times its transfers with (components/host/host_path.hpp);
//  - bound(): what no model may beat: the longest way, and for every resource the earliest a
//    byte can reach it plus its bytes over its rate (a packet's tail leaves its last link a
//    serialisation after its head reached it). `cubesim probe` sets it beside what the network
//    models deliver; the difference is packetisation, the DMA window and queueing.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "components/network/topology.hpp"

namespace cubesim::components {

class PathBound {
 public:
  explicit PathBound(const Topology& topology);

  // `bytes` over every link of `route` (at their rates), whose way takes `latency`; its first
  // byte can enter the route's first link at `start` (for bound()).
  void add_route(const Route& route, std::uint64_t bytes, Tick latency, Tick start = 0);
  // `bytes` over one link of the topology at `rate` (an HBM channel at its stream rate, say).
  void add_link(LinkId link, std::uint64_t bytes, Bandwidth rate);
  // `bytes` through a resource that is not a link of the topology (a host link, an IO port),
  // named `name`; the same name adds to the same resource.
  void add_resource(const std::string& name, Bandwidth rate, std::uint64_t bytes, Tick start = 0);
  // A way of `latency` the transfer's bytes take.
  void add_latency(Tick latency) { latency_ = std::max(latency_, latency); }

  Tick latency() const { return latency_; }
  // The most loaded resource's serialisation, and its name ("" when nothing was added).
  Tick serialisation() const;
  std::string bottleneck() const;
  Tick time() const;   // latency + serialisation (checked against the end of time)
  Tick bound() const;  // no earlier than this

 private:
  struct Resource {
    std::string name;
    Bandwidth rate;
    std::uint64_t bytes = 0;
    Tick start = 0;  // the earliest a byte reaches it
  };
  // f(start, serialisation, name) for every resource and loaded link, resources first, then
  // links by id; `name` is a callable that makes the name (only bottleneck() needs it).
  template <typename F>
  void for_each_load(F&& f) const;

  const Topology& topology_;
  std::vector<std::uint64_t> link_bytes_;  // per link of the topology
  std::vector<Bandwidth> link_rate_;       // its rate: the link's own unless add_link set one
  std::vector<Tick> link_start_;           // the earliest a byte of the routes reaches it
  std::vector<Resource> resources_;        // the rest, in the order first added
  std::unordered_map<std::string, std::size_t> resource_index_;
  Tick latency_ = 0;
};

}  // namespace cubesim::components
