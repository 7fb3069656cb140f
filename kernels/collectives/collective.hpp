#pragma once
// The collective kernels of the CLI (allreduce, reduce_scatter, allgather, broadcast,
// alltoall): the rings, levels and trees each algorithm runs over on a given system, and the
// harnesses with their verification and NCCL-style bandwidths.
//
// Bandwidths (NCCL's definitions, docs/performance.md of nccl-tests): for S bytes per program
// and a collective time t, algbw = S / t and busbw = algbw * 2(n-1)/n for all-reduce,
// algbw * (n-1)/n for all-gather, reduce-scatter and all-to-all (S: the all-gathered output,
// the reduce-scatter input, the all-to-all input), algbw for broadcast; busbw is then
// comparable to a link's bandwidth whatever n.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "components/system_config.hpp"
#include "kernels/collectives/algorithms.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels::collectives {

// The ring through every program of `grid` (ring position -> global program id): within each
// cube whose whole mesh runs programs, a cycle whose steps are single mesh hops when the mesh
// has an even number of rows or columns (else a snake, whose closing step is longer); the
// cubes of each SIP, and the SIPs, one after another along the same kind of cycle through
// their grid when the UCIe (inter-SIP) topology is a mesh or torus and the launch covers
// every cube (SIP), else in index order.
std::vector<std::int64_t> ring_order(const components::SystemConfig& config, GridShape grid);

// The levels of the ring algorithms over every program of `grid`:
//   ring, bidir_ring  one ring of every program (ring_order);
//   hierarchical      each cube's ring of its PEs, then for each PE position the ring of the
//                     cubes of its SIP, then the ring of the SIPs;
//   mesh2d            each cube's mesh rows, then its columns, then for each PE position the
//                     ring of every cube (the grid must cover whole cubes).
// Levels whose groups would have one member are left out.
std::vector<Groups> ring_levels(const std::string& algorithm,
                                const components::SystemConfig& config, GridShape grid);

// What a harness needs of a collective's algorithm over the programs of `grid`, for `bytes` of
// f32 per program: the schedule, how the data is cut, and what its messages take.
struct Plan {
  std::unique_ptr<Schedule> schedule;
  std::int64_t block = 0;            // elements per block (the data is cut into one per program)
  std::int64_t segment = 0;          // elements of the largest segment
  std::int64_t piece = 0;            // elements per message: a slot's worth, at most a segment
  std::int64_t step_bytes = 0;       // the most a program sends in a step
  std::vector<std::int64_t> levels;  // ring algorithms: the group size of each level
  std::int64_t channels_in = 0;      // the most channels into one program
  int directions = 1;                // bidir_ring: 2 (each block in two halves)
};
// `bytes` must be a multiple of 4 x element_multiple(collective, algorithm, grid).
Plan make_plan(const components::SystemConfig& config, GridShape grid, Collective collective,
               const std::string& algorithm, std::int64_t bytes);
// What a program's f32 elements must be a multiple of: the programs (x 2 for bidir_ring), whose
// blocks the data is cut into; 1 for trees and broadcast, which move the vector whole.
std::int64_t element_multiple(Collective collective, const std::string& algorithm, GridShape grid);
// The SRAM a program holds while it runs `plan` (see run_schedule): buffer=sram, or a ring
// all-reduce, its whole vector (an all-to-all's input and output); both what a step sends and
// receives and a few pieces being added, and the slots of its channels in when they live in
// its SRAM.
// The most channels any cube receives on in `schedule`: every (sender, receiver) pair whose
// receiver is on that cube (global program g runs on cube g / pes_per_cube). For
// require_message_slots.
std::uint64_t most_channels_into_a_cube(const Schedule& schedule, std::int64_t pes_per_cube);
std::uint64_t plan_sram_bytes(const components::SystemConfig& config, const Plan& plan,
                              Collective collective, Buffer buffer, std::int64_t bytes);

KernelInfo allreduce_info();
KernelInfo reduce_scatter_info();
KernelInfo allgather_info();
KernelInfo broadcast_info();
KernelInfo alltoall_info();

}  // namespace cubesim::kernels::collectives
