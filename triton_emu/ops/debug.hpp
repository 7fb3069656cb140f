#pragma once
// tl.device_print and tl.device_assert: debugging, free of simulated time (it must not change
// the timing). device_print writes one line to stdout, "[program (x, y, z) on PE at TIME]
// prefix: [values]" (the shape and dtype when a timing-only run has no values); lines come in
// simulated-time order, which is deterministic. device_assert is a kernel fault naming the
// program, the message and the first element of the condition that is zero (false).

#include <string_view>

#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::ops {

void device_print(const detail::Program& program, std::string_view prefix, const tl::Tile& tile);
void device_assert(const detail::Program& program, const tl::Tile& condition,
                   std::string_view message);

}  // namespace cubesim::ops
