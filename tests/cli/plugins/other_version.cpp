// A plugin as a cubesim of another version would build it: its ABI answer names that version.
#include <kernels/plugin.hpp>

namespace {
void register_nothing(cubesim::kernels::Registry&) {}
}  // namespace

extern "C" const cubesim::kernels::PluginAbi* cubesim_plugin_abi() {
  static constexpr cubesim::kernels::PluginAbi abi = {"0.0.1", 1, 2, 3, 0};
  return &abi;
}

extern "C" void cubesim_register_kernels(cubesim::kernels::Registry& registry) {
  register_nothing(registry);
}
