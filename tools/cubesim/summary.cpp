#include "tools/cubesim/summary.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"

namespace cubesim::cli {

using nlohmann::json;

namespace {

// j[key] for an object that has it, else an empty object (operator[] on a const json must not
// miss).
const json& field(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) ? j[key] : empty;
}

std::string plural(std::uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

double number(const json& j, const char* key, double fallback = 0) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

std::uint64_t count(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_unsigned()
             ? j[key].get<std::uint64_t>()
             : 0;
}

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void line(std::ostream& out, const char* label, const std::string& text) {
  out << "  " << label
      << std::string(12 - std::min<std::size_t>(11, std::string(label).size()), ' ') << text
      << "\n";
}

std::string verification(const json& r, bool timing_only) {
  const json& v = field(r, "verified");
  if (v.is_null())
    return timing_only ? "skipped (timing-only)" : "not checked (this kernel has no reference)";
  const bool ok = v.get<bool>();
  const std::string elements =
      count(r, "elements_checked")
          ? " over " + std::to_string(count(r, "elements_checked")) + " elements"
          : "";
  return std::string(ok ? "passed" : "FAILED") + ": max rel error " +
         format_number(number(r, "max_rel_error")) + (ok ? " <= " : " > ") + "tolerance " +
         format_number(number(r, "tolerance")) + elements;
}

}  // namespace

// "1.23 mJ, 45.6 W on average: static 40%, HBM 30%, GEMM 20%, NOC 6.0%, ..." (the parts that
// cost anything, largest first).
std::string energy_text(const components::EnergyReport& e) {
  std::string t = format_si_small(e.total(), "J") + ", " + format_si_small(e.average_watts(), "W") +
                  " on average";
  std::vector<components::EnergyPart> parts;
  for (std::size_t i = 0; i < components::kEnergyParts; ++i)
    if (e.joules[i] > 0) parts.push_back(static_cast<components::EnergyPart>(i));
  std::stable_sort(parts.begin(), parts.end(), [&e](auto a, auto b) { return e.of(a) > e.of(b); });
  for (std::size_t i = 0; i < parts.size(); ++i)
    t += (i == 0 ? ": " : ", ") + std::string(components::energy_part_name(parts[i])) + " " +
         format_percent(e.of(parts[i]) / e.total());
  return t;
}

void print_wait_summary(std::ostream& out, const RunStats& stats) {
  using Member = std::uint64_t components::PeStatistics::*;
  static constexpr std::pair<const char*, Member> kWaits[] = {
      {"load", &components::PeStatistics::load_wait_ps},
      {"store", &components::PeStatistics::store_wait_ps},
      {"atomic", &components::PeStatistics::atomic_wait_ps},
      {"GEMM", &components::PeStatistics::gemm_wait_ps},
      {"barrier", &components::PeStatistics::barrier_wait_ps},
      {"send", &components::PeStatistics::send_wait_ps},
      {"recv", &components::PeStatistics::recv_wait_ps},
      {"dispatch", &components::PeStatistics::dispatch_wait_ps}};
  const double run = static_cast<double>(std::max<emu::Tick>(stats.sim_time_ps, 1));
  const auto line_of = [&](const components::PeStatistics& pe, double scale) {
    std::vector<std::pair<std::uint64_t, const char*>> waits;
    std::uint64_t total = 0;
    for (const auto& [name, member] : kWaits) {
      total += pe.*member;
      if (pe.*member > 0) waits.emplace_back(pe.*member, name);
    }
    std::sort(waits.begin(), waits.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string t = format_percent(static_cast<double>(total) / run / scale) + " waiting";
    for (std::size_t k = 0; k < std::min<std::size_t>(3, waits.size()); ++k)
      t += std::string(k == 0 ? ": " : ", ") + waits[k].second + " " +
           format_percent(static_cast<double>(waits[k].first) / run / scale);
    return t;
  };
  out << "waits (share of the run's " << format_duration_ps(stats.sim_time_ps)
      << " each PE spent blocked, its top three kinds)\n";
  components::PeStatistics all;
  std::vector<const PeStats*> shown;
  for (const PeStats& pe : stats.pes) {
    for (const auto& [name, member] : kWaits) all.*member += pe.*member;
    shown.push_back(&pe);
  }
  constexpr std::size_t kAll = 64, kLatest = 32;
  if (shown.size() > kAll) {
    std::stable_sort(shown.begin(), shown.end(), [](const PeStats* a, const PeStats* b) {
      return a->finish_ps > b->finish_ps;
    });
    shown.resize(kLatest);
  }
  std::size_t width = 0;
  for (const PeStats* pe : shown) width = std::max(width, pe->pe.size());
  for (const PeStats* pe : shown)
    out << "  " << pe->pe << std::string(width - pe->pe.size() + 2, ' ') << "ends "
        << format_duration_ps(pe->finish_ps) << ", " << line_of(*pe, 1.0) << "\n";
  if (shown.size() < stats.pes.size())
    out << "  (the " << shown.size() << " of " << stats.pes.size()
        << " PEs that finished last; --json has every PE's stats.pes[])\n";
  if (!stats.pes.empty())
    out << "  all PEs  " << line_of(all, static_cast<double>(stats.pes.size())) << "\n";
}

std::string describe_topology(const json& s) {
  const auto sips = count(s, "sips"), cubes = count(s, "cubes_per_sip"),
             pes = count(s, "pes_per_cube"), total = count(s, "total_pes");
  std::string t = plural(sips, "SIP", "SIPs") + " x " + plural(cubes, "cube", "cubes") + " x " +
                  plural(pes, "PE", "PEs") + " = " + plural(total, "PE", "PEs");
  if (s.contains("mesh") && s["mesh"].is_array() && s["mesh"].size() == 2)
    t += "; " + s["mesh"][0].dump() + "x" + s["mesh"][1].dump() + " NOC mesh per cube";
  if (cubes > 1 && s.contains("ucie_topology")) {
    t += "; UCIe " + value_text(s["ucie_topology"]);
    const json& m = field(s, "ucie_mesh");
    if (m.is_array() && m.size() == 2) t += " " + m[0].dump() + "x" + m[1].dump();
  }
  if (sips > 1 && s.contains("inter_sip_topology")) {
    t += "; inter-SIP " + value_text(s["inter_sip_topology"]);
    const json& g = field(s, "sip_grid");
    if (g.is_array() && g.size() == 2) t += " " + g[0].dump() + "x" + g[1].dump();
  }
  return t;
}

void print_summary(std::ostream& out, const json& r, const RunStats& stats,
                   const std::vector<std::string>& param_order) {
  const json& sys = field(r, "system");
  const json& run_params = field(r, "params");
  const components::LinkStats& network = stats.network;

  out << r.value("kernel", "?") << " on " << r.value("spec", "?") << " ("
      << r.value("spec_file", "?") << ")\n";
  line(out, "system", describe_topology(sys));
  if (!field(r, "overrides").empty()) {
    std::string o;
    for (const auto& s : field(r, "overrides")) o += (o.empty() ? "" : "  ") + value_text(s);
    line(out, "overrides", o);
  }

  std::string params;
  std::vector<std::string> names = param_order;
  for (const auto& [name, value] : run_params.items())
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const auto& name : names)
    if (run_params.contains(name)) params += " " + name + "=" + value_text(run_params[name]);
  line(out, "kernel", r.value("kernel", "?") + params);
  if (stats.dispatch != "hardware") {  // a logical grid (--grid), placed by a policy, in waves
    std::string shape;
    for (const std::int64_t g : stats.grid) shape += (shape.empty() ? "" : "x") + std::to_string(g);
    line(out, "launch",
         format_count(static_cast<double>(stats.programs)) + " programs (grid " + shape + ") on " +
             plural(stats.total_pes(), "PE", "PEs") + " in " +
             plural(stats.waves, "wave", "waves") + ", dispatch " + stats.dispatch);
  }
  line(out, "sim time", format_duration_ps(stats.sim_time_ps));
  if (r.is_object() && r.contains("host")) {  // cubesim run --host
    const json& host = r["host"];
    if (host.is_null()) {
      line(out, "host", "not timed: the kernel's harness declares no buffers to move");
    } else {
      std::string t;
      for (const auto& [key, what] :
           {std::pair{"to_device", "inputs in "}, std::pair{"to_host", "outputs back "}}) {
        const json& d = field(host, key);
        if (count(d, "buffers") == 0) continue;
        t += std::string(t.empty() ? "" : ", ") + what +
             format_duration_ps(static_cast<emu::Tick>(count(d, "time_ps"))) + " (" +
             format_bytes(number(d, "bytes"));
        const std::string bound = d.value("bottleneck", "");
        t += (bound.empty() ? "" : ", bound by " + bound) + ")";
      }
      line(out, "host", t);
      line(out, "end to end",
           format_duration_ps(static_cast<emu::Tick>(count(host, "end_to_end_ps"))) +
               " (host, then the launches, then host)");
    }
  }
  // A collective: its own time (what NCCL's tests time) and bandwidths; the rest of the run is
  // the staging of the data into and out of place around it.
  const json& details = field(r, "details");
  if (details.is_object() && details.contains("collective_time_ps")) {
    const auto collective = details["collective_time_ps"].get<emu::Tick>();
    std::string t = r.value("kernel", "?") + " " + details.value("algorithm", "?") + " " +
                    format_duration_ps(collective) + ", algbw " +
                    format_si(number(details, "algbw_GBps") * 1e9, "B/s") + ", busbw " +
                    format_si(number(details, "busbw_GBps") * 1e9, "B/s");
    if (details.contains("model_time_ps"))
      t += " (alpha-beta model " + format_duration_ps(details["model_time_ps"].get<emu::Tick>()) +
           ")";
    line(out, "collective", t);
    if (stats.sim_time_ps > collective)
      line(out, "staging",
           format_duration_ps(stats.sim_time_ps - collective) +
               " before and after it, moving the data into place and back "
               "(in the sim time, not the collective's)");
  }

  const double flops = number(r, "useful_flops");
  if (flops > 0) {
    const json& dtype = field(r, "dtype");
    const std::string unit = ops_unit(dtype.is_string() ? dtype.get<std::string>() : "");
    std::string t = format_si(flops, unit) + " useful, " +
                    format_si(number(r, "achieved_flops_per_second"), unit + "/s");
    const double peak = number(r, "peak_flops_per_second");
    if (peak > 0 && field(r, "peak_fraction").is_number()) {
      t += " = " + format_percent(number(r, "peak_fraction")) + " of the " +
           format_si(peak, unit + "/s") + " " + value_text(dtype) + " system peak";
    }
    line(out, "compute", t);
  }
  const double bytes = number(r, "useful_bytes");
  if (bytes > 0) {
    std::string t = format_bytes(bytes) + " in+out, " +
                    format_si(number(r, "achieved_bytes_per_second"), "B/s") + " effective";
    const double hbm_GBps = number(field(sys, "bandwidth_GBps"), "hbm_system");
    if (hbm_GBps > 0) t += " (HBM peak " + format_si(hbm_GBps * 1e9, "B/s") + ")";
    line(out, "data", t);
  }

  const auto carried = [&](components::LinkKind kind) {
    return format_bytes(static_cast<double>(network.bytes(kind)));
  };
  line(out, "traffic",
       "HBM " + carried(components::LinkKind::hbm_channel) + " | NOC " +
           carried(components::LinkKind::noc) + " | UCIe " + carried(components::LinkKind::ucie) +
           " | inter-SIP " + carried(components::LinkKind::inter_sip));
  if (const auto& e = stats.energy) line(out, "energy", energy_text(*e));
  if (const auto& c = network.cache)
    line(out, "cache",
         format_percent(c->hit_rate()) + " of " + format_count(static_cast<double>(c->reads())) +
             " lines read hit, " + carried(components::LinkKind::cache) + " served from it");
  if (const auto& d = network.dram)
    line(out, "dram",
         format_percent(d->row_hit_rate()) + " of rows hit (" +
             format_count(static_cast<double>(d->row_misses)) + " opened, " +
             format_count(static_cast<double>(d->row_conflicts)) + " after closing another), " +
             format_count(static_cast<double>(d->refreshes)) + " refreshes, " +
             format_count(static_cast<double>(d->turnarounds)) + " bus turnarounds");
  if (const MessageTotals& m = stats.messages; m.messages > 0) {
    const double programs = static_cast<double>(std::max<std::size_t>(stats.pes.size(), 1));
    line(out, "messages",
         format_count(static_cast<double>(m.messages)) + " sent (" +
             format_bytes(static_cast<double>(m.bytes)) + "); per program, blocked " +
             format_duration_ps(static_cast<emu::Tick>(m.send_wait_ps / programs)) +
             " sending (no free slot) and " +
             format_duration_ps(static_cast<emu::Tick>(m.recv_wait_ps / programs)) +
             " receiving, on average");
  }
  if (const components::LinkRecord* b = network.busiest_link()) {
    line(out, "busiest",
         b->name + " (" + components::link_kind_name(b->kind) + "), " +
             format_percent(network.utilisation(*b)) + " busy (" + format_duration_ps(b->busy_ps) +
             ")");
  } else {
    line(out, "busiest", "no link carried traffic");
  }
  if (const components::LinkRecord* h = network.most_held_back_link()) {
    line(out, "held back",
         h->name + ": its packets waited " + format_duration_ps(h->credit_wait_ps) +
             " in all for room in the buffer beyond it");
  }
  line(out, "verified", verification(r, stats.timing_only));
  line(out, "wall",
       format_seconds(stats.wall_seconds) + " simulating (" +
           format_seconds(number(r, "harness_wall_seconds")) +
           " with inputs and "
           "checks), " +
           format_count(stats.events_per_second()) + " events/s (" +
           format_count(static_cast<double>(stats.events)) + " events)");
}

}  // namespace cubesim::cli
