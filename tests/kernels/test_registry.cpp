// The kernel registry as the CLI sees it: every kernel listed, its defaults valid, and every
// harness running with its defaults (timing-only, so the whole list stays fast).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cubesim/cubesim.hpp>
#include <limits>
#include <set>

#include "kernel_test_support.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels {
namespace {

using testing::spec_path;
using testing::tiny;
using testing::two_sips;

TEST(KernelRegistry, ListsEveryBenchmarkKernelOnce) {
  std::multiset<std::string> names;
  for (const auto& k : registry())
    if (kernel_registry().origin(k.name) == "cubesim") names.insert(k.name);
  EXPECT_EQ(names, (std::multiset<std::string>{
                       "allgather", "allreduce", "alltoall", "attention_similarity", "broadcast",
                       "gemm_2d", "matmul", "reduce_scatter", "ring_attention", "sharded_gemm",
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

// A kernel Registry::add accepts; each test below breaks one thing.
KernelInfo sound_kernel() {
  return {
      .name = "my_kernel",
      .description = "a kernel of the tests",
      .params = {int_param("n", 64, 1, 1024, "elements"), real_param("alpha", 0.5, -1, 1, "scale"),
                 choice_param("mode", "fast", {"fast", "exact"}, "how"),
                 bool_param("check", true, "verify")},
      .run = [](Simulation&, const Params&) { return Outcome{}; }};
}

void expect_refused(Registry& r, const KernelInfo& k, const std::string& says) {
  try {
    r.add(k);
    ADD_FAILURE() << "accepted kernel " << k.name << "; expected: " << says;
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(says));
  }
}

TEST(KernelRegistry, AddsASoundKernelAndFindsItByName) {
  Registry r;
  r.add(sound_kernel());
  EXPECT_EQ(r.find("my_kernel").params.size(), 4u);
  EXPECT_EQ(r.origin("my_kernel"), "your program");
  EXPECT_THROW(r.find("other"), UsageError);
}

TEST(KernelRegistry, RefusesBadKernelsNamingTheKernelAndTheFix) {
  Registry r;
  r.add(sound_kernel());
  expect_refused(r, sound_kernel(),
                 "cannot register kernel my_kernel (registered by your program): a kernel of that "
                 "name is already registered by your program; give yours another name");
  auto k = sound_kernel();
  k.name = "";
  expect_refused(r, k, "cannot register kernel ''");
  k.name = "two words";
  expect_refused(r, k, "a kernel name is letters, digits");
  k = sound_kernel();
  k.name = "no_run";
  k.run = nullptr;
  expect_refused(r, k, "kernel no_run (registered by your program): it has no harness");
  k = sound_kernel();
  k.name = "no_text";
  k.description.clear();
  expect_refused(r, k, "it has no description");

  const struct {
    ParamSpec param;
    std::string says;
  } bad_params[] = {
      {int_param("n", 0, 1, 1024, "x"),
       "parameter n: its default 0 is outside its range 1 to 1024"},
      {int_param("n", 2048, 1, 1024, "x"), "parameter n: its default 2048 is outside its range"},
      {int_param("n", 8, 16, 4, "x"), "parameter n: min 16 is above max 4"},
      {{.name = "n", .type = ParamSpec::Type::integer, .default_value = 1.5},
       "parameter n: its default 1.5 is not an integer"},
      {{.name = "b", .type = ParamSpec::Type::boolean, .default_value = "yes"},
       "parameter b: its default \"yes\" is not true or false"},
      {{.name = "s", .type = ParamSpec::Type::string, .default_value = "a", .min = 0},
       "parameter s has a range but is not a number"},
      {choice_param("mode", "slow", {"fast", "exact"}, "x"),
       "parameter mode: its default \"slow\" is not one of its choices"},
      {{.name = "x", .type = ParamSpec::Type::real, .default_value = 1, .choices = {"a"}},
       "parameter x has choices but is not a string"},
      {{.name = "x",
        .type = ParamSpec::Type::real,
        .default_value = 1,
        .max = std::numeric_limits<double>::infinity()},
       "parameter x: min and max must be finite"},
      {int_param("n=1", 1, 1, 2, "x"), "parameter 'n=1' needs a name of letters"},
  };
  for (const auto& c : bad_params) {
    k = sound_kernel();
    k.name = "bad_param";
    k.params = {c.param};
    expect_refused(r, k,
                   "cannot register kernel bad_param (registered by your program): " + c.says);
  }
  k = sound_kernel();
  k.name = "bad_param";
  k.params.push_back(int_param("alpha", 1, 1, 2, "x"));
  expect_refused(r, k, "parameter alpha is declared twice; give each parameter its own name");
  EXPECT_EQ(r.kernels().size(), 1u);  // nothing refused was added
}

TEST(KernelRegistry, RegisterKernelAddsToTheRegistryTheCliUses) {
  auto k = sound_kernel();
  k.name = "registered_by_a_test";
  register_kernel(k);
  EXPECT_EQ(&find_kernel("registered_by_a_test"), &registry().back());
  EXPECT_EQ(kernel_registry().origin("vector_add"), "cubesim");
  EXPECT_THROW(register_kernel(k), UsageError);
  k.name = "sharded_gemm";
  EXPECT_THROW(register_kernel(k), UsageError);
}

class KernelDefaults : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelDefaults, EveryHarnessRunsWithItsDefaultsInTimingOnlyMode) {
  const Spec spec = Spec::load(spec_path(GetParam()));
  for (const auto& k : registry()) {
    if (kernel_registry().origin(k.name) != "cubesim") continue;
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
