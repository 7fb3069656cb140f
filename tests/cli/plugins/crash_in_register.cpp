// A plugin whose registration function writes through a bad pointer.
#include <kernels/plugin.hpp>

#include "crash.hpp"

namespace {
void register_kernels(cubesim::kernels::Registry&) {
  crash::write_through_bad_pointer();
}
}  // namespace

CUBESIM_PLUGIN(register_kernels)
