#pragma once
// The kernels the CLI runs, each with its host harness: named, typed parameters with defaults
// and ranges, input generation (seeded), the launch, and verification against an fp64
// reference. The shipped kernels and users' own go through one path, Registry::add: the shipped
// list is explicit (registry.cpp), users' kernels come from an explicit call (a plugin's entry
// point, kernels/plugin.hpp, or their own main), so no registration can be dropped by the linker.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triton_emu/launch/simulation.hpp"

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
  // What a host moves for the kernel: its inputs to the device before the launches and its
  // outputs back after them (`cubesim run --host` times both over system.host).
  std::vector<HostBuffer> inputs, outputs;
};

struct KernelInfo {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  // Runs the harness on a simulation; throws UsageError for parameters the kernel cannot
  // shard on this system (saying why and what would work).
  std::function<Outcome(Simulation&, const Params&)> run;
  // The sweep column a study of it plots unless --metric says otherwise (a collective's is
  // its bus bandwidth, details.busbw_GBps).
  std::string default_metric = "sim_time_ps";
};

// Kernels by name. Contract: add() checks the kernel (a usable name, a description, a run
// function, parameters whose defaults have their type and lie in their range and choices) and
// refuses a name already present, with a UsageError naming the kernel and the fix. Kernels are
// never removed, and references to them stay valid while others are added.
class Registry final {
 public:
  void add(KernelInfo kernel);
  const std::deque<KernelInfo>& kernels() const { return kernels_; }
  // UsageError listing the kernels when `name` is unknown.
  const KernelInfo& find(std::string_view name) const;
  // "cubesim" for a shipped kernel, else the plugin file or "your program" that added it.
  const std::string& origin(std::string_view name) const;
  // The plugin files loaded into this registry (absolute paths), in load order.
  const std::vector<std::filesystem::path>& plugins() const { return plugins_; }

 private:
  friend void load_plugin(const std::filesystem::path& file, Registry& registry);
  friend Registry& kernel_registry();
  std::deque<KernelInfo> kernels_;
  std::map<std::string, std::string, std::less<>> origins_;
  std::vector<std::filesystem::path> plugins_;
  std::string adding_from_ = "your program";
};

// The shipped kernels, added in the order `cubesim list` shows them.
void register_shipped_kernels(Registry& registry);

// The process's registry, the one the CLI lists and runs: the shipped kernels, then whatever
// register_kernel and load_plugin added.
Registry& kernel_registry();
// kernel_registry().add(kernel).
void register_kernel(KernelInfo kernel);
const std::deque<KernelInfo>& registry();
// UsageError listing the kernels when `name` is unknown.
const KernelInfo& find_kernel(std::string_view name);
// "-p NAME=VALUE" assignments -> Params; UsageError for an unknown name (listing the valid
// ones), a value of the wrong type, or out of range.
Params parse_params(const KernelInfo& kernel, const std::vector<std::string>& assignments);
// A one-object-per-parameter description for `cubesim list`.
nlohmann::json describe(const KernelInfo& kernel);

}  // namespace cubesim::kernels
