#pragma once
// What simulating a system costs in host memory before any kernel stores data, and what the
// host can give, so that a system too large for the machine is refused with the fields to
// reduce instead of ending in std::bad_alloc (or the OOM killer) half-way through a launch.

#include <cstdint>
#include <string>

#include "components/system_config.hpp"

namespace cubesim {

// The least the simulator's own state takes for a system and one launch of a program on every
// PE: the built system (PEs, cubes with their meshes, HBM channels and links), and per program
// its fiber stack's touched pages, scheduler events and launch state. A kernel's data (HBM
// contents, tiles), its transfers in flight, the routes it caches and the statistics of the
// links it uses come on top: the estimate is a floor, so a system it refuses cannot fit.
struct HostMemoryEstimate {
  std::uint64_t pes = 0;
  std::uint64_t cubes = 0;
  std::uint64_t per_pe = 0;    // bytes
  std::uint64_t per_cube = 0;  // bytes
  std::uint64_t fixed = 0;     // bytes: the binary's libraries, the spec, the report
  std::uint64_t bytes = 0;     // the total
  // Address space the fiber stacks reserve (mapped without backing: only touched pages cost
  // memory, but the reservation must fit the process's address space).
  std::uint64_t stack_reservation = 0;
};

HostMemoryEstimate estimate_host_memory(const components::SystemConfig& config,
                                        std::uint64_t stack_size);

// What this process may use: the smallest of MemAvailable (/proc/meminfo) and the room left
// under its cgroup's memory.max, or `limit` when that is not 0 (CUBESIM_MEMORY_LIMIT in the
// CLI). `source` says which, for messages.
struct HostMemoryLimit {
  std::uint64_t bytes = 0;  // 0: unknown (no /proc), nothing is refused
  std::string source;
};
HostMemoryLimit host_memory_limit(std::uint64_t limit);

// Throws UsageError (exit 2) when the estimate exceeds the limit or the stacks' reservation
// the address space, with both figures and the spec fields (or --stack-size) to reduce.
void check_host_memory(const components::SystemConfig& config, std::uint64_t stack_size,
                       std::uint64_t limit);

}  // namespace cubesim
