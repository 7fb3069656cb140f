#pragma once
// What the cubesim subcommands share: the shape of a subcommand, loading a spec with its --set
// overrides, checking output paths before a long run, and writing JSON files.

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
#include "triton_emu/simulation.hpp"

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

// -p NAME=VALUE assignments -> the kernel's parameters (kernels::parse_params), after checking
// what that parser would accept silently: a NAME given twice (the last would win) and numbers
// that are not plain decimal (std::stoll's base 0 reads 016 as octal 14 and 0x10 as 16, stod
// reads hex floats). UsageError naming the assignment and the form to write.
kernels::Params parse_kernel_params(const kernels::KernelInfo& kernel,
                                    const std::vector<std::string>& assignments);

// "65536", "64K", "64KiB", "1M", "1MiB", "2G": bytes, with binary (1024) multipliers.
// UsageError naming `flag` for anything else.
std::uint64_t parse_byte_size(std::string_view text, std::string_view flag);

// A span of simulated time "START:END" (--trace-window): each a number with a unit ps, ns, us, ms
// or s ("0:10us", "1.5us:2us"); START left out is 0, END left out is the end of the run.
// UsageError naming `flag` for anything else, or when START is not before END.
std::pair<std::uint64_t, std::uint64_t> parse_time_window(std::string_view text,
                                                          std::string_view flag);

// A duration of simulated time with a unit, as in parse_time_window ("10us"); UsageError naming
// `flag` otherwise.
std::uint64_t parse_duration(std::string_view text, std::string_view flag);

// --stack-size: bytes with an optional K/M/G suffix, 16K to 1G (UsageError otherwise).
std::uint64_t parse_stack_size(const std::string& text);

// --grid: "hardware" (one program per PE, the default) or a logical grid "X", "XxY" or
// "XxYxZ" of 1 to 2^31 - 1 programs per axis (UsageError otherwise).
Grid parse_grid(const std::string& text);
// The text parse_grid reads back.
std::string grid_text(const Grid& grid);

// UsageError unless `path` could be created: its folder exists, is a folder, and a file can be
// made in it; `path` is not a folder itself. Checked before a run so a typo does not cost the
// whole simulation.
void check_output_path(const std::string& path, std::string_view flag);

// UsageError when two of the (flag, path) outputs name the same file (empty paths are unused).
void check_distinct_outputs(
    const std::vector<std::pair<std::string_view, std::string>>& flag_paths);

// The check of an unsigned 64-bit option (--seed): a whole number from 0 to 2^64 - 1; its
// message ends with `example` of a good value. CLI11's
// own would wrap -1 around, and NonNegativeNumber prints its range as 309 digits.
CLI::Validator unsigned_64_validator(std::string example);

// Writes what `fill` streams to a temporary file beside `path` (named by process id, so
// concurrent writers do not collide) and renames it over `path`, so a reader never sees half a
// file. UsageError when it cannot.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& fill);

// write_file of `j`, indented (to_pretty_json).
void write_json_file(const std::string& path, const nlohmann::json& j);

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

// A 2-space-indented dump with a trailing newline.
std::string to_pretty_json(const nlohmann::json& j);

}  // namespace cubesim::cli
