#pragma once
// The few lines `cubesim run` prints: what ran on what, how long it took in simulated time,
// how close to peak, where the bytes went, whether the numbers are right, and how fast the
// simulator itself was. Printed from the run's statistics (RunStats) and the --json report
// made of them (report.hpp), so the two never disagree.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "triton_emu/launch/run_stats.hpp"

namespace cubesim::cli {

// `param_order`: the kernel's parameter names in declaration order (the report's object is
// sorted by name, which reads worse: M K N beats K M N).
void print_summary(std::ostream& out, const nlohmann::json& report, const RunStats& stats,
                   const std::vector<std::string>& param_order);

// `cubesim run --trace-summary`: per PE (every one up to 64, else the 32 that finished last), the
// run's share it spent in each kind of wait (load, store, atomic, GEMM, barrier, send, recv,
// dispatch), its top three, and the same summed over all PEs.
void print_wait_summary(std::ostream& out, const RunStats& stats);

// "1 SIP x 2 cubes x 4 PEs = 8 PEs; 2x2 NOC mesh per cube; UCIe ring" from System::describe().
std::string describe_topology(const nlohmann::json& system);

}  // namespace cubesim::cli
