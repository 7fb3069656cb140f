// cubesim traffic: BookSim-style synthetic traffic on a spec's network (components/traffic/),
// one load or a latency-against-load sweep, with offered and delivered throughput measured
// against the pattern's channel-load bound.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "components/system/system.hpp"
#include "components/traffic/synthetic_traffic.hpp"
#include "emu/scheduler.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/name_options.hpp"
#include "tools/cubesim/option_values.hpp"
#include "tools/cubesim/output_files.hpp"
#include "tools/cubesim/progress_line.hpp"
#include "tools/cubesim/sweep_output.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Loads are fractions of the pattern's bound. The least --load: below it a node sends fewer
// than one message per million link cycles.
constexpr double kMinLoad = 1e-6;
// The loads of a sweep.
constexpr double kSweepLoads[] = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2};

struct TrafficArgs {
  std::string spec;
  std::vector<std::string> sets;
  std::string pattern = "uniform";
  std::string scope = "cube";
  double load = 0;
  bool load_given = false;
  std::uint32_t packet_bytes = 0;
  double hotspot_fraction = 0.5;
  std::uint32_t hotspot = 0;
  std::uint64_t cycles = 4000;
  std::uint64_t seed = 1;
  std::string network = "packet";
  bool sweep = false;
  std::string json_file, csv_file, plot_file;
};

struct Point {
  double load = 0;  // asked for, of the bound
  components::TrafficResult r;
  double bound = 0;  // of a link
  bool saturated() const { return r.saturated(); }
  // "yes", "no", or "unknown" when no node sent enough messages in the window to tell.
  const char* saturation() const { return !r.judged() ? "unknown" : saturated() ? "yes" : "no"; }
  json to_json() const {
    return {{"load", load},
            {"offered_load", r.offered_fraction / bound},
            {"delivered_load", r.delivered_fraction / bound},
            {"offered_fraction_of_link", r.offered_fraction},
            {"delivered_fraction_of_link", r.delivered_fraction},
            {"latency_ns_mean", r.mean_latency_ps / 1000.0},
            {"latency_ns_p99", r.p99_latency_ps / 1000.0},
            {"saturated", r.judged() ? json(saturated()) : json(nullptr)},
            {"messages", r.messages}};
  }
};

Point run_point(const components::Spec& spec, components::TrafficOptions o, double load,
                const components::TrafficBound& bound, components::NetworkModel network,
                ProgressLine& progress) {
  emu::Scheduler sched;
  components::System sys(spec.config(), sched, components::SystemOptions{true, network});
  o.offered_load = load * bound.fraction_of_link;
  Point p;
  p.load = load;
  p.bound = bound.fraction_of_link;
  o.progress = draw_progress(progress, fmt::format("load {:.3g} ", load));
  o.progress_interval = kEveryReport;
  p.r = components::run_traffic(sched, sys.network(), o);
  return p;
}

void write_csv(const std::string& file, const std::vector<Point>& points) {
  write_file(file, [&](std::ostream& out) {
    out << "offered_load,statistic,latency_ps,delivered_load,saturated\n";
    for (const auto& p : points) {
      const json j = p.to_json();
      for (const char* stat : {"mean", "p99"})
        out << j["offered_load"].get<double>() << "," << stat << ","
            << j[std::string("latency_ns_") + stat].get<double>() * 1000 << ","
            << j["delivered_load"].get<double>() << "," << p.saturation() << "\n";
    }
  });
}

int traffic(const TrafficArgs& a) {
  std::vector<std::string> sets = a.sets;
  if (a.packet_bytes != 0)
    sets.push_back("system.cube.noc.packet_bytes=" + std::to_string(a.packet_bytes));
  const components::Spec spec = load_spec(a.spec, sets);
  components::TrafficOptions o;
  try {
    o.pattern = components::parse_traffic_pattern(a.pattern);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--pattern: ") + e.what());
  }
  try {
    o.scope = components::parse_traffic_scope(a.scope);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--scope: ") + e.what());
  }
  o.hotspot = a.hotspot;
  o.hotspot_fraction = a.hotspot_fraction;
  o.seed = a.seed;
  const components::NetworkModel network =
      components::network_models().at(a.network, "--network").model;
  if (!a.sweep && !a.load_given)
    throw UsageError(
        "--load: give the offered load as a fraction of the pattern's bound (e.g. "
        "--load 0.5), or --sweep for a latency-against-load curve");
  if (!a.sweep && !(a.load >= kMinLoad))
    throw UsageError(fmt::format(
        "--load {}: give a number of at least {} (the offered load as a fraction of the "
        "pattern's bound, e.g. --load 0.5); lower loads send next to nothing in any window",
        a.load, kMinLoad));
  if (a.cycles < 100 || a.cycles > 100'000'000)
    throw UsageError("--cycles " + std::to_string(a.cycles) +
                     ": measure over 100 to 100000000 link cycles");
  if (!a.json_file.empty()) check_output_path(a.json_file, "--json");
  if (!a.csv_file.empty()) check_output_path(a.csv_file, "--csv");
  if (!a.plot_file.empty()) {
    if (!a.sweep) throw UsageError("--plot draws a sweep's curve: add --sweep");
    check_output_path(a.plot_file, "--plot");
    sweep::check_plot(a.plot_file);
  }

  emu::Scheduler probe_sched;
  const components::System probe(spec.config(), probe_sched, components::SystemOptions{true});
  components::TrafficBound bound;
  try {
    bound = components::traffic_bound(probe.topology(), o);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--pattern ") + a.pattern + ": " + e.what());
  }
  const auto& cfg = spec.config();
  const emu::Tick cycle = cfg.cube.noc.link_bandwidth.transfer_time(cfg.cube.noc.packet_bytes);
  o.measure = cycle * a.cycles;
  o.warmup = cycle * (a.cycles / 4);
  const double most = 1.0 / bound.fraction_of_link;  // one packet per node per cycle
  if (!a.sweep && a.load > most)
    throw UsageError(fmt::format(
        "--load {}: {} x the bound ({:.4g} of a link) is more than one packet per node per "
        "link cycle; the most is {:.4g}",
        a.load, a.load, bound.fraction_of_link, most));

  std::vector<Point> points;
  {
    ProgressLine progress;
    if (a.sweep) {
      for (const double l : kSweepLoads)
        if (l <= most) points.push_back(run_point(spec, o, l, bound, network, progress));
    } else {
      points.push_back(run_point(spec, o, a.load, bound, network, progress));
    }
  }

  const components::TrafficNodes nodes = components::traffic_nodes(probe.topology(), o.scope);
  const double link_bps = static_cast<double>(cfg.cube.noc.link_bandwidth.bytes_per_s());
  std::printf("%s traffic on %s (%s), scope %s: %u PEs, %u B packets, %s network\n",
              components::to_string(o.pattern), spec.config().name.c_str(), spec.origin().c_str(),
              components::to_string(o.scope), nodes.count, cfg.cube.noc.packet_bytes,
              a.network.c_str());
  std::printf("  bound       %.4g of a link per node (%s), set by %s\n", bound.fraction_of_link,
              format_si(bound.fraction_of_link * link_bps, "B/s").c_str(),
              bound.bottleneck.c_str());
  std::printf("  %-10s%-10s%-11s%-12s%-12s%s\n", "load", "offered", "delivered", "mean ns",
              "p99 ns", "saturated");
  for (const auto& p : points) {
    const json j = p.to_json();
    std::printf("  %-10.3g%-10.3f%-11.3f%-12.1f%-12.1f%s\n", p.load,
                j["offered_load"].get<double>(), j["delivered_load"].get<double>(),
                j["latency_ns_mean"].get<double>(), j["latency_ns_p99"].get<double>(),
                p.saturation());
  }
  std::printf("  (loads as fractions of the bound; latency from generation to delivery)\n");
  for (const auto& p : points)
    if (!p.r.judged())
      std::printf(
          "  load %.3g: too few messages to judge saturation (fewer than %llu in the "
          "window of %llu link cycles); raise --cycles or --load\n",
          p.load, static_cast<unsigned long long>(components::TrafficResult::kJudgedSent),
          static_cast<unsigned long long>(a.cycles));

  if (!a.json_file.empty()) {
    json doc = {{"spec_file", spec.origin()},
                {"overrides", a.sets},
                {"pattern", components::to_string(o.pattern)},
                {"scope", components::to_string(o.scope)},
                {"nodes", nodes.count},
                {"packet_bytes", cfg.cube.noc.packet_bytes},
                {"network", a.network},
                {"cycles", a.cycles},
                {"bound_fraction_of_link", bound.fraction_of_link},
                {"bottleneck", bound.bottleneck}};
    if (a.sweep) {
      doc["points"] = json::array();
      for (const auto& p : points) doc["points"].push_back(p.to_json());
    } else {
      doc.update(points.front().to_json());
    }
    write_json_file(a.json_file, doc);
  }
  if (!a.csv_file.empty()) write_csv(a.csv_file, points);
  if (!a.plot_file.empty()) {
    const std::string csv =
        !a.csv_file.empty() ? a.csv_file : a.plot_file + ".csv.tmp" + std::to_string(::getpid());
    if (a.csv_file.empty()) write_csv(csv, points);
    try {
      sweep::draw_plot({.csv_file = csv,
                        .out_file = a.plot_file,
                        .metric = "latency_ps",
                        .fields = {"offered_load", "statistic"},
                        .title = std::string(components::to_string(o.pattern)) + " traffic on " +
                                 spec.config().name + " (" + components::to_string(o.scope) + ")",
                        .reference = "",
                        .log_y = true});
    } catch (...) {
      if (a.csv_file.empty()) fs::remove(csv);
      throw;
    }
    if (a.csv_file.empty()) fs::remove(csv);
  }
  return 0;
}

}  // namespace

Command add_traffic_command(CLI::App& app) {
  auto a = std::make_shared<TrafficArgs>();
  CLI::App* sub = app.add_subcommand(
      "traffic", "Synthetic traffic on a spec's network: throughput and latency against load");
  sub->add_option("SPEC", a->spec, "System spec file (JSON)")->required();
  sub->add_option("--pattern", a->pattern,
                  "uniform (every node to every node, itself included), transpose, "
                  "bit-complement, hotspot or neighbor")
      ->capture_default_str();
  CLI::Option* load =
      sub->add_option("--load", a->load,
                      "Offered load as a fraction of the pattern's saturation bound (1 = the "
                      "bound, at least 1e-6); each node injects a packet per link cycle with "
                      "probability load x bound");
  sub->add_option("--scope", a->scope, "cube (one cube's mesh), sip or system")
      ->capture_default_str();
  sub->add_option("--packet-bytes", a->packet_bytes,
                  "Packet size (sets system.cube.noc.packet_bytes); default the spec's");
  sub->add_option("--hotspot-fraction", a->hotspot_fraction,
                  "hotspot: share of every node's packets sent to the hotspot")
      ->capture_default_str();
  sub->add_option("--hotspot", a->hotspot, "hotspot: the node (index in the scope)")
      ->capture_default_str();
  sub->add_option("--cycles", a->cycles,
                  "Measurement window in link cycles (one packet's serialisation); a quarter "
                  "as much warms up first")
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "Seed of the destinations and injection draws")
      ->capture_default_str()
      ->check(unsigned_64_validator("--seed 7"));
  sub->add_option("--network", a->network, choices_text(components::network_models()))
      ->check(one_of(components::network_models(), "--network"))
      ->capture_default_str();
  sub->add_option("--set", a->sets, kSetHelp)
      ->allow_extra_args(false)
      ->type_name("JSON.PATH=VALUE");
  sub->add_flag("--sweep", a->sweep,
                "Run the loads 0.05 to 1.2 of the bound (those a node can offer) instead of "
                "--load");
  sub->add_option("--json", a->json_file,
                  "Write the results: offered_load and delivered_load (of the bound), "
                  "latency_ns_mean, latency_ns_p99, saturated, ...");
  sub->add_option("--csv", a->csv_file, "Write a CSV row per load and statistic");
  sub->add_option("--plot", a->plot_file, "With --sweep: latency against offered load (.png/.svg)");
  sub->footer(
      "Example:\n  cubesim traffic specs/default.json --pattern transpose --sweep --plot t.svg\n"
      "Exit codes: 0 ok, 2 usage or spec error.");
  return {sub, [a, load] {
            a->load_given = load->count() != 0;
            return traffic(*a);
          }};
}

}  // namespace cubesim::cli
