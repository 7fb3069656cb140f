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
#include <string>
#include <vector>

#include "components/system_config.hpp"
#include "kernels/collectives/algorithms.hpp"
#include "kernels/harness.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels::collectives {

// The ring through every program of `grid` (ring position -> global program id): within each
// cube whose whole mesh runs programs, a cycle whose steps are single mesh hops when the mesh
// has an even number of rows or columns (else a snake, whose closing step is longer); the
// cubes one after another in global order (SIP by SIP).
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

KernelInfo allreduce_info();
KernelInfo reduce_scatter_info();
KernelInfo allgather_info();
KernelInfo broadcast_info();
KernelInfo alltoall_info();

}  // namespace cubesim::kernels::collectives
