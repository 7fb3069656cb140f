#pragma once
// What every kernel test needs: the shipped specs, a kernel's harness run as the CLI runs it,
// and the shape of a numerics case.

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace cubesim::kernels::testing {

inline std::string spec_path(const std::string& name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}
inline Spec tiny() {
  return Spec::load(spec_path("tiny.json"));
}
inline Spec two_sips() {
  return tiny().with("system.sips.count", 2);
}

// A shipped spec by file name, or "two_sips": tiny.json with two SIPs.
inline Spec spec_named(const std::string& name) {
  return name == "two_sips" ? two_sips() : Spec::load(spec_path(name));
}

// One case of a kernel's numerics suite: a spec (spec_named), "NAME=VALUE" parameters, and
// the name the test listing shows.
struct NumericsCase {
  std::string spec;
  std::vector<std::string> params;
  std::string name;
};
// Names the case in test listings (gtest would print its bytes).
inline void PrintTo(const NumericsCase& c, std::ostream* os) {
  *os << c.name;
}

// What every numerics case asserts of a harness run: it verified, and checked something.
inline void expect_verified(const Outcome& o) {
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified) << o.details.dump(2);
  EXPECT_GT(o.elements_checked, 0u);
}

// Runs `kernel`'s harness with "-p NAME=VALUE" assignments on a fresh simulation.
inline Outcome run_kernel(const std::string& kernel, const Spec& spec,
                          const std::vector<std::string>& assignments, bool timing_only,
                          std::uint64_t seed) {
  Simulation sim(spec, {.timing_only = timing_only, .seed = seed});
  const KernelInfo& info = find_kernel(kernel);
  return info.run(sim, parse_params(info, assignments));
}

}  // namespace cubesim::kernels::testing
