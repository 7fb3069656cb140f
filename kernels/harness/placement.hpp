#pragma once
// Where a kernel whose programs stride over blocks of its buffers (block b to program
// b mod programs) puts them: its `placement` parameter, and the Placement it stands for.

#include <cstdint>
#include <string>

#include "kernels/registry.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// "cube" (block b over the channels of program b's cube), "pe" (on program b's PE's own
// channels), "system" (interleaved over every cube) or "auto" (cube on a grid of programs at
// their PEs' coordinates, else system); `what` names the buffers in its help ("x, y and out").
ParamSpec placement_param(const std::string& what);

// The placement `p`'s `placement` asks for, blocks of `block_bytes` dealt to the programs of
// sim.launch()'s grid. A UsageError for `kernel` when cube or pe is asked of a logical grid
// (`logical`: the kernel's own, or a --grid the dispatcher places).
Placement block_placement(const Simulation& sim, const Params& p, std::uint64_t block_bytes,
                          const std::string& kernel, bool logical);

}  // namespace cubesim::kernels
