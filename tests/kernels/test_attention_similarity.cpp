// attention_similarity: single head, fused projection, pre-projected keys and the per-head
// baseline, verified against fp64 and checked for sharding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <ostream>

#include "kernel_test_support.hpp"
#include "kernels/attention_similarity.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"

namespace cubesim::kernels {
namespace {

using testing::spec_path;
using testing::tiny;
using testing::two_sips;

using ::testing::HasSubstr;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("attention_similarity", spec, assignments, timing_only, 13);
}

struct Case {
  std::string spec, variant;
  std::vector<std::string> params;
};

// Names the case in test listings (gtest would print its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.spec << " " << c.variant;
}

class AttentionNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionNumerics, MatchesFp64) {
  const auto& c = GetParam();
  auto params = c.params;
  params.push_back("variant=" + c.variant);
  const Outcome o = run_harness(Spec::load(spec_path(c.spec)), params);
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified) << o.details.dump(2);
  EXPECT_LE(o.details["projections"]["max_rel_error"].get<double>(),
            o.details["projections"]["tolerance"].get<double>());
  EXPECT_GT(o.elements_checked, 0u);
}

const std::vector<std::string> kSmall = {"queries=40", "keys=72", "dim=48", "heads=3",
                                         "head_dim=16"};
const std::vector<std::string> kDefaultSmall = {"queries=128", "keys=256", "dim=64", "heads=4",
                                                "head_dim=32"};

INSTANTIATE_TEST_SUITE_P(
    Variants, AttentionNumerics,
    ::testing::Values(
        Case{"tiny.json", "single", kSmall}, Case{"tiny.json", "multi_fused", kSmall},
        Case{"tiny.json", "multi_preprojected", kSmall},
        Case{"tiny.json", "multi_per_head", kSmall},
        Case{"tiny.json", "multi_fused", {"queries=5", "keys=3", "dim=8", "heads=2", "head_dim=4"}},
        Case{"tiny.json",
             "multi_fused",
             {"queries=24", "keys=40", "dim=32", "heads=2", "head_dim=8", "dtype=bf16"}},
        Case{"tiny.json",
             "multi_per_head",
             {"queries=24", "keys=40", "dim=32", "heads=2", "head_dim=8", "dtype=f32"}},
        Case{"default.json", "single", kDefaultSmall},
        Case{"default.json", "multi_fused", kDefaultSmall},
        Case{"default.json", "multi_preprojected", kDefaultSmall},
        Case{"default.json", "multi_per_head", kDefaultSmall}),
    [](const auto& param_info) {
      return param_info.param.spec.substr(0, param_info.param.spec.find('.')) + "_" +
             param_info.param.variant + "_" + std::to_string(param_info.index);
    });

TEST(AttentionSimilarity, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  for (const std::string variant : {"multi_fused", "multi_preprojected", "multi_per_head"}) {
    auto params = kSmall;
    params.push_back("variant=" + variant);
    const Outcome timed = run_harness(tiny(), params, true);
    const Outcome full = run_harness(tiny(), params);
    EXPECT_FALSE(timed.verified.has_value());
    EXPECT_GT(timed.run.sim_time_ps, 0u);
    EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps) << variant;
  }
}

TEST(AttentionSimilarity, PreprojectedReportsBothLaunchesAndTheirSum) {
  auto params = kSmall;
  params.push_back("variant=multi_preprojected");
  const Outcome o = run_harness(tiny(), params, true);
  const auto keys = o.details["preprojection_sim_time_ps"].get<std::uint64_t>();
  const auto search = o.details["search_sim_time_ps"].get<std::uint64_t>();
  EXPECT_GT(keys, 0u);
  EXPECT_GT(search, 0u);
  EXPECT_EQ(o.run.sim_time_ps, keys + search);
  EXPECT_EQ(o.run.report["launches"].size(), 2u);
}

struct Launched {
  RunResult run;
  AttentionProblem p;
};

template <typename Kernel>
Launched launch(Simulation& sim, Kernel kernel, std::int64_t heads) {
  AttentionProblem p;
  p.num_queries = 37;
  p.num_keys = 29;
  p.dim = 16;
  p.heads = heads;
  p.head_dim = 8;
  p.queries = alloc_array(sim, p.dtype, p.num_queries * p.dim);
  p.keys = alloc_array(sim, p.dtype, p.num_keys * p.dim);
  p.wq = alloc_array(sim, p.dtype, p.proj_width() * p.dim);
  p.wk = alloc_array(sim, p.dtype, p.proj_width() * p.dim);
  p.q_proj = alloc_array(sim, p.dtype, p.num_queries * p.proj_width());
  p.k_proj = alloc_array(sim, p.dtype, p.num_keys * p.proj_width());
  p.scores = alloc_array(sim, DType::f32, p.num_queries * p.num_keys);
  return {sim.launch(kernel, p), p};
}

TEST(AttentionSimilarity, FusedWritesEveryScoreAndProjectionOnceWithoutRaces) {
  for (const Spec& spec : {tiny(), tiny().with("system.sips.count", 2)}) {
    Simulation sim(spec, {.timing_only = true});
    const auto [r, p] = launch(sim, attention_similarity_fused, 3);
    for (const auto& [ptr, bytes] : {std::pair{p.scores, p.num_queries * p.num_keys * 4},
                                     std::pair{p.k_proj, p.num_keys * p.proj_width() * 2},
                                     std::pair{p.q_proj, p.num_queries * p.proj_width() * 2}}) {
      const Coverage c = r.coverage(ptr, static_cast<std::uint64_t>(bytes));
      EXPECT_TRUE(c.exactly_once()) << r.describe(c, ptr);
    }
    const auto races = r.races();
    EXPECT_TRUE(races.empty()) << r.describe(races);
  }
}

TEST(AttentionSimilarity, WithoutItsBarrierTheFusedKernelWouldRace) {
  // The same work with the barrier left out: programs read projected keys that others write.
  const auto no_barrier = [](tl::Context& tl, const AttentionProblem& p) {
    const std::int64_t pid = global_program_id(tl), programs = total_programs(tl);
    const Range keys = split_range(p.num_keys, programs, pid);
    const Range queries = split_range(p.num_queries, programs, pid);
    const std::int64_t w = p.proj_width();
    if (!keys.empty()) {
      tl::Handle h = tl.composite(
          tl::Op::gemm, tl.ref(p.keys + keys.begin * p.dim * 2, {keys.size(), p.dim}, p.dtype),
          tl.ref(p.wk, {w, p.dim}, p.dtype), p.k_proj + keys.begin * w * 2,
          {.trans_b = true, .out_dtype = std::nullopt});
      tl.wait(h);
    }
    if (queries.empty()) return;
    const tl::Tile q = tl.zeros({queries.size(), w}, p.dtype);
    tl::Handle h = tl.composite(tl::Op::gemm, q, tl.ref(p.k_proj, {p.num_keys, w}, p.dtype),
                                p.scores + queries.begin * p.num_keys * 4,
                                {.trans_b = true, .out_dtype = DType::f32});
    tl.wait(h);
  };
  Simulation sim(tiny(), {.timing_only = true});
  const auto [r, p] = launch(sim, no_barrier, 2);
  const auto races = r.races();
  ASSERT_FALSE(races.empty());
  EXPECT_FALSE(races.front().write_write);
}

TEST(AttentionSimilarity, PreprojectedLaunchesWriteOnceWithoutRaces) {
  Simulation sim(tiny(), {.timing_only = true});
  const auto [r1, p] = launch(sim, attention_project_keys, 2);
  const RunResult r2 = sim.launch(attention_similarity_preprojected, p);
  const auto kp_bytes = static_cast<std::uint64_t>(p.num_keys * p.proj_width() * 2);
  EXPECT_TRUE(r1.coverage(p.k_proj, kp_bytes).exactly_once());
  const auto s_bytes = static_cast<std::uint64_t>(p.num_queries * p.num_keys * 4);
  const Coverage c = r2.coverage(p.scores, s_bytes);
  EXPECT_TRUE(c.exactly_once()) << r2.describe(c, p.scores);
  EXPECT_TRUE(r1.races().empty());
  EXPECT_TRUE(r2.races().empty());
}

TEST(AttentionSimilarity, PerHeadAccumulatesEachScoreOnlyInItsOwnProgram) {
  Simulation sim(tiny(), {.timing_only = true});
  const std::int64_t heads = 3;
  const auto [r, p] = launch(sim, attention_similarity_per_head, heads);
  const auto s_bytes = static_cast<std::uint64_t>(p.num_queries * p.num_keys * 4);
  const Coverage c = r.coverage(p.scores, s_bytes);
  // Every score is written once per head, always by the program that owns its row: overlaps,
  // but never of two programs, and no gaps.
  EXPECT_TRUE(c.gaps.empty());
  std::uint64_t overlapped = 0;
  for (const auto& ov : c.overlaps) {
    overlapped += ov.range.end - ov.range.begin;
    ASSERT_EQ(ov.programs.size(), static_cast<std::size_t>(heads));
    EXPECT_EQ(std::count(ov.programs.begin(), ov.programs.end(), ov.programs.front()), heads);
  }
  EXPECT_EQ(overlapped, s_bytes);
  const auto kp_bytes = static_cast<std::uint64_t>(p.num_keys * p.proj_width() * 2);
  EXPECT_TRUE(r.coverage(p.k_proj, kp_bytes).exactly_once());
  const auto races = r.races();
  EXPECT_TRUE(races.empty()) << r.describe(races);
}

TEST(AttentionSimilarity, AnUnknownVariantIsAUsageErrorListingThem) {
  try {
    run_harness(tiny(), {"variant=multi_3d"}, true);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("single, multi_fused, multi_preprojected, multi_per_head"));
  }
}

}  // namespace
}  // namespace cubesim::kernels
