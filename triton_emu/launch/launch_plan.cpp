#include "triton_emu/launch/launch_plan.hpp"

#include <fmt/format.h>

#include <string>

#include "triton_emu/errors.hpp"

namespace cubesim::detail {

using components::DispatchPolicy;

namespace {

// The global PE (sip-major, then cube, then PE) of dispatch slot `slot` (0 .. total PEs).
std::uint32_t slot_pe(DispatchPolicy policy, std::uint64_t slot, std::uint64_t cubes,
                      std::uint64_t pes_per_cube) {
  if (policy == DispatchPolicy::round_robin)
    return static_cast<std::uint32_t>((slot % cubes) * pes_per_cube + slot / cubes);
  return static_cast<std::uint32_t>(slot);
}

// The grid's size per axis, checked, and whether the dispatcher places it.
void size_grid(LaunchPlan& plan, const components::SystemConfig& config, const Grid& grid) {
  const std::int64_t hw[3] = {config.cube.pes, config.cubes_per_sip, config.sips};
  const std::int64_t given[3] = {grid.pes, grid.cubes, grid.sips};
  const char* axis_name[3] = {"axis 0 (PEs per cube on the hardware grid)",
                              "axis 1 (cubes per SIP)", "axis 2 (SIPs)"};
  plan.dispatched = grid.dispatched;
  for (int i = 0; i < 3; ++i) {
    std::int64_t g = given[i];
    if (g == 0 && !grid.dispatched) g = hw[i];
    if (g < 1 || g > kMaxGridDim)
      throw UsageError(fmt::format(
          "launch grid: {} programs along {}; a grid dimension must be between 1 and 2^31 - 1 "
          "({}){}",
          g, axis_name[i], kMaxGridDim,
          grid.dispatched ? "" : " (0 means the hardware's size, on a grid that is not logical)"));
    plan.grid[i] = g;
    if (g > hw[i]) plan.dispatched = true;
  }
}

// The number of programs: refused when a launch cannot number them or the host cannot hold
// their state.
void count_programs(LaunchPlan& plan, std::uint64_t host_memory,
                    const std::string& host_memory_source) {
  std::uint64_t total = 0;
  const bool overflows =
      __builtin_mul_overflow(static_cast<std::uint64_t>(plan.grid[0]) * plan.grid[1],
                             static_cast<std::uint64_t>(plan.grid[2]), &total);
  if (overflows || total > UINT32_MAX)
    throw UsageError(fmt::format(
        "launch grid: {} x {} x {} programs is more than a launch can number (2^32 - 1); split "
        "the work into several launches or give each program more of it",
        plan.grid[0], plan.grid[1], plan.grid[2]));
  plan.programs = total;
  if (host_memory != 0 && plan.programs > host_memory / kHostBytesPerProgram)
    throw UsageError(fmt::format(
        "launch grid: {} x {} x {} programs would take {} MiB of host memory for their state "
        "alone ({} bytes each) but {} allows {} MiB; give each program more of the work (a "
        "larger BLOCK) so fewer programs cover it",
        plan.grid[0], plan.grid[1], plan.grid[2], plan.programs * kHostBytesPerProgram >> 20,
        kHostBytesPerProgram, host_memory_source, host_memory >> 20));
}

// Program i's coordinates, axis 0 fastest.
void number_programs(LaunchPlan& plan) {
  plan.coords.resize(plan.programs);
  std::uint64_t i = 0;
  for (std::int64_t z = 0; z < plan.grid[2]; ++z)
    for (std::int64_t y = 0; y < plan.grid[1]; ++y)
      for (std::int64_t x = 0; x < plan.grid[0]; ++x) {
        auto& c = plan.coords[i++];
        c.id[0] = x;
        c.id[1] = y;
        c.id[2] = z;
      }
}

// ADR-0022: program (p, c, s) on PE p of cube c of SIP s.
void place_on_hardware(LaunchPlan& plan, const components::SystemConfig& config) {
  plan.queues.reserve(plan.programs);
  for (std::uint32_t p = 0; p < plan.programs; ++p) {
    const auto& id = plan.coords[p].id;
    const std::uint64_t pe =
        (static_cast<std::uint64_t>(id[2]) * config.cubes_per_sip + id[1]) * config.cube.pes +
        id[0];
    plan.queues.push_back({static_cast<std::uint32_t>(pe), {p}});
  }
}

// pe_major: nearly equal contiguous ranges of programs, the larger ones first.
void dispatch_pe_major(LaunchPlan& plan) {
  const std::uint64_t used = plan.queues.size();
  const std::uint64_t base = plan.programs / used, extra = plan.programs % used;
  std::uint64_t next = 0;
  for (std::uint64_t q = 0; q < used; ++q) {
    auto& queue = plan.queues[q];
    queue.pe = static_cast<std::uint32_t>(q);
    const std::uint64_t n = base + (q < extra);
    queue.programs.reserve(n);
    for (std::uint64_t k = 0; k < n; ++k)
      queue.programs.push_back(static_cast<std::uint32_t>(next++));
  }
}

// The other policies: program p in dispatch slot p % PEs, each slot on its PE.
void dispatch_by_slot(LaunchPlan& plan, const components::SystemConfig& config) {
  const std::uint64_t pes = config.total_pes(), cubes = config.total_cubes();
  for (std::uint64_t q = 0; q < plan.queues.size(); ++q) {
    plan.queues[q].pe = slot_pe(plan.policy, q, cubes, config.cube.pes);
    plan.queues[q].programs.reserve(plan.waves);
  }
  for (std::uint64_t p = 0; p < plan.programs; ++p)
    plan.queues[p % pes].programs.push_back(static_cast<std::uint32_t>(p));
}

// A logical grid: the PEs the dispatcher uses, and the programs each runs, in waves.
void place_by_dispatcher(LaunchPlan& plan, const components::SystemConfig& config) {
  plan.policy = config.dispatch.policy;
  const std::uint64_t pes = config.total_pes();
  plan.waves = (plan.programs + pes - 1) / pes;
  plan.queues.resize(std::min<std::uint64_t>(pes, plan.programs));
  if (plan.policy == DispatchPolicy::pe_major)
    dispatch_pe_major(plan);
  else
    dispatch_by_slot(plan, config);
}

}  // namespace

LaunchPlan plan_launch(const components::SystemConfig& config, const Grid& grid,
                       std::uint64_t host_memory, const std::string& host_memory_source) {
  LaunchPlan plan;
  size_grid(plan, config, grid);
  count_programs(plan, host_memory, host_memory_source);
  number_programs(plan);
  if (plan.dispatched)
    place_by_dispatcher(plan, config);
  else
    place_on_hardware(plan, config);
  return plan;
}

}  // namespace cubesim::detail
