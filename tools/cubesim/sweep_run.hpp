#pragma once
// Running a whole sweep: validate every point, skip those a --out folder already holds, run the
// rest on local worker processes (and, under mpirun, on every rank's workers), show progress on
// a terminal, stop cleanly on Ctrl-C, and write the results in point order.

#include <string>

#include "tools/cubesim/sweep_expand.hpp"

namespace cubesim::cli::sweep {

struct Options {
  Definition def;
  int jobs = 0;            // worker processes per rank; 0 = the cores (shared by a host's ranks)
  std::string csv_file;    // "" none, "-" stdout
  std::string jsonl_file;  // "" none, "-" stdout
  std::string out_dir;     // "" none
  std::string plot_file;   // "" none
  std::string metric = "sim_time_ps";
  std::string reference;  // "" none: a column drawn dotted beside the metric's lines
  bool log_y = false;
  std::string log_level = "warn";  // passed on to the workers
};

// Returns the exit code: 0 when every point is ok, else the highest exit code of the points
// (1 verification failed, 2 a point's parameters do not shard, 3 kernel fault or crash,
// 4 deadlock); 130 when interrupted. Throws UsageError / SpecError before any point runs.
int run_sweep(const Options& options);

// Cores this process may run on (its CPU affinity).
int available_cores();

}  // namespace cubesim::cli::sweep
