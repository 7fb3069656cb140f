#pragma once
// The collective algorithms: one table of entries (algorithm.cpp), one algorithm per file
// (algorithms/*.cpp). An entry names the algorithm, the collectives it implements (each with a
// line saying how, which the kernels' `algorithm` parameter shows), the channels its data is
// split over, what a program's element count must be a multiple of, and how it plans a
// collective: the schedule (components/collectives/schedule.hpp) and how the data is cut.
// The table's names are the choices of every kernel's `algorithm` parameter; a name the table
// does not have, or an algorithm that does not implement the collective, is a UsageError that
// lists the names that would work.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "components/collectives/pipeline.hpp"
#include "components/system_config.hpp"
#include "emu/name_table.hpp"
#include "kernels/harness/grid.hpp"

namespace cubesim::kernels::collectives {

enum class Collective : std::uint8_t {
  all_reduce,
  reduce_scatter,
  all_gather,
  broadcast,
  all_to_all
};
// The kernel's name: allreduce, reduce_scatter, allgather, broadcast, alltoall.
const char* collective_name(Collective collective);

// What a plan depends on: the collective of `elems` f32 elements per program over every
// program of `grid`, whose ring (ring_order.hpp) is `order`.
struct PlanInput {
  const components::SystemConfig& config;
  GridShape grid;
  Collective collective;
  std::int64_t elems = 0;
  std::vector<std::int64_t> order;
  int channels = 1;  // the algorithm's own channels times the kernel's `channels` parameter
};

// The message windows (system.messages per class) a collective's channels have, over the
// classes its grid's channels can be of (mesh where it has several PEs of a cube, UCIe several
// cubes, inter-SIP several SIPs; every class for one program): the fewest slots and the
// smallest slot (what every channel can take), and the most slots and largest window (what its
// farthest channel needs); every channel at most `slot_cap` slots when that is set.
struct MessageWindows {
  std::uint32_t fewest_slots = 1, most_slots = 1;
  std::uint64_t smallest_slot = 4, largest_bytes = 4;
  std::uint64_t fastest_bytes_per_s = 0;  // the highest rate of a channel's credit loop
  std::uint32_t slot_cap = 0;             // 0: none
};
MessageWindows message_windows(const components::SystemConfig& config, GridShape grid,
                               std::uint32_t slot_cap = 0);

// What a harness needs of a collective's algorithm over the programs of a grid: the schedule,
// how the data is cut, and what its messages take.
struct Plan {
  std::unique_ptr<components::collectives::Schedule> schedule;
  std::int64_t block = 0;            // elements per block (the data is cut into one per program)
  std::int64_t segment = 0;          // elements of the largest segment
  std::int64_t piece = 0;            // elements per message: a slot's worth, at most a segment
  std::int64_t step_bytes = 0;       // the most a program sends in a step
  std::vector<std::int64_t> levels;  // ring algorithms: the group size of each level
  std::int64_t channels_in = 0;      // the most channels into one program
  int directions = 1;                // its channels (each block in that many parts)
  GridShape grid;                    // the programs it is for (make_plan sets it)
  MessageWindows windows{};          // of its channels (make_plan sets them)
  components::collectives::MemoryTraffic traffic{};  // of its schedule (make_plan sets it)
};

struct Algorithm {
  const char* name;
  std::vector<std::pair<Collective, const char*>> implements;  // each with how, for the help
  int channels = 1;  // rings or trees the data is split over (each block in that many parts)
  // The most channels its topology places apart, and where they go (for the error that
  // refuses more).
  int max_channels = 1;
  const char* placed = "";
  // What a program's f32 elements must be a multiple of, per channel.
  std::int64_t (*element_multiple)(Collective collective, GridShape grid);
  // The plan, all but its piece and directions (make_plan sets them).
  Plan (*schedule)(const PlanInput& input);

  bool implements_collective(Collective collective) const;
};

// Every algorithm by name, in the table's order.
const emu::NameTable<const Algorithm*>& algorithms();
// The names of the algorithms implementing `collective`, in the table's order: the choices of
// its `algorithm` parameter, the first the default.
std::vector<std::string> algorithm_names(Collective collective);
std::string default_algorithm(Collective collective);
// "ring: one ring of every program; ...": each algorithm implementing `collective`, with how.
std::string algorithm_help(Collective collective);
// The algorithm `name` implementing `collective`; UsageError listing those that do when there
// is none of that name or it does not implement the collective.
const Algorithm& find_algorithm(const std::string& name, Collective collective);

}  // namespace cubesim::kernels::collectives
