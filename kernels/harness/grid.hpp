#pragma once
// The grid seen from a kernel and from its harness: the global program id over all three grid
// axes, balanced splits of a range, the shape of a launch's grid, and the usage errors of
// kernels that need the hardware grid or one wave.

#include <cstdint>
#include <string>

#include "components/system_config.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// DESIGN.md's folding of the SIP axis into ADR-0022's global PID:
// (program_id(2) * num_programs(1) + program_id(1)) * num_programs(0) + program_id(0).
std::int64_t global_program_id(const tl::Context& tl);
// num_programs(0) * num_programs(1) * num_programs(2).
std::int64_t total_programs(const tl::Context& tl);

// [begin, end) of part `index` of `parts` nearly equal parts of [0, n): sizes differ by at most 1.
struct Range {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
};
Range split_range(std::int64_t n, std::int64_t parts, std::int64_t index);

// The grid of a launch: the hardware's (one program per PE), or a logical grid.
struct GridShape {
  std::int64_t pes = 1, cubes = 1, sips = 1;  // programs along axes 0, 1, 2
  bool logical = false;
  std::int64_t total() const { return pes * cubes * sips; }
  // "64 programs (4 cubes x 16 PEs)", with "2 SIPs x " in front on several SIPs; a logical
  // grid: "16384 programs (logical grid 16384 x 1 x 1)".
  std::string str() const;
};
GridShape hardware_grid(const components::SystemConfig& config);
// The grid sim.launch() uses: SimOptions::grid (the CLI's --grid) on this system.
GridShape launch_grid(const Simulation& sim);
// UsageError unless sim.launch() gets the hardware grid (no --grid): for kernels whose
// programs must each have a PE of their own (`why`, e.g. "its programs exchange messages with
// their mesh neighbours").
void require_hardware_grid(const Simulation& sim, const std::string& kernel,
                           const std::string& why);
// UsageError unless every program of the launch runs at once (a --grid of at most the PEs: one
// wave), for kernels whose programs wait for each other (`why`, e.g. "its programs meet at
// tl.barrier").
void require_one_wave(const Simulation& sim, const std::string& kernel, const std::string& why);

}  // namespace cubesim::kernels
