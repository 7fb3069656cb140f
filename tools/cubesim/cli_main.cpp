// The cubesim command line: parses, loads plugins, hands over to one subcommand (run, sweep,
// validate, info, list), and turns every error into one line on stderr and the exit code of its
// category (DESIGN.md "User-facing contracts"). The subcommands live in *_command.cpp.

#include "tools/cubesim/cli_main.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "components/spec/spec.hpp"
#include "emu/log.hpp"
#include "kernels/plugin.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/progress_line.hpp"
#include "tools/cubesim/sweep_mpi.hpp"
#include "triton_emu/errors.hpp"

namespace {

using cubesim::ExitCode;

constexpr int code(ExitCode c) {
  return static_cast<int>(c);
}

// The first word that is neither an option nor the value of --log-level or --load: what the user
// meant as a subcommand when CLI11 found none.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--log-level" || a == "--load") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] != '-') return a;
  }
  return "";
}

int parse_error(CLI::App& app, const CLI::ParseError& e, int argc, char** argv,
                const std::vector<cubesim::cli::Command>& commands) {
  // --help and --version are "errors" that exit 0 after printing.
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  const auto parsed = app.get_subcommands();
  std::string names;
  for (const auto& c : commands) names += (names.empty() ? "" : ", ") + c.app->get_name();
  std::string message = e.what();
  // CLI11 says "argument not expected" for a misspelt subcommand: say what it was meant to be.
  if (parsed.empty() && (e.get_name() == "ExtrasError" || e.get_name() == "RequiredError")) {
    const std::string word = first_word(argc, argv);
    bool known = false;
    for (const auto& c : commands) known = known || c.app->get_name() == word;
    if (word.empty())
      message = "no subcommand given; the subcommands are: " + names;
    else if (!known)
      message = "unknown subcommand '" + word + "'; the subcommands are: " + names;
  }
  const std::string help =
      parsed.empty() ? "cubesim --help" : "cubesim " + parsed.front()->get_name() + " --help";
  std::cerr << "cubesim: " << message << "\nRun '" << help << "' for usage.\n";
  return code(ExitCode::usage);
}

// One message for a spec with several problems, each on its own line.
void print_spec_error(const cubesim::components::SpecError& e) {
  if (e.issues().size() == 1) {
    std::cerr << "cubesim: " << e.issues().front().message() << "\n";
    return;
  }
  std::cerr << "cubesim: invalid spec (" << e.issues().size() << " problems):\n";
  for (const auto& issue : e.issues()) std::cerr << "  " << issue.message() << "\n";
}

// The built-in kernels of this program, then CUBESIM_PLUGINS (':'-separated), then --load.
void add_kernels(const std::vector<cubesim::cli::RegisterKernels>& built_in,
                 const std::vector<std::string>& plugins) {
  auto& registry = cubesim::kernels::kernel_registry();
  for (const auto& add : built_in) add(registry);
  if (const char* env = std::getenv("CUBESIM_PLUGINS"); env != nullptr) {
    const std::string list = env;
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(':', start), list.size());
      if (end > start) cubesim::kernels::load_plugin(list.substr(start, end - start), registry);
      start = end + 1;
    }
  }
  for (const auto& p : plugins) cubesim::kernels::load_plugin(p, registry);
}

}  // namespace

int cubesim::cli::cubesim_main(int argc, char** argv,
                               const std::vector<RegisterKernels>& built_in) {
  CLI::App app{
      "cubesim: an emulator and discrete-event simulator of chiplet accelerators (SIPs of cubes "
      "of PEs), programmed Triton-style.\nKernels run one program per PE as fibers in "
      "simulated time; data really moves and GEMMs really compute.",
      "cubesim"};
  app.set_version_flag("--version", std::string("cubesim ") + CUBESIM_VERSION);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level,
                 "Logging on stderr: trace, debug, info, warn, error, "
                 "critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  std::vector<std::string> plugins;
  app.add_option("--load", plugins,
                 "Add the kernels of a plugin library (repeatable): cubesim --load ./libmine.so "
                 "run SPEC mykernel; docs/writing-kernels.md says how to build one")
      ->type_name("FILE")
      ->allow_extra_args(false);
  bool quiet_flag = false, progress_flag = false;
  app.add_flag("--quiet,-q", quiet_flag,
               "No progress line on stderr (it is drawn only on a terminal anyway)");
  app.add_flag("--progress", progress_flag,
               "Report progress on stderr even when it is not a terminal: a line a second")
      ->excludes("--quiet");
  // Global options may also follow the subcommand (cubesim run ... --log-level debug).
  app.fallthrough();
  app.require_subcommand(1);
  app.footer(
      "Run 'cubesim SUBCOMMAND --help' for a subcommand's options; docs/cli.md has the full "
      "reference.\n"
      "Exit codes: 0 ok, 1 verification failed, 2 usage or spec error, 3 kernel fault "
      "(out-of-bounds or misaligned address, SRAM overflow, stack overflow, bad axis, a kernel "
      "that dies of a signal), "
      "4 deadlock.");

  const std::vector<cubesim::cli::Command> commands = {
      cubesim::cli::add_run_command(app),      cubesim::cli::add_sweep_command(app),
      cubesim::cli::add_validate_command(app), cubesim::cli::add_info_command(app),
      cubesim::cli::add_list_command(app),     cubesim::cli::add_traffic_command(app),
      cubesim::cli::add_probe_command(app),
  };
  const cubesim::cli::Command worker = cubesim::cli::add_sweep_worker_command(app);

  // Under mpirun every rank of a sweep parses the same command line: only rank 0 says what is
  // wrong.
  const bool quiet = cubesim::cli::sweep::launched_rank() != 0 && first_word(argc, argv) == "sweep";
  if (quiet) std::cerr.setstate(std::ios::badbit);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e, argc, argv, commands);
  }
  try {
    cubesim::emu::set_log_level(log_level);
    cubesim::cli::set_progress_mode(quiet_flag      ? cubesim::cli::ProgressMode::never
                                    : progress_flag ? cubesim::cli::ProgressMode::always
                                                    : cubesim::cli::ProgressMode::automatic);
    add_kernels(built_in, plugins);
    if (app.got_subcommand(worker.app)) return worker.run();
    for (const auto& c : commands)
      if (app.got_subcommand(c.app)) return c.run();
    return code(ExitCode::usage);  // unreachable: require_subcommand(1)
  } catch (const cubesim::components::SpecError& e) {
    print_spec_error(e);
    return code(ExitCode::usage);
  } catch (const cubesim::Error& e) {
    std::cerr << "cubesim: " << e.what() << "\n";
    return code(e.exit_code());
  } catch (const std::bad_alloc&) {
    // --timing-only is worth suggesting only to a run that stores data.
    bool stores_data = false;
    for (const auto& c : commands)
      if (app.got_subcommand(c.app) && c.app->get_name() == "run") {
        const CLI::Option* t = c.app->get_option_no_throw("--timing-only");
        stores_data = t != nullptr && t->count() == 0;
      }
    std::cerr << "cubesim: error: out of host memory while " << cubesim::cli::phase()
              << "; run a smaller system or problem, "
              << (stores_data ? "use --timing-only (no data is stored), " : "")
              << "or free memory\n";
    return code(ExitCode::kernel_fault);
  } catch (const std::exception& e) {
    // Anything else ended the run (a time overflow, memory exhaustion): a failed run, not a
    // wrong command line.
    std::cerr << "cubesim: error: " << e.what() << "\n";
    return code(ExitCode::kernel_fault);
  }
}
