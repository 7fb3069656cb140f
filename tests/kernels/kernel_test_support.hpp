#pragma once
// What every kernel test needs: the shipped specs, and a kernel's harness run as the CLI runs it.

#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace cubesim::kernels::testing {

inline std::string spec_path(const std::string& name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}
inline Spec tiny() { return Spec::load(spec_path("tiny.json")); }
inline Spec two_sips() { return tiny().with("system.sips.count", 2); }

// Runs `kernel`'s harness with "-p NAME=VALUE" assignments on a fresh simulation.
inline Outcome run_kernel(const std::string& kernel, const Spec& spec,
                          const std::vector<std::string>& assignments, bool timing_only,
                          std::uint64_t seed) {
  Simulation sim(spec, {.timing_only = timing_only, .seed = seed});
  const KernelInfo& info = find_kernel(kernel);
  return info.run(sim, parse_params(info, assignments));
}

}  // namespace cubesim::kernels::testing
