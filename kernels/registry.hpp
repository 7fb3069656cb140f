#pragma once
// The benchmark kernels the CLI runs, each with its host harness: named, typed parameters with
// defaults and ranges, input generation (seeded), the launch, and verification against an fp64
// reference. The list is explicit (registry.cpp), so no registration can be dropped by the
// linker.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triton_emu/simulation.hpp"

namespace cubesim::kernels {

struct ParamSpec {
  enum class Type { integer, real, string, boolean };
  std::string name;
  Type type = Type::integer;
  nlohmann::json default_value;
  std::optional<double> min{}, max{};  // numbers: inclusive range
  std::vector<std::string> choices{};  // strings: allowed values (empty = any)
  std::string help{};
};

// Validated parameter values by name, every parameter present (defaults filled in).
using Params = nlohmann::json;

struct Outcome {
  RunResult run;                   // the launch (several launches: their sum, see harness)
  std::optional<bool> verified{};  // nullopt when not checked (timing-only)
  double max_rel_error = 0;        // over the elements checked
  double tolerance = 0;            // what max_rel_error had to stay under
  std::uint64_t elements_checked = 0;
  std::uint64_t useful_flops = 0;                     // the problem's FLOPs (for achieved FLOP/s)
  std::uint64_t useful_bytes = 0;                     // the problem's input + output bytes
  nlohmann::json details = nlohmann::json::object();  // kernel-specific notes for the report
};

struct KernelInfo {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  // Runs the harness on a simulation; throws UsageError for parameters the kernel cannot
  // shard on this system (saying why and what would work).
  std::function<Outcome(Simulation&, const Params&)> run;
};

const std::vector<KernelInfo>& registry();
// UsageError listing the kernels when `name` is unknown.
const KernelInfo& find_kernel(std::string_view name);
// "-p NAME=VALUE" assignments -> Params; UsageError for an unknown name (listing the valid
// ones), a value of the wrong type, or out of range.
Params parse_params(const KernelInfo& kernel, const std::vector<std::string>& assignments);
// A one-object-per-parameter description for `cubesim list`.
nlohmann::json describe(const KernelInfo& kernel);

}  // namespace cubesim::kernels
