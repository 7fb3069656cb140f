#include "tools/cubesim/report.hpp"

#include <optional>

namespace cubesim::cli {

using nlohmann::json;

namespace {

// The dtype the run's FLOPs are counted in, for the peak to compare with: the kernel's
// "dtype" parameter, else what its harness reported; none for kernels without one.
std::optional<std::string> run_dtype(const kernels::Params& params, const json& details) {
  for (const json* j : {&params, &details})
    if (j->is_object() && j->contains("dtype") && (*j)["dtype"].is_string())
      return (*j)["dtype"].get<std::string>();
  return std::nullopt;
}

double per_second(std::uint64_t amount, std::uint64_t ps) {
  return ps == 0 ? 0.0 : static_cast<double>(amount) * 1e12 / static_cast<double>(ps);
}

}  // namespace

json host_report(const Simulation& sim, const kernels::Outcome& outcome) {
  if (outcome.inputs.empty() && outcome.outputs.empty()) return nullptr;
  json r = json::object();
  emu::Tick host = 0;
  for (const auto& [direction, buffers] : {std::pair{HostDirection::to_device, &outcome.inputs},
                                           std::pair{HostDirection::to_host, &outcome.outputs}}) {
    const HostTransfer t = sim.host_time(direction, *buffers);
    host += t.time;
    r[components::host_direction_name(direction)] = {
        {"bytes", t.bytes},          {"buffers", buffers->size()},
        {"time_ps", t.time},         {"setup_ps", t.setup},
        {"latency_ps", t.latency},   {"serialisation_ps", t.serialisation},
        {"bottleneck", t.bottleneck}};
  }
  r["time_ps"] = host;
  r["end_to_end_ps"] = host + outcome.run.sim_time_ps;
  return r;
}

json build_report(const RunRequest& request, const components::Spec& spec,
                  const json& system_description, const kernels::Outcome& outcome,
                  double harness_wall_seconds) {
  json r = outcome.run.report.is_object() ? outcome.run.report : json::object();
  const std::uint64_t sim_ps = outcome.run.sim_time_ps;
  const bool checked = outcome.verified.has_value();

  r["cubesim_version"] = CUBESIM_VERSION;
  r["spec"] = spec.config().name;
  r["spec_file"] = request.spec_file;
  r["overrides"] = request.overrides;
  r["kernel"] = request.kernel;
  r["params"] = request.params;
  r["seed"] = request.seed;
  r["stack_size_bytes"] = request.stack_size;
  r["trace_file"] = request.trace_file.empty() ? json(nullptr) : json(request.trace_file);
  r["sim_time_ps"] = sim_ps;

  r["verified"] = checked ? json(*outcome.verified) : json(nullptr);
  r["max_rel_error"] = checked ? json(outcome.max_rel_error) : json(nullptr);
  r["tolerance"] = checked ? json(outcome.tolerance) : json(nullptr);
  r["elements_checked"] = outcome.elements_checked;
  r["status"] = checked && !*outcome.verified ? "verification_failed" : "ok";

  r["useful_flops"] = outcome.useful_flops;
  r["useful_bytes"] = outcome.useful_bytes;
  r["achieved_flops_per_second"] = per_second(outcome.useful_flops, sim_ps);
  r["achieved_bytes_per_second"] = per_second(outcome.useful_bytes, sim_ps);
  const auto dtype = run_dtype(request.params, outcome.details);
  r["dtype"] = dtype ? json(*dtype) : json(nullptr);
  json peak = nullptr;
  if (dtype && system_description.contains("peak_flops_per_s")) {
    const json& p = system_description["peak_flops_per_s"];
    if (p.contains(*dtype) && p[*dtype].contains("system")) peak = p[*dtype]["system"];
  }
  r["peak_flops_per_second"] = peak;
  // The peak is the GEMM engines': a kernel that ran no GEMM (vector_add's adds) has no share
  // of it to report.
  const bool gemm = outcome.run.stats.flops > 0;
  r["peak_fraction"] = gemm && peak.is_number() && peak.get<double>() > 0
                           ? json(r["achieved_flops_per_second"].get<double>() / peak.get<double>())
                           : json(nullptr);

  // RunResult gives the counts the tests need; add the topology and peaks from describe().
  json system = r.value("system", json::object());
  for (const auto& [key, value] : system_description.items())
    if (!system.contains(key)) system[key] = value;
  r["system"] = std::move(system);

  r["details"] = outcome.details;
  r["harness_wall_seconds"] = harness_wall_seconds;
  r["spec_document"] = spec.json();
  return r;
}

}  // namespace cubesim::cli
