// cubesim run SPEC KERNEL: runs one kernel's harness on one spec and reports.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <tuple>

#include "components/spec/spec_paths.hpp"
#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/name_options.hpp"
#include "tools/cubesim/option_values.hpp"
#include "tools/cubesim/output_files.hpp"
#include "tools/cubesim/progress_line.hpp"
#include "tools/cubesim/report.hpp"
#include "tools/cubesim/summary.hpp"
#include "triton_emu/launch/simulation.hpp"

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
  std::string trace_links = "busy";
  std::vector<std::string> trace_pes;
  std::string trace_window;
  std::string trace_link_gap = "10us";
  std::string trace_max_bytes = "1G";
  std::uint64_t trace_max_events = 0;
  bool trace_flows = false;
  std::uint64_t seed = 1;
  std::string stack_size = "64K";
  std::string network = "packet";
  std::string grid = "hardware";
  bool host = false;
  bool trace_summary = false;
};

// SIGINT / SIGTERM during a run: remove the unfinished trace (the target keeps what it held),
// say so, and exit 128 + the signal, as a shell reports a command killed by it. Everything the
// handler does is async-signal-safe; its message is made before the run.
char g_interrupt_note[512];

extern "C" void on_interrupt(int sig) {
  emu::TraceWriter::remove_unfinished();
  const char* name =
      sig == SIGINT ? "cubesim: interrupted (SIGINT)" : "cubesim: terminated (SIGTERM)";
  (void)!::write(STDERR_FILENO, "\n", 1);
  (void)!::write(STDERR_FILENO, name, std::strlen(name));
  (void)!::write(STDERR_FILENO, g_interrupt_note, std::strlen(g_interrupt_note));
  ::_exit(128 + sig);
}

class InterruptCleanup {
 public:
  explicit InterruptCleanup(const std::string& trace_file) {
    const std::string note =
        trace_file.empty()
            ? ": the run stopped; no report was written\n"
            : ": the run stopped; no report was written, and the trace was not written (" +
                  trace_file + " is as it was before the run)\n";
    std::snprintf(g_interrupt_note, sizeof g_interrupt_note, "%s", note.c_str());
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    // A signal the parent ignores (SIGINT of a background job of a shell) stays ignored.
    if (old_int_.sa_handler == SIG_IGN) sigaction(SIGINT, &old_int_, nullptr);
    if (old_term_.sa_handler == SIG_IGN) sigaction(SIGTERM, &old_term_, nullptr);
  }
  ~InterruptCleanup() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// What the trace filters are now, for the message of a capped trace.
std::string trace_filters(const RunArgs& a) {
  std::string pes;
  for (const auto& p : a.trace_pes) pes += (pes.empty() ? "" : ",") + p;
  return "--trace-links " + a.trace_links +
         (a.trace_links == "busy" ? " (--trace-link-gap " + a.trace_link_gap + ")" : "") +
         ", --trace-pes " + (pes.empty() ? "(all)" : pes) + ", --trace-window " +
         (a.trace_window.empty() ? "(whole run)" : a.trace_window) +
         (a.trace_flows ? ", --trace-flows" : "");
}

void warn_if_truncated(const RunArgs& a, const emu::TraceWriter& trace) {
  const auto& cut = trace.truncation();
  if (!cut) return;
  std::cerr << "cubesim: warning: the trace " << a.trace_file << " stopped at "
            << (cut->by_bytes ? "--trace-max-bytes " + format_bytes(static_cast<double>(cut->limit))
                              : "--trace-max-events " + std::to_string(cut->limit))
            << " (simulated time " << format_duration_ps(cut->at)
            << "): it is valid but lacks the rest of the run. It was traced with "
            << trace_filters(a)
            << "; narrow these (--trace-links none, a few --trace-pes, a --trace-window) or "
               "raise the cap.\n";
}

int run(const RunArgs& a) {
  // Everything the command line can get wrong is checked before the simulation starts.
  set_phase("reading the spec " + a.spec);
  const components::Spec spec = load_spec(a.spec, a.sets);
  const kernels::KernelInfo& kernel = kernels::find_kernel(a.kernel);
  const kernels::Params params = parse_kernel_params(kernel, a.params);
  const std::uint64_t stack = parse_stack_size(a.stack_size);
  const Grid grid = parse_grid(a.grid);
  if (!a.json_file.empty()) check_output_path(a.json_file, "--json");
  if (!a.trace_file.empty()) check_output_path(a.trace_file, "--trace");
  check_distinct_outputs({{"--json", a.json_file}, {"--trace", a.trace_file}});
  emu::TraceLimits trace_limits;
  if (!a.trace_window.empty())
    std::tie(trace_limits.window_start, trace_limits.window_end) =
        parse_time_window(a.trace_window, "--trace-window");
  trace_limits.max_bytes = parse_byte_size(a.trace_max_bytes, "--trace-max-bytes");
  trace_limits.max_events = a.trace_max_events;
  const std::uint64_t link_gap = parse_duration(a.trace_link_gap, "--trace-link-gap");

  SimOptions options;
  options.timing_only = a.timing_only;
  options.backend = a.backend;
  options.seed = a.seed;
  options.stack_size = stack;
  options.grid = grid;
  options.trace_path = a.trace_file;
  options.trace_limits = trace_limits;
  options.trace_links = components::parse_link_trace(a.trace_links);
  options.trace_link_gap_ps = link_gap;
  options.trace_pes = a.trace_pes;
  options.trace_flows = a.trace_flows;
  options.network = components::network_models().at(a.network, "--network").model;
  options.record_accesses = false;  // the access log serves sharding checks in tests, not runs
  ProgressLine progress;
  options.progress = draw_progress(progress);
  options.progress_interval = kEveryReport;
  auto interrupt = std::make_unique<InterruptCleanup>(a.trace_file);  // before the trace exists
  set_phase("building the system of " + std::to_string(spec.config().total_pes()) + " PEs");
  const std::unique_ptr<Simulation> sim = make_simulation(spec, options);
  sim->set_kernel_name(kernel.name);

  set_phase("running " + kernel.name + " (its inputs, launches and checks)");
  const auto wall0 = std::chrono::steady_clock::now();
  const kernels::Outcome outcome = run_kernel(kernel, *sim, params);
  try {
    sim->close_trace();
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  interrupt.reset();
  const double harness_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  set_phase("writing the report");
  // The report names the file a spec name stood for.
  RunRequest request{components::resolve_spec(a.spec).string(),
                     a.sets,
                     kernel.name,
                     params,
                     a.seed,
                     stack,
                     a.trace_file};
  nlohmann::json report =
      build_report(request, spec, describe_system(sim->system()), outcome, harness_wall);
  if (a.host) report["host"] = host_report(*sim, outcome);

  std::vector<std::string> order;
  for (const auto& p : kernel.params) order.push_back(p.name);
  print_summary(std::cout, report, outcome.run.stats, order);
  if (a.trace_summary) print_wait_summary(std::cout, outcome.run.stats);
  std::cout.flush();
  if (!a.json_file.empty()) write_json_file(a.json_file, report);
  if (sim->trace()) warn_if_truncated(a, *sim->trace());

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

  sub->add_option("SPEC", args->spec,
                  "System spec file (JSON), e.g. specs/default.json, or an installed spec's "
                  "name (tiny, default, ...)")
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
                  "Backend that computes GEMM numbers (never affects simulated time): " +
                      choices_text(backends::gemm_backends()) +
                      "; cuda and metal where the build has them")
      ->check(gemm_backend_check())
      ->capture_default_str();
  sub->add_option("--json", args->json_file,
                  "Write the full report (JSON) to FILE; written also when verification fails")
      ->type_name("FILE");
  CLI::Option* trace =
      sub->add_option("--trace", args->trace_file,
                      "Write a Chrome/Perfetto trace (one track per PE, GEMM engine and busy link) "
                      "to FILE; open it in ui.perfetto.dev")
          ->type_name("FILE");
  sub->add_option("--trace-links", args->trace_links,
                  "Links in the trace: busy (one slice per busy period of a link; idle gaps up to "
                  "--trace-link-gap do not end it), all (every uninterrupted busy interval; "
                  "large) or none")
      ->check(CLI::IsMember({"none", "busy", "all"}))
      ->needs(trace)
      ->capture_default_str();
  sub->add_option("--trace-link-gap", args->trace_link_gap,
                  "Under --trace-links busy, the longest idle gap inside a busy period, with a "
                  "unit (ps, ns, us, ms, s); raise it for fewer, longer link slices")
      ->needs(trace)
      ->type_name("DURATION")
      ->capture_default_str();
  sub->add_option("--trace-pes", args->trace_pes,
                  "PEs whose tracks the trace has, by name pattern (* any text, ? one character, "
                  "[0-3] one digit of a range), comma-separated: sip0.cube1.*,sip0.cube0.pe[0-3]; "
                  "default all")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->needs(trace)
      ->type_name("PATTERNS");
  sub->add_option("--trace-window", args->trace_window,
                  "Trace only events in this span of simulated time, START:END with units, e.g. "
                  "0:10us or 5us: (to the end)")
      ->needs(trace)
      ->type_name("START:END");
  sub->add_option("--trace-max-bytes", args->trace_max_bytes,
                  "Cap on the trace file, K/M/G suffixes (1024-based), 0 for none; at the cap the "
                  "trace stops, stays valid, and the run ends with a warning")
      ->needs(trace)
      ->type_name("BYTES")
      ->capture_default_str();
  sub->add_option("--trace-max-events", args->trace_max_events,
                  "Cap on the trace's events, 0 for none (as --trace-max-bytes)")
      ->check(unsigned_64_validator("--trace-max-events 1000000"))
      ->needs(trace)
      ->type_name("N")
      ->capture_default_str();
  sub->add_flag("--trace-flows", args->trace_flows,
                "Link each load and store in the trace to the link slices it occupies (flow "
                "arrows; many events)")
      ->needs(trace);
  sub->add_option("--network", args->network,
                  "Network model: " + choices_text(components::network_models()))
      ->check(one_of(components::network_models(), "--network"))
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the harness's random inputs")
      ->check(unsigned_64_validator("--seed 7"))
      ->capture_default_str();
  sub->add_option("--grid", args->grid,
                  "Launch the kernel's programs on a logical grid of X[xY[xZ]] programs, run in "
                  "waves by the dispatcher (system.dispatch), instead of one per PE; for the "
                  "kernels whose programs need no PE of their own")
      ->type_name("GRID")
      ->capture_default_str();
  sub->add_flag("--trace-summary", args->trace_summary,
                "After the summary, per PE (up to 64; else the 32 that finished last) the share "
                "of the run it spent waiting, and on what: load, store, atomic, GEMM, barrier, "
                "send, recv, dispatch (needs no --trace)");
  sub->add_flag("--host", args->host,
                "Also time the host's share (system.host): the kernel's inputs written to the "
                "device before its launches and its outputs read back after them, over each "
                "SIP's host link and IO die; reported as host time and end-to-end time");
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
      "  cubesim run specs/default.json sharded_gemm --trace t.json --trace-pes 'sip0.cube0.*' "
      "--trace-window 0:20us\n"
      "Global options (--log-level L) may follow the subcommand.\n"
      "Exit codes: 0 ok, 1 verification failed, 2 usage or spec error, 3 kernel fault, "
      "4 deadlock.");
  return {sub, [args] { return run(*args); }};
}

}  // namespace cubesim::cli
