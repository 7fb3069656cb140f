#pragma once
// The ring through every program of a launch, which the ring algorithms, the chain broadcast,
// the trees and the all-to-all follow (and ring_attention passes its K/V blocks along).

#include <cstdint>
#include <vector>

#include "components/system_config.hpp"
#include "kernels/harness/grid.hpp"

namespace cubesim::kernels::collectives {

// The ring through every program of `grid` (ring position -> global program id): within each
// cube whose whole mesh runs programs, a cycle whose steps are single mesh hops when the mesh
// has an even number of rows or columns (else a snake, whose closing step is longer); the
// cubes of each SIP, and the SIPs, one after another along the same kind of cycle through
// their grid when the UCIe (inter-SIP) topology is a mesh or torus and the launch covers
// every cube (SIP), else in index order.
std::vector<std::int64_t> ring_order(const components::SystemConfig& config, GridShape grid);

}  // namespace cubesim::kernels::collectives
