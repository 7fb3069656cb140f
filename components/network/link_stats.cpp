#include "components/network/link_stats.hpp"

namespace cubesim::components {

double LinkStats::utilisation(const LinkRecord& link) const {
  return elapsed_ps ? static_cast<double>(link.busy_ps) / static_cast<double>(elapsed_ps) : 0.0;
}

const LinkRecord* LinkStats::link(std::string_view name) const {
  for (const LinkRecord& l : links)
    if (l.name == name) return &l;
  return nullptr;
}

LinkStats measure_links(const Topology& topology, emu::Tick elapsed, bool bounded_buffers) {
  LinkStats s;
  s.elapsed_ps = elapsed;
  s.bounded_buffers = bounded_buffers;
  emu::Tick busiest = 0, most_wait = 0;
  const std::vector<Link>& links = topology.links();
  for (LinkId id = 0; id < links.size(); ++id) {
    const Link& l = links[id];
    s.bytes_by_kind[static_cast<std::size_t>(l.kind)] += l.bytes;
    if (l.packets == 0) continue;
    s.links.push_back({.name = topology.link_name(id),
                       .kind = l.kind,
                       .bytes = l.bytes,
                       .packets = l.packets,
                       .busy_ps = l.busy,
                       .credit_wait_ps = l.credit_wait});
    if (l.busy > busiest) {
      busiest = l.busy;
      s.busiest = s.links.size() - 1;
    }
    if (l.credit_wait > most_wait) {
      most_wait = l.credit_wait;
      s.most_held_back = s.links.size() - 1;
    }
  }
  return s;
}

}  // namespace cubesim::components
