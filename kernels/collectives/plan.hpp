#pragma once
// A collective's plan from its algorithm's entry (algorithm.hpp), the plans of the three
// schedule shapes the entries build (shapes.hpp), and what a plan needs of the hardware.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "components/collectives/pipeline.hpp"
#include "components/collectives/schedule.hpp"
#include "components/system_config.hpp"
#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/shapes.hpp"
#include "kernels/harness/grid.hpp"

namespace cubesim::kernels::collectives {

// The plan of `algorithm` for `collective` over every program of `grid`, for `bytes` of f32
// per program, a multiple of 4 x element_multiple(collective, algorithm, grid, channels), in
// `channels` times the algorithm's own channels; UsageError for an algorithm that the table
// lacks or that does not implement the collective, or more channels than it places.
Plan make_plan(const components::SystemConfig& config, GridShape grid, Collective collective,
               const std::string& algorithm, std::int64_t bytes, int channels = 1);
// What a program's f32 elements must be a multiple of for `algorithm` in `channels` times its
// own channels: the programs x the channels, whose blocks the data is cut into; 1 for
// algorithms that cut the vector whole.
std::int64_t element_multiple(Collective collective, const std::string& algorithm, GridShape grid,
                              int channels = 1);

// Rings over `levels` (levels whose groups have one member are left out) in `channels`
// directions: the data cut into one block per program, each in `channels` segments. A level
// whose `switched` entry is a components::SwitchLevel (not -1) is reduced in that switch
// instead (all-reduce only; shapes.hpp's rings).
// The groups of a hierarchy's three levels: each cube's programs, then for each position in a
// cube the cubes of its SIP, then for each cube and position the SIPs; `at(sip, cube, q)` is
// the program at position q of that cube, each group in that order.
std::vector<Groups> hierarchy_levels(
    GridShape grid,
    const std::function<std::int64_t(std::int64_t, std::int64_t, std::int64_t)>& at);
Plan ring_plan(const PlanInput& input, std::vector<Groups> levels, int channels,
               std::vector<int> switched = {});
// Trees, each given by parent[g] (-1: its root), each moving its part of the vector, with at
// most `channels_in` channels into a program.
Plan tree_plan(const PlanInput& input, std::vector<std::vector<std::int64_t>> parents,
               std::int64_t channels_in);
// An all-to-all over the ring: pairwise, or every message in one step (`direct`).
Plan all_to_all_plan(const PlanInput& input, bool direct);

// How `plan` runs as a pipeline (components/collectives/pipeline.hpp): rows of `chunk`
// elements of each segment (0: a message slot's worth with buffer=hbm, the whole segment with
// buffer=sram, where nothing needs staging), as many rows in flight as the deepest window the
// programs span has slots, or `depth` (0: that), as NCCL keeps NCCL_STEPS slices in flight;
// loads issued and stores in flight that cover an HBM round trip at the fastest channel's rate
// for the share of the messages' bytes the schedule loads and stores, halved
// `staging_halved` times (at least a pair's worth).
components::collectives::Pipelining pipelining(const components::SystemConfig& config,
                                               const Plan& plan, std::int64_t chunk,
                                               components::collectives::Buffer buffer,
                                               std::uint32_t depth = 0, int staging_halved = 0);
// `plan`'s pipelining fitted to a PE's SRAM, and its SRAM bound (plan_sram_bytes), from the
// windows of its grid's channels (any earlier fit's limit dropped): while the bound exceeds the
// SRAM, rows in flight halved where that lowers it, else the loads ahead and stores in flight
// halved (down to a pair's worth), else rows in flight halved anyway, down to the fewest slots;
// then, with slots in PE SRAM, the most slots per channel that fit, set as plan.windows.slot_cap
// (a launch of the plan limits its channels to it: Simulation::limit_message_slots,
// ScheduleArgs::slot_limit); then rows down to one. The caller checks the bound against the
// SRAM.
struct FittedPipelining {
  components::collectives::Pipelining pipelining;
  std::uint64_t sram_bytes = 0;
};
FittedPipelining fit_pipelining(const components::SystemConfig& config, Plan& plan,
                                Collective collective, components::collectives::Buffer buffer,
                                std::int64_t bytes, std::int64_t chunk);
// The bytes a program sends in one pair (a step of one row) at most.
std::uint64_t row_step_bytes(const Plan& plan, const components::collectives::Pipelining& p);
// The SRAM a program holds while it runs `plan` (see run_schedule): with buffer=sram its whole
// vector (an all-to-all's input and output); the rows in flight (what a pair sends and
// receives, with the loads issued ahead) and the stores in flight; and the slots of its
// channels in when they live in its SRAM. It does not grow with the vector with buffer=hbm.
std::uint64_t plan_sram_bytes(const components::SystemConfig& config, const Plan& plan,
                              Collective collective, components::collectives::Buffer buffer,
                              std::int64_t bytes, const components::collectives::Pipelining& p);
// The most channels any cube receives on in `schedule`: every (sender, receiver) pair whose
// receiver is on that cube (global program g runs on cube g / pes_per_cube). For
// require_message_slots.
std::uint64_t most_channels_into_a_cube(const components::collectives::Schedule& schedule,
                                        std::int64_t pes_per_cube);

}  // namespace cubesim::kernels::collectives
