#include "triton_emu/launch/run_stats.hpp"

namespace cubesim {

using nlohmann::json;

namespace {

json pe_json(const PeStats& pe) {
  json j = {{"pe", pe.pe}};
  for (const components::PeStatistic& s : components::kPeStatistics)
    j[std::string(s.name)] = pe.*s.member;
  return j;
}

// {name: {kind, bytes, packets, busy_ps, utilisation[, credit_wait_ps]}}
json links_json(const components::LinkStats& s) {
  json links = json::object();
  for (const components::LinkRecord& l : s.links) {
    json& j = links[l.name] = {{"kind", components::link_kind_name(l.kind)},
                               {"bytes", l.bytes},
                               {"packets", l.packets},
                               {"busy_ps", l.busy_ps},
                               {"utilisation", s.utilisation(l)}};
    if (s.bounded_buffers) j["credit_wait_ps"] = l.credit_wait_ps;
  }
  return links;
}

json energy_json(const components::EnergyReport& e) {
  json parts = json::object();
  for (std::size_t i = 0; i < components::kEnergyParts; ++i) {
    const auto p = static_cast<components::EnergyPart>(i);
    parts[std::string(components::energy_part_name(p))] = {{"J", e.of(p)}, {"W", e.watts(p)}};
  }
  return {{"total_J", e.total()}, {"average_W", e.average_watts()}, {"parts", std::move(parts)}};
}

json stats_section(const RunStats& r) {
  using components::LinkKind;
  const components::LinkStats& n = r.network;
  json pes = json::array();
  for (const PeStats& pe : r.pes) pes.push_back(pe_json(pe));
  json stats = {{"flops", r.flops},
                {"flops_per_second", r.flops_per_second()},
                {"hbm_bytes", n.bytes(LinkKind::hbm_channel)},
                {"noc_bytes", n.bytes(LinkKind::noc)},
                {"ucie_bytes", n.bytes(LinkKind::ucie)},
                {"inter_sip_bytes", n.bytes(LinkKind::inter_sip)},
                {"events", r.events},
                {"packets", n.packets},
                {"messages",
                 {{"messages", r.messages.messages},
                  {"bytes", r.messages.bytes},
                  {"send_wait_ps", r.messages.send_wait_ps},
                  {"recv_wait_ps", r.messages.recv_wait_ps}}},
                {"pes", std::move(pes)},
                {"links", links_json(n)}};
  if (const components::LinkRecord* b = n.busiest_link())
    stats["busiest_link"] = {
        {"name", b->name}, {"busy_ps", b->busy_ps}, {"utilisation", n.utilisation(*b)}};
  if (const components::LinkRecord* h = n.most_held_back_link())
    stats["most_held_back"] = {{"name", h->name}, {"credit_wait_ps", h->credit_wait_ps}};
  if (const auto& e = r.energy) stats["energy"] = energy_json(*e);
  if (const auto& c = n.cache)
    stats["cache"] = {{"read_hits", c->read_hits},        {"read_misses", c->read_misses},
                      {"hit_rate", c->hit_rate()},        {"write_hits", c->write_hits},
                      {"write_misses", c->write_misses},  {"evictions", c->evictions},
                      {"bytes", n.bytes(LinkKind::cache)}};
  if (const auto& d = n.dram)
    stats["dram"] = {{"reads", d->reads},
                     {"writes", d->writes},
                     {"row_hits", d->row_hits},
                     {"row_misses", d->row_misses},
                     {"row_conflicts", d->row_conflicts},
                     {"row_hit_rate", d->row_hit_rate()},
                     {"refreshes", d->refreshes},
                     {"turnarounds", d->turnarounds}};
  return stats;
}

}  // namespace

void RunStats::add_pe(std::string name, const components::PeStatistics& pe) {
  flops += pe.flops;
  messages += MessageTotals::of(pe);
  pes.push_back({pe, std::move(name)});
}

double RunStats::flops_per_second() const {
  const double seconds = static_cast<double>(sim_time_ps) / 1e12;
  return seconds > 0 ? static_cast<double>(flops) / seconds : 0.0;
}

double RunStats::events_per_second() const {
  return wall_seconds > 0 ? static_cast<double>(events) / wall_seconds : 0.0;
}

json run_report(const RunStats& r) {
  json report = {
      {"sim_time_ps", r.sim_time_ps},
      {"system",
       {{"sips", r.sips},
        {"cubes_per_sip", r.cubes_per_sip},
        {"pes_per_cube", r.pes_per_cube},
        {"total_pes", r.total_pes()}}},
      {"grid", r.grid},
      {"launch", {{"dispatch", r.dispatch}, {"programs", r.programs}, {"waves", r.waves}}},
      {"stats", stats_section(r)},
      {"wall_seconds", r.wall_seconds},
      {"events_per_second", r.events_per_second()},
      {"timing_only", r.timing_only},
      {"network", components::network_model_name(r.network_model)},
      {"backend", r.backend},
  };
  if (!r.launches.empty()) {
    json launches = json::array();
    for (const RunStats& launch : r.launches) launches.push_back(run_report(launch));
    report["launches"] = std::move(launches);
  }
  return report;
}

}  // namespace cubesim
