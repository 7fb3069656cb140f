// A plugin whose cubesim_plugin_abi answers a null pointer.
#include <kernels/plugin.hpp>

namespace {
void register_nothing(cubesim::kernels::Registry&) {}
}  // namespace

extern "C" const cubesim::kernels::PluginAbi* cubesim_plugin_abi() {
  return nullptr;
}

extern "C" void cubesim_register_kernels(cubesim::kernels::Registry& registry) {
  register_nothing(registry);
}
