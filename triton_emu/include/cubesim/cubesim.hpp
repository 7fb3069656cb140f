#pragma once
// cubesim's public API for users' own kernels, harnesses and GoogleTests:
//   find_package(cubesim CONFIG REQUIRED)  +  target_link_libraries(app cubesim::cubesim)
// See docs/writing-kernels.md.

#include <Eigen/Core>

#include "components/dtype.hpp"
#include "components/spec/spec_paths.hpp"
#include "triton_emu/checks/access_log.hpp"
#include "triton_emu/checks/message_hazards.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/launch/simulation.hpp"
#include "triton_emu/memory/ptr.hpp"
#include "triton_emu/tile/tile.hpp"

#ifdef CUBESIM_PACKAGE_SPECS_DIR
// Defined by find_package(cubesim) for the programs that link cubesim::cubesim: they find the
// package's specs by name (Spec::load("tiny")) wherever they are built or installed.
namespace cubesim::detail {
inline const bool package_specs_added =
    components::add_spec_folder(CUBESIM_PACKAGE_SPECS_DIR, "installed package");
}  // namespace cubesim::detail
#endif

namespace cubesim {
using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using tl::Op;
}  // namespace cubesim
