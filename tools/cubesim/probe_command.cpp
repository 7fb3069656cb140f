// cubesim probe SPEC: the latency and bandwidth of every class of path of a system beside
// their zero-load bounds, and invariants judged PASS / FAIL (tools/cubesim/probe.hpp).

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/name_options.hpp"
#include "tools/cubesim/output_files.hpp"
#include "tools/cubesim/probe.hpp"
#include "tools/cubesim/sweep_output.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct ProbeArgs {
  std::string spec;
  std::vector<std::string> sets;
  std::string only = "all";
  std::string network = "packet";
  std::string json_file, plot_file;
};

json point_json(const ProbePoint& p) {
  return {{"bytes", p.bytes},
          {"simulated_ps", p.simulated},
          {"bound_ps", p.bound},
          {"latency_ps", p.latency},
          {"serialisation_ps", p.serialisation},
          {"queueing_ps", p.simulated > p.bound ? p.simulated - p.bound : 0},
          {"bottleneck", p.bottleneck},
          {"achieved_GBps", p.achieved_GBps()},
          {"peak_GBps", p.peak_GBps()},
          {"utilisation", p.utilisation()}};
}

json result_json(const ProbeResult& r) {
  json cases = json::array();
  for (const auto& c : r.cases) {
    json sweep = json::array();
    for (const auto& p : c.sweep) sweep.push_back(point_json(p));
    cases.push_back({{"name", c.name},
                     {"description", c.description},
                     {"formula", c.formula},
                     {"hops",
                      {{"mesh", c.mesh_hops},
                       {"ucie", c.ucie_hops},
                       {"inter_sip", c.inter_sip_hops},
                       {"ports", c.ports}}},
                     {"way_ps",
                      {{"request_and_access", c.request_ps},
                       {"mesh", c.mesh_ps},
                       {"ucie", c.ucie_ps},
                       {"inter_sip", c.inter_sip_ps},
                       {"ports", c.ports_ps}}},
                     {"latency", point_json(c.latency)},
                     {"reference", point_json(c.reference)},
                     {"sweep", sweep},
                     {"sweep_limit", c.limit}});
  }
  json checks = json::array();
  for (const auto& k : r.checks)
    checks.push_back({{"check", k.name}, {"pass", k.pass}, {"detail", k.detail}});
  return {{"cases", cases}, {"checks", checks}, {"passed", r.passed()}};
}

std::string us(emu::Tick t) {
  return format_duration_ps(t);
}

void print(const ProbeResult& r, const components::Spec& spec, const std::string& network) {
  std::printf("probe of %s (%s), %s network; each transfer alone on a fresh system\n",
              spec.config().name.c_str(), spec.origin().c_str(), network.c_str());
  for (const auto& c : r.cases) {
    std::printf("\n%s: %s\n", c.name.c_str(), c.description.c_str());
    std::printf("  bound     %s\n", c.formula.c_str());
    if (c.mesh_hops + c.ucie_hops + c.inter_sip_hops + c.ports > 0)
      std::printf("  way       %s%u mesh links %s, %u UCIe %s, %u inter-SIP %s, %u ports %s\n",
                  c.request_ps > 0 ? ("request and access " + us(c.request_ps) + ", ").c_str() : "",
                  c.mesh_hops, us(c.mesh_ps).c_str(), c.ucie_hops, us(c.ucie_ps).c_str(),
                  c.inter_sip_hops, us(c.inter_sip_ps).c_str(), c.ports, us(c.ports_ps).c_str());
    std::printf("  latency   %s simulated, %s bound (%s)\n", us(c.latency.simulated).c_str(),
                us(c.latency.bound).c_str(),
                format_bytes(static_cast<double>(c.latency.bytes)).c_str());
    std::printf("  %-9s %-11s %-11s %-11s %-11s %-11s %-6s %s\n", "bytes", "simulated", "bound",
                "latency", "serial.", "queueing", "util.", "bottleneck");
    std::vector<const ProbePoint*> points = {&c.reference};
    for (const auto& p : c.sweep)
      if (p.bytes != c.reference.bytes) points.push_back(&p);
    std::sort(points.begin(), points.end(),
              [](const ProbePoint* a, const ProbePoint* b) { return a->bytes < b->bytes; });
    for (const ProbePoint* p : points)
      std::printf("  %-9s %-11s %-11s %-11s %-11s %-11s %-6s %s\n",
                  format_bytes(static_cast<double>(p->bytes)).c_str(), us(p->simulated).c_str(),
                  us(p->bound).c_str(), us(p->latency).c_str(), us(p->serialisation).c_str(),
                  us(p->simulated > p->bound ? p->simulated - p->bound : 0).c_str(),
                  format_percent(p->utilisation()).c_str(), p->bottleneck.c_str());
    if (!c.limit.empty())
      std::printf("  (sizes up to %s: %s)\n",
                  format_bytes(static_cast<double>(c.max_bytes)).c_str(), c.limit.c_str());
  }
  std::printf("\nchecks\n");
  for (const auto& k : r.checks)
    std::printf("  %s  %s (%s)\n", k.pass ? "PASS" : "FAIL", k.name.c_str(), k.detail.c_str());
}

void write_csv(const std::string& path, const ProbeResult& r) {
  write_file(path, [&r](std::ostream& out) {
    out << "case,bytes,achieved_GBps,bound_GBps,simulated_ps,bound_ps\n";
    for (const auto& c : r.cases)
      for (const auto& p : c.sweep)
        out << c.name << "," << p.bytes << "," << p.achieved_GBps() << ","
            << (p.bound == 0 ? 0.0
                             : static_cast<double>(p.bytes) / static_cast<double>(p.bound) * 1e3)
            << "," << p.simulated << "," << p.bound << "\n";
  });
}

int probe(const ProbeArgs& a) {
  if (!a.json_file.empty()) check_output_path(a.json_file, "--json");
  if (!a.plot_file.empty()) {
    check_output_path(a.plot_file, "--plot");
    sweep::check_plot(a.plot_file);
  }
  const components::Spec spec = load_spec(a.spec, a.sets);
  const components::NetworkModel network =
      components::network_models().at(a.network, "--network").model;
  const ProbeResult r = run_probe(spec, network, a.only);
  print(r, spec, a.network);
  if (!a.json_file.empty()) {
    json doc = result_json(r);
    doc["spec_file"] = spec.origin();
    doc["overrides"] = a.sets;
    doc["network"] = a.network;
    write_json_file(a.json_file, doc);
  }
  if (!a.plot_file.empty()) {
    const std::string csv = a.plot_file + ".csv.tmp" + std::to_string(::getpid());
    write_csv(csv, r);
    try {
      sweep::draw_plot(
          {.csv_file = csv,
           .out_file = a.plot_file,
           .metric = "achieved_GBps",
           .fields = {"bytes", "case"},
           .title = "cubesim probe of " + spec.config().name + " (dotted: the zero-load bound)",
           .reference = "bound_GBps",
           .log_y = true});
    } catch (...) {
      fs::remove(csv);
      throw;
    }
    fs::remove(csv);
  }
  return r.passed() ? 0 : static_cast<int>(ExitCode::verification_failed);
}

}  // namespace

Command add_probe_command(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  CLI::App* sub = app.add_subcommand(
      "probe", "Latency and bandwidth of every path class of a spec, beside their bounds");
  sub->add_option("SPEC", a->spec, "System spec file (JSON)")->required();
  sub->add_option("--set", a->sets, kSetHelp)
      ->allow_extra_args(false)
      ->type_name("JSON.PATH=VALUE");
  sub->add_option("--case", a->only,
                  "One case (hbm.own_slice, hbm.cube, hbm.ucie, hbm.inter_sip, pe.mesh, pe.ucie, "
                  "pe.inter_sip, host.to_device, host.to_host: those the system has), or all")
      ->capture_default_str();
  sub->add_option("--network", a->network,
                  "Network model: " + choices_text(components::network_models()))
      ->check(one_of(components::network_models(), "--network"))
      ->capture_default_str();
  sub->add_option("--json", a->json_file,
                  "Write every case, point and check: simulated_ps, bound_ps, latency_ps, "
                  "serialisation_ps, queueing_ps, bottleneck, utilisation ...");
  sub->add_option("--plot", a->plot_file,
                  "Achieved bandwidth against size per case, bounds dotted (.png/.svg)");
  sub->footer(
      "Example:\n  cubesim probe specs/default.json --plot probe.png\n"
      "Exit codes: 0 every check passed, 1 a check failed, 2 usage or spec error.");
  return {sub, [a] { return probe(*a); }};
}

}  // namespace cubesim::cli
