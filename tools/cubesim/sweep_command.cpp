// cubesim sweep SPEC KERNEL --vary FIELD=VALUES...: topology what-if studies. The work is in
// sweep_expand (points), sweep_workers (local processes), sweep_mpi (ranks), sweep_output
// (results) and sweep_run (all of it together).

#include <memory>
#include <set>

#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/name_options.hpp"
#include "tools/cubesim/option_values.hpp"
#include "tools/cubesim/sweep_expand.hpp"
#include "tools/cubesim/sweep_run.hpp"
#include "tools/cubesim/sweep_workers.hpp"

namespace cubesim::cli {

namespace {

struct SweepArgs {
  std::string spec;
  std::string kernel;
  std::vector<std::string> vary;
  std::vector<std::string> params;
  std::vector<std::string> sets;
  bool functional = false;
  int jobs = 0;
  std::string csv, jsonl, out_dir, plot;
  std::string metric;  // "" when not given: the kernels' default metric
  std::string reference;
  bool log_y = false;
  std::string backend = "cpu";
  std::string network = "packet";
  std::uint64_t seed = 1;
  std::string stack_size = "64K";
  std::string grid = "hardware";
};

int sweep_main(const SweepArgs& a, const CLI::App& root) {
  sweep::Options o;
  o.def.spec_file = a.spec;
  o.def.kernel = a.kernel;
  o.def.sets = a.sets;
  o.def.params = a.params;
  for (const auto& v : a.vary) o.def.dims.push_back(sweep::parse_vary(v));
  o.def.timing_only = !a.functional;
  o.def.seed = a.seed;
  o.def.backend = a.backend;
  o.def.network = a.network;
  o.def.stack_size = parse_stack_size(a.stack_size);
  o.def.grid = grid_text(parse_grid(a.grid));
  o.jobs = a.jobs;
  o.csv_file = a.csv;
  o.jsonl_file = a.jsonl;
  o.out_dir = a.out_dir;
  o.plot_file = a.plot;
  o.metric = a.metric;
  if (o.metric.empty()) {  // the kernels' own, when they agree (a collective: its bus bandwidth)
    o.metric = "sim_time_ps";
    std::set<std::string> wanted;
    for (const auto& name : sweep::kernels_of(o.def))
      wanted.insert(kernels::find_kernel(name).default_metric);
    if (wanted.size() == 1) o.metric = *wanted.begin();
  }
  o.reference = a.reference;
  o.log_y = a.log_y;
  if (const auto* opt = root.get_option_no_throw("--log-level"); opt != nullptr && opt->count() > 0)
    o.log_level = opt->as<std::string>();
  return sweep::run_sweep(o);
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a kernel over the cartesian product of varied spec fields and parameters");
  sub->add_option("SPEC", args->spec, "System spec file (JSON), e.g. specs/default.json")
      ->required();
  sub->add_option("KERNEL", args->kernel,
                  "Kernel to run ('cubesim list' shows them); leave out when --vary kernel=A,B "
                  "varies it");
  sub->add_option("--vary", args->vary,
                  "A varied field and its values, FIELD=V1,V2,...: a spec field by dotted path "
                  "(system.ucie.bandwidth_GBps), param.NAME for a kernel parameter, or kernel. "
                  "Items may be ranges: 64:1024:x2 (geometric), 1:8:+1 or 1:8 (arithmetic), "
                  "8:1:-1, 1024:64:/2. Repeatable: the points are the cartesian product, the "
                  "first --vary changing slowest")
      ->required()
      ->allow_extra_args(false)
      ->type_name("FIELD=VALUES");
  sub->add_option("-p,--param", args->params,
                  "A fixed kernel parameter NAME=VALUE for every point; repeatable")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  sub->add_option("--set", args->sets, kSetHelp)
      ->allow_extra_args(false)
      ->type_name("JSON.PATH=VALUE");
  sub->add_flag("--functional", args->functional,
                "Move data, compute GEMMs and verify every point's numbers (default: timing "
                "only, the same simulated time, much faster)");
  sub->add_option("-j,--jobs", args->jobs,
                  "Points run at once (worker processes); default: the cores (under mpirun: "
                  "per rank, the host's cores shared by its ranks)")
      ->check(CLI::Range(1, 65536));
  sub->add_option("--csv", args->csv, "Write one row per point as CSV to FILE ('-': stdout)")
      ->type_name("FILE");
  sub->add_option("--jsonl", args->jsonl,
                  "Write one JSON object per point (a line each) to FILE ('-': stdout)")
      ->type_name("FILE");
  sub->add_option("--out", args->out_dir,
                  "Keep every finished point in DIR (points/*.json with its full report, plus "
                  "results.csv and results.jsonl); the same sweep run again skips the points "
                  "DIR holds")
      ->type_name("DIR");
  sub->add_option("--plot", args->plot,
                  "Draw --metric against the first varied field, one line per value of the "
                  "second (one panel per value of the third) to FILE.png or FILE.svg; needs "
                  "Python 3 with matplotlib")
      ->type_name("FILE");
  sub->add_option("--metric", args->metric,
                  "The CSV column to plot: sim_time_ps (the default), "
                  "achieved_flops_per_second, peak_fraction, ucie_bytes, ... or details.NAME; "
                  "collectives default to details.busbw_GBps");
  sub->add_option("--reference", args->reference,
                  "A second numeric column drawn dotted beside each --metric line, in the same "
                  "colour: what a model predicts, e.g. details.model_time_ps")
      ->type_name("COLUMN");
  sub->add_flag("--log-y", args->log_y, "A logarithmic y axis on the plot");
  sub->add_option("--backend", args->backend, "GEMM backend of --functional runs")
      ->check(gemm_backend_check())
      ->capture_default_str();
  sub->add_option("--network", args->network,
                  "Network model of every point: packet or flow (as for run)")
      ->check(one_of(components::network_models(), "--network"))
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of every point's random inputs")
      ->check(unsigned_64_validator("--seed 7"))
      ->capture_default_str();
  sub->add_option("--grid", args->grid, "Logical grid of every point (X[xY[xZ]]), as for run")
      ->type_name("GRID")
      ->capture_default_str();
  sub->add_option("--stack-size", args->stack_size, "Fiber stack per PE program, as for run")
      ->type_name("BYTES")
      ->capture_default_str();
  sub->footer(
      "Every point's spec and parameters are checked before any runs. A point that fails (a "
      "kernel fault, a size that does not shard) is a row with its error; the sweep goes on. "
      "Under mpirun the points are spread over the ranks and rank 0 writes the results.\n\n"
      "Examples:\n"
      "  cubesim sweep specs/default.json sharded_gemm --vary "
      "system.ucie.bandwidth_GBps=64:1024:x2 --vary system.sips.cubes_per_sip=1,2,4\n"
      "  cubesim sweep specs/default.json --vary kernel=sharded_gemm,gemm_2d --vary "
      "param.M=256,1024 --csv out.csv --plot out.svg\n"
      "  mpirun -n 4 cubesim sweep specs/default.json sharded_gemm --vary "
      "system.ucie.latency_ns=1:16 --out results/\n"
      "Exit codes: 0 every point ok; else the highest of the points' codes (1 verification "
      "failed, 2 does not shard, 3 kernel fault, 4 deadlock); 2 for a bad command line, before "
      "anything runs; 130 interrupted.");
  const CLI::App* root = &app;
  return {sub, [args, root] { return sweep_main(*args, *root); }};
}

Command add_sweep_worker_command(CLI::App& app) {
  auto parent = std::make_shared<long>(0);
  CLI::App* sub =
      app.add_subcommand("sweep-worker", "internal: runs sweep points for cubesim sweep");
  sub->group("");  // hidden from --help
  sub->add_option("--parent", *parent, "pid of the sweep");
  return {sub, [parent] { return sweep::worker_main(*parent); }};
}

}  // namespace cubesim::cli
