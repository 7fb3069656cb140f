#pragma once
// Where the programs of a launch run, in what order (grid.hpp's Grid says which launch
// is which): one program per PE at its own coordinates (a grid that fits the hardware), or a
// logical grid that the dispatcher places on PEs by system.dispatch.policy and runs in waves.
// When each program starts is the launch's business (KernelRunner): on its PE, after the
// PE's previous program, once the dispatcher has started it.

#include <cstdint>
#include <vector>

#include "components/system_config.hpp"
#include "triton_emu/checks/access_log.hpp"
#include "triton_emu/launch/grid.hpp"

namespace cubesim::detail {

struct LaunchPlan {
  std::int64_t grid[3] = {1, 1, 1};  // programs per axis
  bool dispatched = false;           // placed by the dispatcher (a logical grid)
  components::DispatchPolicy policy = components::DispatchPolicy::round_robin;
  std::uint64_t programs = 0;
  std::uint64_t waves = 1;  // the most programs any PE runs
  // Program i's coordinates (program_id(0), (1), (2)), axis 0 fastest.
  std::vector<ProgramCoord> coords;
  // The PEs that run programs, each with its programs in the order it runs them; ordered by
  // their first program, so the dispatcher starts the first wave in program order.
  struct Queue {
    std::uint32_t pe = 0;  // global PE
    std::vector<std::uint32_t> programs;
  };
  std::vector<Queue> queues;
};

// Host bytes a launch keeps per program (its coordinates, its place in a queue, its
// tl::Context): what a grid costs before its kernel does anything.
inline constexpr std::uint64_t kHostBytesPerProgram = 192;

// The plan of `grid` on `config`; UsageError for a dimension below 1 (other than 0 on a
// hardware-sized grid, which means the hardware's size) or past kMaxGridDim, more programs
// than a launch can number (2^32 - 1), or programs whose state would not fit `host_memory`
// (bytes, from `host_memory_source`; 0 = no limit).
LaunchPlan plan_launch(const components::SystemConfig& config, const Grid& grid,
                       std::uint64_t host_memory, const std::string& host_memory_source);

}  // namespace cubesim::detail
