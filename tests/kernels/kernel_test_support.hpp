#pragma once
// What every kernel test needs: the shipped specs, a kernel's harness run as the CLI runs it,
// the shape of a numerics case, its usage errors, and what a message costs by the spec.

#include <gmock/gmock.h>
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

// `kernel`'s harness on tiny.json refuses `assignments` with a UsageError (exit 2) saying `text`.
inline void expect_usage_error(const std::string& kernel,
                               const std::vector<std::string>& assignments,
                               const std::string& text) {
  try {
    run_kernel(kernel, tiny(), assignments, true, 1);
    FAIL() << "no error for " << ::testing::PrintToString(assignments);
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
    EXPECT_THAT(e.what(), ::testing::HasSubstr(text));
  }
}

// What a one-packet message of `bytes` costs between mesh neighbours in PE SRAM slots, from
// the spec: h the hop latency, s its time on a link, w / r the slot's write latency / read,
// credit a credit's time on a link. From its send to the end of its recv: h + s + w + r.
struct MessageCosts {
  emu::Tick h, s, w, r, credit;
  static MessageCosts of(const components::SystemConfig& c, std::uint64_t bytes) {
    const auto& m = c.messages;
    const auto& link = c.cube.noc.link_bandwidth;
    return {c.cube.noc.hop_latency, link.transfer_time(bytes), m.pe_sram_latency,
            m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(bytes),
            link.transfer_time(m.credit_bytes)};
  }
  emu::Tick delivered() const { return h + s + w + r; }
};

// The vector unit's time for an element-wise op over `elems` elements.
inline emu::Tick vector_op_time(const components::SystemConfig& c, std::int64_t elems) {
  return c.pe.clock.cycles_to_ticks(
      emu::Cycles{static_cast<std::uint64_t>((elems + c.pe.vector.lanes - 1) / c.pe.vector.lanes) +
                  c.pe.vector.latency_cycles});
}

}  // namespace cubesim::kernels::testing
