// gemm_2d: rows of C over cubes and SIPs, columns over PEs, on plain row-major matrices.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <ostream>
#include <set>

#include "kernel_test_support.hpp"
#include "kernels/gemm_2d.hpp"
#include "kernels/harness/host_array.hpp"

namespace cubesim::kernels {
namespace {

using testing::expect_verified;
using testing::spec_named;
using testing::spec_path;
using testing::tiny;
using testing::two_sips;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("gemm_2d", spec, assignments, timing_only, 11);
}

using Case = testing::NumericsCase;

class Gemm2dNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(Gemm2dNumerics, MatchesAnFp64Reference) {
  const auto& c = GetParam();
  expect_verified(run_harness(spec_named(c.spec), c.params));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Gemm2dNumerics,
    ::testing::Values(
        Case{"tiny.json", {"M=64", "K=48", "N=32"}, "tiny_f16"},
        // Nothing divides: bands of 18/19 rows, column blocks of 4/5.
        Case{"tiny.json", {"M=37", "K=23", "N=19"}, "tiny_uneven"},
        Case{"tiny.json", {"M=40", "K=32", "N=24", "dtype=bf16"}, "tiny_bf16"},
        Case{"tiny.json", {"M=33", "K=40", "N=16", "dtype=f32", "block_m=5"}, "tiny_f32_chunks"},
        // B's block (8192 x 18 f16, 288 KiB) exceeds tiny's 256 KiB SRAM, so every GEMM
        // streams it as a strided ref instead.
        Case{"tiny.json", {"M=16", "K=8192", "N=72"}, "tiny_b_streamed"},
        Case{"tiny.json", {"M=3", "K=16", "N=2"}, "more_programs_than_rows_and_columns"},
        Case{"two_sips", {"M=64", "K=32", "N=32"}, "two_sips"},
        Case{"default.json", {"M=256", "K=128", "N=256"}, "default_f16"},
        Case{"default.json", {"M=100", "K=64", "N=200", "dtype=f32"}, "default_f32"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(Gemm2d, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  const std::vector<std::string> params = {"M=64", "K=64", "N=32"};
  const Outcome timed = run_harness(tiny(), params, true);
  const Outcome full = run_harness(tiny(), params);
  EXPECT_FALSE(timed.verified.has_value());
  EXPECT_GT(timed.run.sim_time_ps, 0u);
  EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps);
}

// Every GEMM writes its rows of C straight into C's column block (row stride N): each byte of C
// exactly once, by one program, and nothing else is written.
TEST(Gemm2d, EveryByteOfCIsWrittenOnceWithoutRaces) {
  for (const Spec& spec : {tiny(), two_sips(), Spec::load(spec_path("default.json"))}) {
    Simulation sim(spec, {.timing_only = true});
    const std::int64_t M = 50, K = 24, N = 70;
    const Ptr a = alloc_array(sim, DType::f16, M * K), b = alloc_array(sim, DType::f16, K * N),
              c = alloc_array(sim, DType::f16, M * N);
    const RunResult r = sim.launch(gemm_2d, a, b, c, M, K, N);
    const auto bytes = static_cast<std::uint64_t>(M * N * 2);
    const Coverage cc = r.coverage(c, bytes);
    EXPECT_TRUE(cc.exactly_once()) << spec.config().name << ": " << r.describe(cc, c);
    for (const auto& acc : r.accesses->accesses()) {
      if (!acc.write) continue;
      EXPECT_TRUE(acc.begin >= c.addr && acc.end <= c.addr + bytes)
          << "a write outside C at " << acc.begin;
    }
    const auto races = r.races();
    EXPECT_TRUE(races.empty()) << r.describe(races);
  }
}

TEST(Gemm2d, EachSipComputesItsOwnRows) {
  Simulation sim(two_sips(), {.timing_only = true});
  const std::int64_t M = 16, K = 8, N = 8;  // 4 row bands of 4 rows
  const Ptr a = alloc_array(sim, DType::f16, M * K), b = alloc_array(sim, DType::f16, K * N),
            c = alloc_array(sim, DType::f16, M * N);
  const RunResult r = sim.launch(gemm_2d, a, b, c, M, K, N);
  // The second half of C (rows 8..15) is written by SIP 1 only.
  std::set<std::int64_t> sips;
  for (const auto& acc : r.accesses->accesses())
    if (acc.write && acc.begin >= c.addr + M * N && acc.end <= c.addr + M * N * 2)
      sips.insert(r.programs[acc.program].id[2]);
  EXPECT_EQ(sips, (std::set<std::int64_t>{1}));
}

}  // namespace
}  // namespace cubesim::kernels
