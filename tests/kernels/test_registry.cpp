// The kernel registry as the CLI sees it: every kernel listed, its defaults valid, and every
// harness running with its defaults (timing-only, so the whole list stays fast).
#include <gtest/gtest.h>

#include <algorithm>
#include <cubesim/cubesim.hpp>
#include <set>

#include "kernel_test_support.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels {
namespace {

using testing::spec_path;
using testing::tiny;
using testing::two_sips;

TEST(KernelRegistry, ListsEveryBenchmarkKernelOnce) {
  std::multiset<std::string> names;
  for (const auto& k : registry()) names.insert(k.name);
  EXPECT_EQ(names, (std::multiset<std::string>{
                       "allgather", "allreduce", "alltoall", "attention_similarity", "broadcast",
                       "gemm_2d", "reduce_scatter", "ring_attention", "sharded_gemm",
                       "softmax_rows", "splitk_gemm", "tp_linear", "vector_add"}));
}

TEST(KernelRegistry, EveryDefaultIsWithinItsRangeAndChoices) {
  for (const auto& k : registry()) {
    EXPECT_FALSE(k.description.empty()) << k.name;
    for (const auto& p : k.params) {
      EXPECT_FALSE(p.help.empty()) << k.name << "." << p.name;
      if (p.default_value.is_number()) {
        const double v = p.default_value.get<double>();
        EXPECT_GE(v, p.min.value_or(v)) << k.name << "." << p.name;
        EXPECT_LE(v, p.max.value_or(v)) << k.name << "." << p.name;
      }
      if (!p.choices.empty()) {
        const auto def = p.default_value.get<std::string>();
        EXPECT_NE(std::find(p.choices.begin(), p.choices.end(), def), p.choices.end())
            << k.name << "." << p.name;
      }
    }
    // parse_params fills in every default without complaint.
    EXPECT_EQ(parse_params(k, {}).size(), k.params.size()) << k.name;
  }
}

class KernelDefaults : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelDefaults, EveryHarnessRunsWithItsDefaultsInTimingOnlyMode) {
  const Spec spec = Spec::load(spec_path(GetParam()));
  for (const auto& k : registry()) {
    Simulation sim(spec, {.timing_only = true});
    const Outcome o = k.run(sim, parse_params(k, {}));
    EXPECT_FALSE(o.verified.has_value()) << k.name;
    EXPECT_GT(o.run.sim_time_ps, 0u) << k.name;
    if (k.name != "allgather" && k.name != "broadcast" && k.name != "alltoall") {
      // the others only move data
      EXPECT_GT(o.useful_flops, 0u) << k.name;
    }
    EXPECT_GT(o.useful_bytes, 0u) << k.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Specs, KernelDefaults, ::testing::Values("tiny.json", "default.json"),
                         [](const auto& param_info) {
                           return param_info.param.substr(0, param_info.param.find('.'));
                         });

}  // namespace
}  // namespace cubesim::kernels
