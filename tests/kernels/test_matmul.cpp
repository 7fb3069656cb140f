// matmul: one program per tile of C on a logical grid run in waves, A and B streamed by the
// GEMM engine, tiles in grouped order.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <ostream>

#include "kernel_test_support.hpp"
#include "kernels/matmul.hpp"

namespace cubesim::kernels {
namespace {

using testing::expect_usage_error;
using testing::expect_verified;
using testing::spec_named;
using testing::tiny;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("matmul", spec, assignments, timing_only, 7);
}

using Case = testing::NumericsCase;

class MatmulNumerics : public ::testing::TestWithParam<Case> {};

// Every element of C is checked, so a tile that no program computes (or two compute) fails.
TEST_P(MatmulNumerics, MatchesAnFp64Reference) {
  const auto& c = GetParam();
  expect_verified(run_harness(spec_named(c.spec), c.params));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatmulNumerics,
    ::testing::Values(
        Case{"tiny.json", {"M=64", "K=48", "N=64", "block_m=32", "block_n=32"}, "tiny_f16"},
        // Edge tiles in both dimensions, a group of 3 rows of tiles over 7 rows.
        Case{"tiny.json",
             {"M=200", "K=37", "N=136", "block_m=32", "block_n=32", "group_m=3"},
             "uneven_grouped"},
        // K in steps (an f32 accumulator, the last step shorter), B stored N x K.
        Case{"tiny.json",
             {"M=96", "K=100", "N=80", "block_m=32", "block_n=48", "block_k=24", "b_layout=nk",
              "dtype=bf16"},
             "k_steps_nk_bf16"},
        Case{"tiny.json",
             {"M=40", "K=64", "N=72", "block_m=16", "block_n=16", "block_k=64", "dtype=f32",
              "group_m=1"},
             "f32_row_by_row"},
        Case{"default.json", {"M=256", "K=128", "N=512"}, "default"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(Matmul, RunsOneProgramPerTileInWaves) {
  // 7 x 5 tiles on tiny's 8 PEs: 35 programs, 5 waves.
  const Outcome o =
      run_harness(tiny(), {"M=200", "K=16", "N=136", "block_m=32", "block_n=32"}, true);
  EXPECT_EQ(o.details["programs"], 35);
  EXPECT_EQ(o.run.stats.programs, 35u);
  EXPECT_EQ(o.run.stats.waves, 5u);
  EXPECT_EQ(matmul_programs(200, 136, {.block_m = 32, .block_n = 32}), 35);
}

// With memory and links far faster than the engines, a program's time is its GEMM's (2 mb nb K
// at the PE's peak), and the launch takes one such time per wave: a ninth tile on eight PEs
// doubles it.
TEST(Matmul, AComputeBoundGridTakesAGemmPerWave) {
  const Spec fast = tiny().with({{"system.cube.hbm.bandwidth_GBps", 1e5},
                                 {"system.cube.noc.link_bandwidth_GBps", 1e5},
                                 {"system.ucie.bandwidth_GBps", 1e5}});
  const auto& cfg = fast.config();
  constexpr std::int64_t kTile = 32, kK = 8192;
  const double gemm_s = 2.0 * kTile * kTile * kK / cfg.pe.gemm.peak(DType::f16);
  for (const std::int64_t tiles : {8, 9, 16}) {
    const Outcome o = run_harness(fast,
                                  {"M=" + std::to_string(kTile * tiles), "K=" + std::to_string(kK),
                                   "N=" + std::to_string(kTile), "block_m=32", "block_n=32"},
                                  true);
    const std::uint64_t waves = (tiles + 7) / 8;
    ASSERT_EQ(o.run.stats.waves, waves);
    const double expected = static_cast<double>(waves) * gemm_s;
    // Within 5 %: the engine's start-up, the latencies and the operands' first rows.
    EXPECT_NEAR(static_cast<double>(o.run.sim_time_ps) * 1e-12, expected, 0.05 * expected)
        << tiles << " tiles";
  }
}

TEST(Matmul, TimingOnlyTakesTheSameSimulatedTime) {
  const std::vector<std::string> p = {"M=96",       "K=64",       "N=64",
                                      "block_m=32", "block_n=32", "block_k=16"};
  EXPECT_EQ(run_harness(tiny(), p, true).run.sim_time_ps, run_harness(tiny(), p).run.sim_time_ps);
}

TEST(Matmul, AnAccumulatorLargerThanTheSramIsRefused) {
  // tiny's PEs have 256 KiB: a 256 x 256 f32 accumulator and its f16 cast need 384 KiB.
  expect_usage_error("matmul",
                     {"M=512", "K=512", "N=512", "block_m=256", "block_n=256", "block_k=64"},
                     "block_k = 0");
  // Without steps of K there is no accumulator: the same tiles run.
  EXPECT_NO_THROW(
      run_harness(tiny(), {"M=512", "K=512", "N=512", "block_m=256", "block_n=256"}, true));
}

}  // namespace
}  // namespace cubesim::kernels
