// cubesim info SPEC: what a spec describes, in the numbers that bound a kernel's speed.

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "components/network/port_capacity.hpp"
#include "emu/scheduler.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/output_files.hpp"
#include "tools/cubesim/summary.hpp"
#include "triton_emu/launch/simulation.hpp"
#include "triton_emu/memory/host_memory.hpp"

namespace cubesim::cli {

namespace {

// Below this fraction of its peak, a resource is one no kernel can approach.
constexpr double kWellBelowPeak = 0.8;

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

// What the mesh delivers to each resource against its peak, and a warning for each that the
// mesh holds well below it.
void print_port_capacities(const std::vector<components::PortCapacity>& ports) {
  static const std::map<std::string, std::pair<std::string, std::string>> labels = {
      {"hbm_read", {"HBM reads", "list more system.cube.noc.hbm_nodes, or \"every_node\""}},
      {"hbm_write", {"HBM writes", "list more system.cube.noc.hbm_nodes, or \"every_node\""}},
      {"ucie",
       {"UCIe",
        "raise system.ucie.connections, with that many system.cube.noc.ucie_nodes per "
        "side"}},
      {"inter_sip",
       {"inter-SIP",
        "raise system.inter_sip.connections, with that many "
        "system.cube.noc.inter_sip_node"}}};
  std::printf("  %-12s%-12s%-12s%-20s%s\n", "reachable", "resource", "peak", "through the mesh",
              "bound by");
  for (const auto& p : ports) {
    const auto& [label, fields] = labels.at(p.resource);
    const std::string delivered = format_si(p.delivered_bytes_per_s, "B/s") + " (" +
                                  std::to_string(static_cast<int>(p.fraction() * 100 + 0.5)) + "%)";
    std::printf("  %-12s%-12s%-12s%-20s%s\n", "", label.c_str(),
                format_si(p.peak_bytes_per_s, "B/s").c_str(), delivered.c_str(),
                p.bottleneck.c_str());
  }
  for (const auto& p : ports) {
    if (p.fraction() >= kWellBelowPeak) continue;
    const auto& [label, fields] = labels.at(p.resource);
    std::cerr << "cubesim: warning: " << label << ": the mesh delivers at most "
              << format_si(p.delivered_bytes_per_s, "B/s") << " of the "
              << format_si(p.peak_bytes_per_s, "B/s") << " peak when " << p.pattern << "; the link "
              << p.bottleneck << " (" << p.bottleneck_field
              << ") is the bound. Spread the ports over more mesh nodes (" << fields
              << "), or raise " << p.bottleneck_field << "\n";
  }
}

// "slots in the receiver's PE SRAM (read at 512 GB/s + 0 ps); 16 B credits", then a row per
// class of channel: its window, the credit loop it is to cover, and a warning on stderr for
// each window that cannot (a channel of that class then sends below its path's rate).
void print_messages(const nlohmann::json& d) {
  if (!d.contains("messages")) return;
  const nlohmann::json& m = d["messages"];
  const std::string memory = m.value("memory", "?");
  std::string t = "slots in ";
  if (memory == "pe_sram") t += "the receiver's PE SRAM";
  if (memory == "cube_sram")
    t += "its cube's shared SRAM (" + format_bytes(num(m, "cube_sram_bytes")) + " per cube)";
  if (memory == "hbm") t += "its cube's HBM, read over the network";
  if (m["slot_read"].is_object())
    t += " (read at " + format_si(num(m, "slot_read", "bandwidth_GBps") * 1e9, "B/s") + " + " +
         emu::format_time(static_cast<emu::Tick>(num(m, "slot_read", "latency_ps"))) + ")";
  t += "; " + format_bytes(num(m, "credit_bytes")) + " credits";
  row("messages", t);
  if (!m.contains("windows")) return;
  static const std::map<std::string, std::string> labels = {
      {"mesh", "mesh"}, {"ucie", "UCIe"}, {"inter_sip", "inter-SIP"}};
  const double sram = num(d, "sram_bytes_per_pe");
  static const char* const order[] = {"mesh", "ucie", "inter_sip"};
  const nlohmann::json& windows = m["windows"];
  for (const char* name : order) {
    if (!windows.contains(name)) continue;
    const nlohmann::json& w = windows[name];
    const double covered = num(w, "covered");
    const auto rate = format_si(num(w, "rate_GBps") * 1e9, "B/s");
    const auto loop = emu::format_time(w.value("round_trip_ps", emu::Tick{0}));
    std::string r = std::to_string(w.value("slots", 0)) + " x " +
                    format_bytes(num(w, "slot_bytes")) + " per channel" +
                    (w.value("automatic", false) ? " (default)" : "") + ", " +
                    (covered >= 1 ? "covers" : format_percent(covered) + " of") + " its " + loop +
                    " credit loop at " + rate;
    if (memory == "pe_sram" && sram > 0)
      r += "; " + format_percent(num(w, "channel_bytes") / sram) + " of a PE's SRAM";
    row(("  " + labels.at(name)).c_str(), r);
  }
  for (const char* name : order) {
    if (!windows.contains(name)) continue;
    const nlohmann::json& w = windows[name];
    const double covered = num(w, "covered");
    if (covered >= 1) continue;
    std::cerr << "cubesim: warning: " << labels.at(name) << " channels: " << w.value("slots", 0)
              << " slots of " << format_bytes(num(w, "slot_bytes")) << " cover "
              << format_percent(covered) << " of the "
              << emu::format_time(w.value("round_trip_ps", emu::Tick{0}))
              << " credit loop, so a channel sends at most "
              << format_si(num(w, "rate_GBps") * 1e9 * covered, "B/s") << " of its "
              << format_si(num(w, "rate_GBps") * 1e9, "B/s") << "; " << w.value("slots_needed", 0)
              << " slots cover it (system.messages." << name << ".slots"
              << (w.value("automatic", false) ? ", capped by the slots' memory" : "")
              << "), or put the slots in a larger memory (system.messages.memory)\n";
  }
}

int info(const InfoArgs& a) {
  const components::Spec spec = load_spec(a.spec, a.sets);
  // Refused as `run` would refuse it, before building: a system too large for the host
  // would otherwise take it down while being described.
  check_host_memory(spec.config(), SimOptions{}.stack_size, memory_limit_from_environment());
  // A timing-only system: describe() needs the built topology, not functional memory.
  emu::Scheduler scheduler;
  const components::System system(spec.config(), scheduler, components::SystemOptions{true});
  nlohmann::json d = describe_system(system);
  const std::vector<components::PortCapacity> ports =
      components::port_capacities(system.topology());
  const HostMemoryEstimate memory = estimate_host_memory(spec.config(), SimOptions{}.stack_size);
  if (a.as_json) {
    d["host_memory_estimate_bytes"] = memory.bytes;
    nlohmann::json& reach = d["mesh_delivers"];
    reach = nlohmann::json::object();
    for (const auto& p : ports)
      reach[p.resource] = {{"pattern", p.pattern},
                           {"peak_bytes_per_s", p.peak_bytes_per_s},
                           {"delivered_bytes_per_s", p.delivered_bytes_per_s},
                           {"fraction", p.fraction()},
                           {"bottleneck", p.bottleneck},
                           {"bottleneck_field", p.bottleneck_field}};
    d["spec_file"] = spec.origin();
    d["overrides"] = a.sets;
    std::cout << to_pretty_json(d);
    return 0;
  }

  std::printf("%s (%s)\n", d.value("name", "?").c_str(), spec.origin().c_str());
  // The description was written for the spec as shipped: with overrides, say so.
  if (!d.value("description", "").empty())
    std::printf("  %s%s\n", a.sets.empty() ? "" : "As written, before the overrides: ",
                d.value("description", "").c_str());
  for (const auto& s : a.sets) row("override", s);
  row("topology", describe_topology(d));
  row("clock", format_si(num(d, "clock_hz"), "Hz"));
  // Only the dtypes the GEMM engine runs have a peak: a composite GEMM in any other is a kernel
  // fault, so a "0 FLOP/s" row would read as a rate where there is none. JSON keeps them all.
  std::vector<std::string> no_gemm;
  bool any_gemm = false;
  if (d.contains("peak_flops_per_s")) {
    for (const auto& [dtype, p] : d["peak_flops_per_s"].items()) {
      if (num(p, "per_pe") <= 0) {
        no_gemm.push_back(dtype);
        continue;
      }
      if (!any_gemm) std::printf("  %-12s%-8s%-16s%s\n", "peak", "dtype", "per PE", "system");
      any_gemm = true;
      const std::string unit = ops_unit(dtype) + "/s";
      std::printf("  %-12s%-8s%-16s%s\n", "", dtype.c_str(),
                  format_si(num(p, "per_pe"), unit).c_str(),
                  format_si(num(p, "system"), unit).c_str());
    }
  }
  if (!no_gemm.empty()) {
    std::string list;
    for (const auto& t : no_gemm) list += (list.empty() ? "" : ", ") + t;
    row(any_gemm ? "" : "peak", "no GEMM in " + list +
                                    " (the spec gives no system.pe.gemm.peak_TFLOPS for " +
                                    (no_gemm.size() == 1 ? "it" : "them") + ")");
  }
  const auto gbps = [&](const char* key) {
    return format_si(num(d, "bandwidth_GBps", key) * 1e9, "B/s");
  };
  row("NOC", gbps("noc_link") + " per link (each direction)");
  row("HBM", gbps("hbm_per_cube") + " per cube, " + gbps("hbm_system") + " system; " +
                 format_bytes(num(d, "hbm_capacity_bytes", "per_cube")) + " per cube, " +
                 format_bytes(num(d, "hbm_capacity_bytes", "system")) + " system");
  if (const auto& h = d["hbm"]; h.is_object() && h.contains("banked")) {
    const auto& b = h["banked"];
    const auto ns = [&](const char* key) {
      return format_duration_ps(static_cast<emu::Tick>(num(b, key) * 1e3));
    };
    row("", "banked: " + b["bank_groups"].dump() + " bank groups x " + b["banks_per_group"].dump() +
                " banks per channel, " + format_bytes(num(b, "row_bytes")) + " rows (" +
                b["row_policy"].get<std::string>() + "), tRCD/tCL/tRP " + ns("trcd_ns") + "/" +
                ns("tcl_ns") + "/" + ns("trp_ns") + ", refresh " + ns("trfc_ns") + " every " +
                ns("trefi_ns") + "; a long stream " +
                format_si(num(b, "stream_GBps_per_cube") * 1e9, "B/s") + " per cube");
  }
  if (const auto& k = d["cache"]; k.is_object())
    row("cache",
        format_bytes(num(k, "size_bytes")) + " per cube (" + k["model"].get<std::string>() + ", " +
            k["ways"].dump() + " ways of " + k["line_bytes"].dump() + "-byte lines), " +
            format_si(num(k, "bandwidth_GBps") * 1e9, "B/s") + ", " +
            format_duration_ps(static_cast<emu::Tick>(num(k, "hit_latency_ns") * 1e3)) + " a hit");
  // The spec holds UCIe and inter-SIP links even when there is nothing for them to join.
  const bool one_cube = num(d, "cubes_per_sip") == 1, one_sip = num(d, "sips") == 1;
  std::string ucie_shape, sip_shape;
  if (d.contains("sip_grid") && d["sip_grid"].size() == 2)
    sip_shape = " " + d["sip_grid"][0].dump() + "x" + d["sip_grid"][1].dump();
  if (d.contains("ucie_mesh") && d["ucie_mesh"].size() == 2)
    ucie_shape = " " + d["ucie_mesh"][0].dump() + "x" + d["ucie_mesh"][1].dump();
  // "512 GB/s per link, 4 links per side (2.05 TB/s)"
  const auto links = [&](const char* bandwidth_key, const char* connections_key,
                         const char* between) {
    const double n = num(d, connections_key);
    if (n <= 1) return gbps(bandwidth_key) + " per link";
    return gbps(bandwidth_key) + " per link, " + std::to_string(static_cast<int>(n)) +
           " links per " + between + " (" +
           format_si(num(d, "bandwidth_GBps", bandwidth_key) * 1e9 * n, "B/s") + ")";
  };
  // A switch's crossing is two links and the crossbar: "switch, 112 ns a crossing".
  const auto graph = [&](const char* key, const char* crossing_key, const std::string& shape) {
    const std::string kind = d.value(key, "?");
    if (kind != "switch") return kind + shape;
    char ns[32];
    std::snprintf(ns, sizeof ns, "%.6g ns", num(d, "crossing_ns", crossing_key));
    std::string out = kind + ", " + ns + " a crossing (link up, crossbar, link down)";
    const nlohmann::json& r = d["switch_reduction"][crossing_key];
    if (r.is_null()) return out;
    std::string dtypes;
    for (const auto& t : r["dtypes"]) dtypes += (dtypes.empty() ? "" : ", ") + t.get<std::string>();
    return out + "; reduces " + dtypes + " in the switch at " +
           format_si(r["bandwidth_GBps"].get<double>() * 1e9, "B/s") + " per link up";
  };
  const bool ucie_switch = d.value("ucie_topology", "") == "switch";
  const bool sip_switch = d.value("inter_sip_topology", "") == "switch";
  row("UCIe", links("ucie_link", "ucie_connections", ucie_switch ? "port" : "side") + ", " +
                  graph("ucie_topology", "ucie", ucie_shape) +
                  (one_cube ? " (unused: 1 cube per SIP)" : ""));
  row("inter-SIP",
      links("inter_sip_link", "inter_sip_connections", sip_switch ? "port" : "pair of SIPs") +
          ", " + graph("inter_sip_topology", "inter_sip", sip_shape) +
          (one_sip ? " (unused: 1 SIP)" : ""));
  // "48.0 KiB per input port, 6 VCs (3 classes), credits 1 ns" or "unbounded".
  const auto buffer = [&](const char* key) {
    const nlohmann::json& b = d["buffers"][key];
    const double bytes = b["input_buffer_bytes"].get<double>();
    if (bytes == 0) return std::string("unbounded");
    const int vcs = b["virtual_channels"].get<int>(), classes = b["classes"].get<int>();
    return format_bytes(bytes) + " per input port, " + std::to_string(vcs) + " VC" +
           (vcs == 1 ? "" : "s") + " (" + std::to_string(classes) + " class" +
           (classes == 1 ? "" : "es") + "), credits " +
           emu::format_time(b["credit_latency_ps"].get<emu::Tick>());
  };
  row("buffers", "routers " + buffer("router") + "; UCIe " + buffer("ucie") + "; inter-SIP " +
                     buffer("inter_sip"));
  const nlohmann::json& router = d["router"];
  const int cycles = router["pipeline_cycles"].get<int>();
  row("router", (cycles == 0 ? std::string("no pipeline of its own (in the hop latency)")
                             : "pipeline " + std::to_string(cycles) + " cycles (" +
                                   emu::format_time(router["pipeline_ps"].get<emu::Tick>()) +
                                   ") per router crossed") +
                    "; input speedup " + std::to_string(router["input_speedup"].get<int>()) +
                    "; allocation " + router["allocation"].get<std::string>());
  const nlohmann::json& banks = d["sram_banks"];
  row("SRAM", format_bytes(num(d, "sram_bytes_per_pe")) + " per PE; tiles read through " +
                  banks["banks"].dump() + " banks of " + banks["bank_bytes"].dump() + " B (" +
                  banks["mapping"].get<std::string>() + ")");
  {
    const nlohmann::json& h = d["host"];
    const nlohmann::json& io = h["io_die"];
    std::string cubes, nodes;
    for (const auto& c : io["cubes"]) cubes += (cubes.empty() ? "" : ", ") + c.dump();
    for (const auto& n : io["nodes"])
      nodes += (nodes.empty() ? "[" : ", [") + n[0].dump() + ", " + n[1].dump() + "]";
    const auto gbps_of = [](double v) { return format_si(v * 1e9, "B/s"); };
    row("host", gbps_of(h["link_bandwidth_GBps"].get<double>()) + " per SIP each way, " +
                    emu::format_time(h["link_latency_ps"].get<emu::Tick>()) + " one way, " +
                    emu::format_time(h["setup_ps"].get<emu::Tick>()) +
                    " setup per transfer; the IO die joins cube" +
                    (io["cubes"].size() == 1 ? " " : "s ") + cubes + " of each SIP on node" +
                    (io["nodes"].size() == 1 ? " " : "s ") + nodes + " (" +
                    gbps_of(io["bandwidth_GBps"].get<double>()) + " per port, " +
                    emu::format_time(io["latency_ps"].get<emu::Tick>()) + " across)");
  }
  if (const auto& e = d["energy"]; e.is_object()) {
    const auto pj = [&e](const char* key) { return format_number(num(e, key)); };
    std::string flops;
    for (const auto& [t, v] : e["gemm_pJ_per_flop"].items())
      flops += (flops.empty() ? "" : ", ") + t + " " + format_number(v.get<double>());
    row("energy",
        "pJ per byte: NOC " + pj("noc_pJ_per_byte") + ", UCIe " + pj("ucie_pJ_per_byte") +
            ", inter-SIP " + pj("inter_sip_pJ_per_byte") + ", HBM " + pj("hbm_pJ_per_byte") +
            ", cache " + pj("cache_pJ_per_byte") + ", SRAM " + pj("sram_pJ_per_byte") + "; " +
            pj("vector_pJ_per_element") +
            " pJ per vector element; GEMM pJ per FLOP: " + (flops.empty() ? "none" : flops) +
            "; static " + format_si(num(e, "static_W_per_pe"), "W") + " per PE (" +
            format_si(num(e, "static_W_per_pe") * num(d, "total_pes"), "W") + " system)");
  }
  print_messages(d);
  row("links", std::to_string(static_cast<long long>(num(d, "links"))) + " modelled links");
  print_port_capacities(ports);
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
