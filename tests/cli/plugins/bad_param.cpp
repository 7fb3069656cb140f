// A plugin whose kernel declares a parameter default outside its range.
#include <kernels/plugin.hpp>

namespace {
void register_kernels(cubesim::kernels::Registry& registry) {
  registry.add({.name = "bad_default",
                .description = "block defaults to 0 but must be at least 1",
                .params = {{.name = "block",
                            .type = cubesim::kernels::ParamSpec::Type::integer,
                            .default_value = 0,
                            .min = 1,
                            .max = 64}},
                .run = [](cubesim::Simulation&, const cubesim::kernels::Params&) {
                  return cubesim::kernels::Outcome{};
                }});
}
}  // namespace

CUBESIM_PLUGIN(register_kernels)
