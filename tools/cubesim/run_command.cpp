// cubesim run SPEC KERNEL: runs one kernel's harness on one spec and reports.

#include <chrono>
#include <iostream>
#include <memory>

#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/report.hpp"
#include "tools/cubesim/summary.hpp"
#include "triton_emu/simulation.hpp"

namespace cubesim::cli {

namespace {

struct RunArgs {
  std::string spec;
  std::string kernel;
  std::vector<std::string> params;
  std::vector<std::string> sets;
  bool timing_only = false;
  std::string backend = "cpu";
  std::string json_file;
  std::string trace_file;
  std::uint64_t seed = 1;
  std::string stack_size = "64K";
  std::string network = "packet";
};

int run(const RunArgs& a) {
  // Everything the command line can get wrong is checked before the simulation starts.
  const components::Spec spec = load_spec(a.spec, a.sets);
  const kernels::KernelInfo& kernel = kernels::find_kernel(a.kernel);
  const kernels::Params params = parse_kernel_params(kernel, a.params);
  const std::uint64_t stack = parse_stack_size(a.stack_size);
  if (!a.json_file.empty()) check_output_path(a.json_file, "--json");
  if (!a.trace_file.empty()) check_output_path(a.trace_file, "--trace");

  SimOptions options;
  options.timing_only = a.timing_only;
  options.backend = a.backend;
  options.seed = a.seed;
  options.stack_size = stack;
  options.trace_path = a.trace_file;
  options.network = components::parse_network_model(a.network);
  options.record_accesses = false;  // the access log serves sharding checks in tests, not runs
  const std::unique_ptr<Simulation> sim = make_simulation(spec, options);
  sim->set_kernel_name(kernel.name);

  const auto wall0 = std::chrono::steady_clock::now();
  const kernels::Outcome outcome = kernel.run(*sim, params);
  const double harness_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  RunRequest request{a.spec, a.sets, kernel.name, params, a.seed, stack, a.trace_file};
  const nlohmann::json report =
      build_report(request, spec, describe_system(sim->system()), outcome, harness_wall);

  std::vector<std::string> order;
  for (const auto& p : kernel.params) order.push_back(p.name);
  print_summary(std::cout, report, order);
  std::cout.flush();
  if (!a.json_file.empty()) write_json_file(a.json_file, report);

  if (outcome.verified.has_value() && !*outcome.verified) {
    std::cerr << "cubesim: verification failed: " << kernel.name << " max rel error "
              << format_number(outcome.max_rel_error) << " exceeds the tolerance "
              << format_number(outcome.tolerance) << "\n";
    return static_cast<int>(ExitCode::verification_failed);
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "Run a kernel on a system spec and summarise it");

  sub->add_option("SPEC", args->spec, "System spec file (JSON), e.g. specs/default.json")
      ->required();
  sub->add_option("KERNEL", args->kernel, "Kernel to run ('cubesim list' shows them)")->required();
  sub->add_option("-p,--param", args->params,
                  "Kernel parameter NAME=VALUE, e.g. -p M=512; repeatable. Unset parameters "
                  "take their defaults.")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  sub->add_option("--set", args->sets, kSetHelp)
      ->allow_extra_args(false)
      ->type_name("JSON.PATH=VALUE");
  sub->add_flag("--timing-only", args->timing_only,
                "Skip data and GEMM numerics (much faster); simulated time is identical, "
                "verification is skipped");
  sub->add_option("--backend", args->backend,
                  "Backend that computes GEMM numbers (never affects simulated time): cpu, or "
                  "cuda / metal where built")
      ->check(CLI::IsMember({"cpu", "cuda", "metal"}))
      ->capture_default_str();
  sub->add_option("--json", args->json_file,
                  "Write the full report (JSON) to FILE; written also when verification fails")
      ->type_name("FILE");
  sub->add_option("--trace", args->trace_file,
                  "Write a Chrome/Perfetto trace (one track per PE, GEMM engine and busy link) "
                  "to FILE; open it in ui.perfetto.dev")
      ->type_name("FILE");
  sub->add_option("--network", args->network,
                  "Network model: packet (every packet and hop; the reference) or flow (one "
                  "reservation per transfer and link: far faster on large systems, approximate "
                  "when transfers contend)")
      ->check(CLI::IsMember({"packet", "flow"}))
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the harness's random inputs")
      ->check(CLI::NonNegativeNumber)  // CLI11 would wrap -1 to 2^64 - 1 silently
      ->capture_default_str();
  sub->add_option("--stack-size", args->stack_size,
                  "Fiber stack per PE program, in bytes with an optional K/M/G suffix "
                  "(1024-based), 16K to 1G; raise it if a kernel overflows its stack")
      ->type_name("BYTES")
      ->capture_default_str();
  sub->footer(
      "The kernel's harness draws seeded inputs, launches one program per PE and checks the "
      "result against an fp64 reference. The summary gives simulated time, achieved FLOP/s "
      "against the system peak, bytes over HBM / NOC / UCIe / inter-SIP, the busiest link and "
      "the verification result; --json gives everything (docs/cli.md lists the keys).\n\n"
      "Examples:\n"
      "  cubesim run specs/default.json sharded_gemm -p M=256 -p K=512 -p N=4096\n"
      "  cubesim run specs/default.json sharded_gemm --set system.ucie.bandwidth_GBps=512 "
      "--timing-only\n"
      "  cubesim run specs/tiny.json vector_add --json report.json --trace trace.json\n"
      "Global options (--log-level L) may follow the subcommand.\n"
      "Exit codes: 0 ok, 1 verification failed, 2 usage or spec error, 3 kernel fault, "
      "4 deadlock.");
  return {sub, [args] { return run(*args); }};
}

}  // namespace cubesim::cli
