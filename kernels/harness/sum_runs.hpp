#pragma once
// A harness that launches several times reports one RunResult: the launches summed.

#include <vector>

#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// One RunResult for launches run one after another: simulated times, FLOPs, bytes, events and
// wall time add up; the access log and programs are the last launch's; per-PE and per-link
// figures and the packet count are the last launch's too (stats.launches keeps every launch's
// statistics, and the report's "launches" their reports).
RunResult sum_runs(std::vector<RunResult> runs);

}  // namespace cubesim::kernels
