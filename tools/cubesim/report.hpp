#pragma once
// The `cubesim run --json` report: the simulation's own report (RunResult::report, made from
// its RunStats) plus what the CLI and the kernel's harness know (spec, kernel, parameters,
// verification, useful work). The human summary (summary.hpp) is printed from this same object
// and those statistics, so the two never disagree.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "components/spec/spec.hpp"
#include "kernels/registry.hpp"

namespace cubesim::cli {

// How the run was asked for: the command line after validation.
struct RunRequest {
  std::string spec_file;
  std::vector<std::string> overrides;  // the --set assignments, in order
  std::string kernel;
  kernels::Params params;
  std::uint64_t seed = 1;
  std::uint64_t stack_size = 0;
  std::string trace_file;  // "" = none
};

// The report keys that measure the host rather than the simulation are wall_seconds,
// events_per_second and harness_wall_seconds; every other key is a pure function of spec,
// overrides, kernel, parameters and seed (tests/cli checks two runs agree on them).
nlohmann::json build_report(const RunRequest& request, const components::Spec& spec,
                            const nlohmann::json& system_description,
                            const kernels::Outcome& outcome, double harness_wall_seconds);

// `cubesim run --host`: the time to write the kernel's declared inputs to the device (all at
// once, before its launches) and to read its outputs back (after them), over system.host, and
// the run end to end: {"to_device": {...}, "to_host": {...}, "time_ps", "end_to_end_ps"}, each
// direction with bytes, buffers, time_ps, setup_ps, latency_ps, serialisation_ps and its
// bottleneck. Null when the harness declares no buffers (Outcome::inputs, outputs).
nlohmann::json host_report(const Simulation& sim, const kernels::Outcome& outcome);

}  // namespace cubesim::cli
