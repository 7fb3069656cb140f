#pragma once
// What the cubesim subcommands share: the shape of a subcommand, loading a spec with its --set
// overrides, and making and running a simulation. Option values are read in option_values.hpp,
// output files checked and written in output_files.hpp.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "components/spec/spec.hpp"
#include "components/system/system.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::cli {

// A subcommand: its CLI11 app (so main can tell which one was given) and what runs it once the
// command line has parsed. run() returns the exit code or throws (main maps errors to codes).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_run_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_traffic_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
// Internal: the worker process of a local sweep (hidden from --help).
Command add_sweep_worker_command(CLI::App& app);

// The help text of --set, shared by run and info.
inline constexpr const char* kSetHelp =
    "Override a spec field by its dotted path, e.g. --set system.ucie.bandwidth_GBps=512; VALUE "
    "is JSON when it parses as JSON, else a string. Repeatable; all are applied together, then "
    "validated once.";

// System::describe() plus the UCIe mesh shape ("ucie_mesh": [x, y]) when the cubes of a SIP
// form a mesh: for `info --json` and the run report's "system".
nlohmann::json describe_system(const components::System& system);

// The rate unit for a dtype's peak: integer GEMMs do operations, not floating-point ones.
std::string ops_unit(std::string_view dtype);

// What the command is doing now, for the message when the host runs out of memory: main reports
// a std::bad_alloc as "out of host memory while PHASE" (exit 3). Commands set it as they go.
void set_phase(std::string phase);
const std::string& phase();

// Spec::load, then every --set at once (so fields that must change together can).
components::Spec load_spec(const std::string& file, const std::vector<std::string>& sets);

// A simulation of `spec`. A failure that is the user's setup rather than a cubesim error (a
// trace file that cannot be opened, a backend that cannot start) becomes a UsageError.
std::unique_ptr<Simulation> make_simulation(const components::Spec& spec,
                                            const SimOptions& options);
// CUBESIM_MEMORY_LIMIT as bytes (0 when unset): the host memory a system may take.
std::uint64_t memory_limit_from_environment();

// kernel.run(sim, params), with cubesim's last words ready should the kernel's code die of a
// signal (a segfault, an abort): they name the kernel, the plugin it came from and the PE whose
// program ran, and the exit code is 3 (kernels/last_words.hpp).
kernels::Outcome run_kernel(const kernels::KernelInfo& kernel, Simulation& sim,
                            const kernels::Params& params);

}  // namespace cubesim::cli
