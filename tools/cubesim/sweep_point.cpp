#include "tools/cubesim/sweep_point.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/option_values.hpp"
#include "tools/cubesim/report.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::cli::sweep {

using nlohmann::json;

namespace {

json number_or_null(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key] : json(nullptr);
}

json base_row(const json& request) {
  json row = json::object();
  row["index"] = request.at("index");
  row["values"] = request.value("values", json::object());
  row["kernel"] = request.value("kernel", "");
  row["params"] = json::object();
  row["overrides"] = request.value("sets", json::array());
  for (const auto& m : metric_columns()) row[m] = nullptr;
  return row;
}

void set_status(json& row, int exit_code, const std::string& error) {
  row["status"] = status_of(exit_code);
  row["exit_code"] = exit_code;
  row["error"] = error;
}

// The row's metrics: the simulation's from its statistics, the rest from the run report.
void fill_metrics(json& row, const RunStats& stats, const json& report) {
  using components::LinkKind;
  const components::LinkStats& network = stats.network;
  row["sim_time_ps"] = stats.sim_time_ps;
  const json host = report.value("host", json(nullptr));
  row["host_time_ps"] = host.is_object() ? host["time_ps"] : json(nullptr);
  row["end_to_end_ps"] = host.is_object() ? host["end_to_end_ps"] : json(nullptr);
  for (const char* k : {"useful_flops", "useful_bytes", "achieved_flops_per_second",
                        "achieved_bytes_per_second", "peak_fraction"})
    row[k] = number_or_null(report, k);
  row["hbm_bytes"] = network.bytes(LinkKind::hbm_channel);
  row["noc_bytes"] = network.bytes(LinkKind::noc);
  row["ucie_bytes"] = network.bytes(LinkKind::ucie);
  row["inter_sip_bytes"] = network.bytes(LinkKind::inter_sip);
  row["cache_hit_rate"] = network.cache ? json(network.cache->hit_rate()) : json(nullptr);
  row["dram_row_hit_rate"] = network.dram ? json(network.dram->row_hit_rate()) : json(nullptr);
  row["energy_J"] = stats.energy ? json(stats.energy->total()) : json(nullptr);
  row["average_power_W"] = stats.energy ? json(stats.energy->average_watts()) : json(nullptr);
  row["messages"] = stats.messages.messages;
  row["message_bytes"] = stats.messages.bytes;
  row["events"] = stats.events;
  if (const components::LinkRecord* b = network.busiest_link()) {
    row["busiest_link"] = b->name;
    row["busiest_link_utilisation"] = network.utilisation(*b);
  }
  row["verified"] = report.value("verified", json(nullptr));
  row["max_rel_error"] = number_or_null(report, "max_rel_error");
  row["wall_seconds"] = number_or_null(report, "harness_wall_seconds");
  const json details = report.value("details", json::object());
  if (details.is_object())
    for (const auto& [k, v] : details.items())
      if (v.is_number()) row["details." + k] = v;
}

}  // namespace

const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> columns = {"sim_time_ps",
                                                   "host_time_ps",
                                                   "end_to_end_ps",
                                                   "useful_flops",
                                                   "achieved_flops_per_second",
                                                   "peak_fraction",
                                                   "useful_bytes",
                                                   "achieved_bytes_per_second",
                                                   "hbm_bytes",
                                                   "noc_bytes",
                                                   "ucie_bytes",
                                                   "inter_sip_bytes",
                                                   "cache_hit_rate",
                                                   "dram_row_hit_rate",
                                                   "energy_J",
                                                   "average_power_W",
                                                   "messages",
                                                   "message_bytes",
                                                   "events",
                                                   "busiest_link",
                                                   "busiest_link_utilisation",
                                                   "verified",
                                                   "max_rel_error",
                                                   "wall_seconds"};
  return columns;
}

bool is_numeric_metric(const std::string& name) {
  if (name.rfind("details.", 0) == 0) return name.size() > 8;
  const auto& m = metric_columns();
  return name != "busiest_link" && name != "verified" &&
         std::find(m.begin(), m.end(), name) != m.end();
}

std::string status_of(int exit_code) {
  switch (exit_code) {
    case 0:
      return "ok";
    case 1:
      return "verification_failed";
    case 2:
      return "usage_error";
    case 3:
      return "kernel_fault";
    case 4:
      return "deadlock";
    default:
      return "crashed";
  }
}

std::string row_problem(const json& row) {
  if (!row.is_object()) return std::string("its row is ") + row.type_name() + ", not an object";
  const auto typed = [&](const char* key, bool (json::*is)() const noexcept,
                         const char* want) -> std::string {
    if (!row.contains(key)) return std::string("its row has no \"") + key + "\"";
    if (!(row[key].*is)())
      return std::string("its row's \"") + key + "\" is " + row[key].type_name() + ", not " + want;
    return "";
  };
  for (const std::string& problem :
       {typed("status", &json::is_string, "a string"),
        typed("exit_code", &json::is_number_integer, "an integer"),
        typed("error", &json::is_string, "a string"), typed("kernel", &json::is_string, "a string"),
        typed("params", &json::is_object, "an object")})
    if (!problem.empty()) return problem;
  const std::string status = row["status"].get<std::string>();
  const std::int64_t code = row["exit_code"].get<std::int64_t>();
  if (code < 0 || code > 4 || status_of(static_cast<int>(code)) != status)
    return "its row's status \"" + status + "\" with exit code " + std::to_string(code) +
           " is not the outcome of a finished run";
  for (const auto& m : metric_columns()) {
    const json v = row.value(m, json(nullptr));
    const bool ok = v.is_null() || (m == "busiest_link" ? v.is_string()
                                    : m == "verified"   ? v.is_boolean()
                                                        : v.is_number());
    if (!ok) return "its row's \"" + m + "\" is " + v.type_name() + ", of the wrong type";
  }
  if (status == "ok" && !row.value("sim_time_ps", json(nullptr)).is_number_unsigned())
    return "its row finished ok without a simulated time";
  for (const auto& [k, v] : row.items())
    if (k.rfind("details.", 0) == 0 && !v.is_number())
      return "its row's \"" + k + "\" is " + v.type_name() + ", not a number";
  return "";
}

json point_request(const Definition& def, const Point& point, bool want_report) {
  return {{"index", point.index},
          {"values", point.values},
          {"spec_file", def.spec_file},
          {"kernel", point.kernel},
          {"sets", point.sets},
          {"params", point.params},
          {"timing_only", def.timing_only},
          {"seed", def.seed},
          {"stack_size", def.stack_size},
          {"backend", def.backend},
          {"network", def.network},
          {"want_report", want_report},
          {"grid", def.grid}};
}

json failed_row(const Point& point, const std::string& status, int exit_code,
                const std::string& error) {
  json request = {{"index", point.index},
                  {"values", point.values},
                  {"kernel", point.kernel},
                  {"sets", point.sets}};
  json row = base_row(request);
  try {
    row["params"] = parse_kernel_params(kernels::find_kernel(point.kernel), point.params);
  } catch (const std::exception&) {
    // validated before the sweep started; leave the parameters out rather than fail here
  }
  row["status"] = status;
  row["exit_code"] = exit_code;
  row["error"] = error;
  return row;
}

json run_point(const json& request, emu::ProgressFn progress) {
  json row = base_row(request);
  json report = nullptr;
  try {
    const kernels::KernelInfo& kernel =
        kernels::find_kernel(request.at("kernel").get<std::string>());
    const kernels::Params params =
        parse_kernel_params(kernel, request.at("params").get<std::vector<std::string>>());
    row["params"] = params;
    const std::string spec_file = request.at("spec_file").get<std::string>();
    const auto sets = request.at("sets").get<std::vector<std::string>>();
    set_phase("reading the spec " + spec_file);
    const components::Spec spec = load_spec(spec_file, sets);

    SimOptions options;
    options.timing_only = request.at("timing_only").get<bool>();
    options.backend = request.at("backend").get<std::string>();
    options.network =
        components::network_models().at(request.value("network", "packet"), "--network").model;
    options.seed = request.at("seed").get<std::uint64_t>();
    options.stack_size = request.at("stack_size").get<std::uint64_t>();
    options.grid = parse_grid(request.value("grid", "hardware"));
    options.record_accesses = false;  // sharding checks are for tests, not sweeps
    options.progress = std::move(progress);
    set_phase("building the system of " + std::to_string(spec.config().total_pes()) + " PEs");
    const std::unique_ptr<Simulation> sim = make_simulation(spec, options);
    sim->set_kernel_name(kernel.name);
    set_phase("running " + kernel.name + " (its inputs, launches and checks)");
    const auto wall0 = std::chrono::steady_clock::now();
    const kernels::Outcome outcome = run_kernel(kernel, *sim, params);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    RunRequest run_request{spec_file,          sets, kernel.name, params, options.seed,
                           options.stack_size, ""};
    report = build_report(run_request, spec, describe_system(sim->system()), outcome, wall);
    report["host"] = host_report(*sim, outcome);
    fill_metrics(row, outcome.run.stats, report);
    const bool failed = outcome.verified.has_value() && !*outcome.verified;
    set_status(row, failed ? 1 : 0,
               failed
                   ? "verification failed: max rel error " + std::to_string(outcome.max_rel_error) +
                         " exceeds the tolerance " + std::to_string(outcome.tolerance)
                   : "");
  } catch (const components::SpecError& e) {
    set_status(row, 2, e.what());
  } catch (const Error& e) {
    set_status(row, static_cast<int>(e.exit_code()), e.what());
  } catch (const std::bad_alloc&) {
    set_status(row, 3, "out of host memory while " + phase());
  } catch (const std::exception& e) {
    set_status(row, 3, std::string("error: ") + e.what());
  }
  if (!request.value("want_report", false)) report = nullptr;
  return {{"row", std::move(row)}, {"report", std::move(report)}};
}

}  // namespace cubesim::cli::sweep
