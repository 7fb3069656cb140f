// cubesim info SPEC: what a spec describes, in the numbers that bound a kernel's speed.

#include <cstdio>
#include <iostream>
#include <memory>

#include "emu/scheduler.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/summary.hpp"
#include "triton_emu/host_memory.hpp"
#include "triton_emu/simulation.hpp"

namespace cubesim::cli {

namespace {

struct InfoArgs {
  std::string spec;
  std::vector<std::string> sets;
  bool as_json = false;
};

double num(const nlohmann::json& j, const char* a, const char* b = nullptr) {
  const nlohmann::json* p = &j;
  for (const char* k : {a, b}) {
    if (k == nullptr) break;
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<double>() : 0;
}

void row(const char* label, const std::string& text) {
  std::printf("  %-12s%s\n", label, text.c_str());
}

int info(const InfoArgs& a) {
  const components::Spec spec = load_spec(a.spec, a.sets);
  // A timing-only system: describe() needs the built topology, not functional memory.
  emu::Scheduler scheduler;
  const components::System system(spec.config(), scheduler, components::SystemOptions{true});
  nlohmann::json d = describe_system(system);
  const HostMemoryEstimate memory = estimate_host_memory(spec.config(), SimOptions{}.stack_size);
  if (a.as_json) {
    d["host_memory_estimate_bytes"] = memory.bytes;
    d["spec_file"] = a.spec;
    d["overrides"] = a.sets;
    std::cout << to_pretty_json(d);
    return 0;
  }

  std::printf("%s (%s)\n", d.value("name", "?").c_str(), a.spec.c_str());
  if (!d.value("description", "").empty())
    std::printf("  %s\n", d.value("description", "").c_str());
  for (const auto& s : a.sets) row("override", s);
  row("topology", describe_topology(d));
  row("clock", format_si(num(d, "clock_hz"), "Hz"));
  std::printf("  %-12s%-8s%-16s%s\n", "peak", "dtype", "per PE", "system");
  if (d.contains("peak_flops_per_s")) {
    for (const auto& [dtype, p] : d["peak_flops_per_s"].items()) {
      const std::string unit = ops_unit(dtype) + "/s";
      std::printf("  %-12s%-8s%-16s%s\n", "", dtype.c_str(),
                  format_si(num(p, "per_pe"), unit).c_str(),
                  format_si(num(p, "system"), unit).c_str());
    }
  }
  const auto gbps = [&](const char* key) {
    return format_si(num(d, "bandwidth_GBps", key) * 1e9, "B/s");
  };
  row("NOC", gbps("noc_link") + " per link (each direction)");
  row("HBM", gbps("hbm_per_cube") + " per cube, " + gbps("hbm_system") + " system; " +
                 format_bytes(num(d, "hbm_capacity_bytes", "per_cube")) + " per cube, " +
                 format_bytes(num(d, "hbm_capacity_bytes", "system")) + " system");
  // The spec holds UCIe and inter-SIP links even when there is nothing for them to join.
  const bool one_cube = num(d, "cubes_per_sip") == 1, one_sip = num(d, "sips") == 1;
  std::string ucie_shape;
  if (d.contains("ucie_mesh") && d["ucie_mesh"].size() == 2)
    ucie_shape = " " + d["ucie_mesh"][0].dump() + "x" + d["ucie_mesh"][1].dump();
  row("UCIe", gbps("ucie_link") + " per link, " + d.value("ucie_topology", "?") + ucie_shape +
                  (one_cube ? " (unused: 1 cube per SIP)" : ""));
  row("inter-SIP", gbps("inter_sip_link") + " per link, " + d.value("inter_sip_topology", "?") +
                       (one_sip ? " (unused: 1 SIP)" : ""));
  row("SRAM", format_bytes(num(d, "sram_bytes_per_pe")) + " per PE");
  row("links", std::to_string(static_cast<long long>(num(d, "links"))) + " modelled links");
  const HostMemoryLimit limit = host_memory_limit(0);
  row("host memory",
      "at least " + format_bytes(static_cast<double>(memory.bytes)) +
          " to simulate, before a kernel's data" +
          (limit.bytes != 0 ? "; " + format_bytes(static_cast<double>(limit.bytes)) + " available"
                            : ""));
  return 0;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* sub =
      app.add_subcommand("info", "Describe a system spec: topology, peak FLOP/s, bandwidths");
  sub->add_option("SPEC", args->spec, "System spec file (JSON)")->required();
  sub->add_option("--set", args->sets, kSetHelp)
      ->allow_extra_args(false)
      ->type_name("JSON.PATH=VALUE");
  sub->add_flag("--json", args->as_json,
                "Print System::describe() as JSON (rates in FLOP/s, bandwidths in GB/s, "
                "capacities in bytes)");
  sub->footer(
      "Prints the topology, peak FLOP/s per dtype (per PE and system), bandwidths "
      "(NOC link, HBM per cube and system, UCIe, inter-SIP), HBM capacity and SRAM per "
      "PE.\n\n"
      "Example:\n  cubesim info specs/default.json --set system.sips.cubes_per_sip=8\n"
      "Exit codes: 0 ok, 2 usage or spec error.");
  return {sub, [args] { return info(*args); }};
}

}  // namespace cubesim::cli
