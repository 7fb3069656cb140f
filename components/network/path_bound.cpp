#include "components/network/path_bound.hpp"

#include <algorithm>

namespace cubesim::components {

PathBound::PathBound(const Topology& topology)
    : topology_(topology),
      link_bytes_(topology.links().size(), 0),
      link_start_(topology.links().size(), emu::kTickMax) {
  link_rate_.reserve(topology.links().size());
  for (const Link& l : topology.links()) link_rate_.push_back(l.bandwidth);
}

void PathBound::add_route(const Route& route, std::uint64_t bytes, Tick latency, Tick start) {
  Tick at = start;
  for (std::size_t h = 0; h < route.links.size(); ++h) {
    const LinkId id = route.links[h];
    link_bytes_[id] += bytes;
    link_start_[id] = std::min(link_start_[id], at);
    at += route.latency[h];
  }
  add_latency(latency);
}

void PathBound::add_link(LinkId link, std::uint64_t bytes, Bandwidth rate) {
  link_bytes_[link] += bytes;
  link_rate_[link] = rate;
}

void PathBound::add_resource(const std::string& name, Bandwidth rate, std::uint64_t bytes,
                             Tick start) {
  const auto [it, fresh] = resource_index_.try_emplace(name, resources_.size());
  if (fresh) {
    resources_.push_back({name, rate, bytes, start});
  } else {
    resources_[it->second].bytes += bytes;
    resources_[it->second].start = std::min(resources_[it->second].start, start);
  }
}

template <typename F>
void PathBound::for_each_load(F&& f) const {
  for (const Resource& r : resources_)
    f(r.start, r.rate.transfer_time(r.bytes), [&r] { return r.name; });
  for (LinkId id = 0; id < link_bytes_.size(); ++id)
    if (link_bytes_[id] != 0)
      f(link_start_[id], link_rate_[id].transfer_time(link_bytes_[id]),
        [this, id] { return topology_.link_name(id); });
}

std::string PathBound::bottleneck() const {
  // The most loaded; of equals, the first (resources, then links by id).
  Tick most = 0;
  std::string name;
  for_each_load([&](Tick, Tick t, const auto& name_of) {
    if (name.empty() || t > most) {
      most = t;
      name = name_of();
    }
  });
  return name;
}

Tick PathBound::serialisation() const {
  Tick most = 0;
  for_each_load([&most](Tick, Tick t, const auto&) { most = std::max(most, t); });
  return most;
}

Tick PathBound::bound() const {
  Tick t = latency_;
  for_each_load([&t](Tick start, Tick ser, const auto&) {
    if (start != emu::kTickMax) t = std::max(t, emu::checked_add(start, ser, "transfer bound"));
  });
  return t;
}

Tick PathBound::time() const {
  return emu::checked_add(latency_, serialisation(), "transfer bound");
}

}  // namespace cubesim::components
