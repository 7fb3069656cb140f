// A plugin whose kernel takes the name of a shipped one.
#include <kernels/plugin.hpp>

namespace {
void register_kernels(cubesim::kernels::Registry& registry) {
  registry.add({.name = "vector_add",
                .description = "a second vector_add",
                .params = {},
                .run = [](cubesim::Simulation&, const cubesim::kernels::Params&) {
                  return cubesim::kernels::Outcome{};
                }});
}
}  // namespace

CUBESIM_PLUGIN(register_kernels)
