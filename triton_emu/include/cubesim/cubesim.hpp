#pragma once
// cubesim's public API for users' own kernels, harnesses and GoogleTests:
//   find_package(cubesim CONFIG REQUIRED)  +  target_link_libraries(app cubesim::cubesim)
// See docs/writing-kernels.md.

#include <Eigen/Core>

#include "components/dtype.hpp"
#include "triton_emu/access_log.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/message_hazards.hpp"
#include "triton_emu/ptr.hpp"
#include "triton_emu/simulation.hpp"
#include "triton_emu/tile.hpp"

namespace cubesim {
using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using tl::Op;
}  // namespace cubesim
