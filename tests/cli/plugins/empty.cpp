// A plugin that registers no kernel.
#include <kernels/plugin.hpp>

namespace {
void register_nothing(cubesim::kernels::Registry&) {}
}  // namespace

CUBESIM_PLUGIN(register_nothing)
