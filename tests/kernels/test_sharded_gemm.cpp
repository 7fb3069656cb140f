// sharded_gemm: ADR-0022's column sharding with the SIP axis folded in, its harness, and the
// sharding checks that catch the ADR's original kernel on a system of several SIPs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <ostream>

#include "kernel_test_support.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/sharded_gemm.hpp"

namespace cubesim::kernels {
namespace {

using testing::expect_verified;
using testing::spec_named;
using testing::spec_path;
using testing::tiny;
using testing::two_sips;

using ::testing::HasSubstr;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("sharded_gemm", spec, assignments, timing_only, 3);
}

// The ADR's usage example, verbatim: it predates axis 2.
void adr_sharded_gemm(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                      std::int64_t K, std::int64_t N) {
  const std::int64_t local_pid = tl.program_id(0);
  const std::int64_t cube_id = tl.program_id(1);
  const std::int64_t global_pid = cube_id * tl.num_programs(0) + local_pid;
  const std::int64_t n_per_pid = N / (tl.num_programs(1) * tl.num_programs(0));
  const std::int64_t col_start = global_pid * n_per_pid;
  auto a = tl.load(a_ptr, {M, K}, DType::f16);
  auto b = tl.ref(b_ptr + col_start * K * 2, {K, n_per_pid}, DType::f16);
  auto h = tl.composite(Op::gemm, a, b, out_ptr + col_start * M * 2);
  tl.wait(h);
}

struct Buffers {
  Ptr a, b, c;
  std::uint64_t c_bytes;
};

Buffers alloc_gemm(Simulation& sim, std::int64_t M, std::int64_t K, std::int64_t N) {
  Buffers x{alloc_array(sim, DType::f16, M * K), alloc_array(sim, DType::f16, K * N),
            alloc_array(sim, DType::f16, M * N), static_cast<std::uint64_t>(M * N * 2)};
  write_array(sim, x.a, random_array(DType::f16, M * K, 5, 1));
  write_array(sim, x.b, random_array(DType::f16, K * N, 5, 2));
  return x;
}

using Case = testing::NumericsCase;

class ShardedGemmNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedGemmNumerics, MatchesAnFp64Reference) {
  const auto& c = GetParam();
  const Outcome o = run_harness(spec_named(c.spec), c.params);
  expect_verified(o);
  EXPECT_GT(o.run.sim_time_ps, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ShardedGemmNumerics,
    ::testing::Values(
        Case{"tiny.json", {"M=64", "K=96", "N=64"}, "tiny_f16_whole"},
        Case{"tiny.json", {"M=48", "K=64", "N=32", "dtype=bf16"}, "tiny_bf16"},
        Case{"tiny.json", {"M=40", "K=72", "N=16", "dtype=f32"}, "tiny_f32"},
        Case{"tiny.json", {"M=70", "K=64", "N=32", "block_m=16"}, "tiny_explicit_blocks"},
        // 512 x 512 f16 is 512 KiB, twice tiny's SRAM: automatic blocks of 128 rows.
        Case{"tiny.json", {"M=512", "K=512", "N=16"}, "tiny_automatic_blocks"},
        Case{"two_sips", {"M=32", "K=64", "N=64"}, "two_sips"},
        Case{"default.json", {"M=128", "K=256", "N=256"}, "default_f16"},
        Case{"default.json", {"M=64", "K=128", "N=128", "dtype=bf16"}, "default_bf16"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(ShardedGemm, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  const std::vector<std::string> params = {"M=64", "K=64", "N=64"};
  const Outcome timed = run_harness(tiny(), params, true);
  const Outcome full = run_harness(tiny(), params);
  EXPECT_FALSE(timed.verified.has_value());
  EXPECT_GT(timed.run.sim_time_ps, 0u);
  EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps);
}

TEST(ShardedGemm, EveryOutputByteIsWrittenOnceWithoutRaces) {
  for (const std::int64_t block_m : {0, 8}) {
    Simulation sim(Spec::load(spec_path("default.json")));
    const std::int64_t M = 32, K = 64, N = 128;
    const Buffers x = alloc_gemm(sim, M, K, N);
    const RunResult r = sim.launch(sharded_gemm_with, x.a, x.b, x.c, M, K, N,
                                   ShardedGemmOptions{.block_m = block_m});
    const Coverage c = r.coverage(x.c, x.c_bytes);
    EXPECT_TRUE(c.exactly_once()) << "block_m " << block_m << ": " << r.describe(c, x.c);
    const auto races = r.races();
    EXPECT_TRUE(races.empty()) << r.describe(races);
  }
}

TEST(ShardedGemm, OnTwoSipsEachSipWritesItsOwnColumns) {
  Simulation sim(two_sips());
  const std::int64_t M = 16, K = 32, N = 64;  // 16 programs, 4 columns each
  const Buffers x = alloc_gemm(sim, M, K, N);
  const RunResult r = sim.launch(sharded_gemm, x.a, x.b, x.c, M, K, N);
  const Coverage c = r.coverage(x.c, x.c_bytes);
  EXPECT_TRUE(c.exactly_once()) << r.describe(c, x.c);
  EXPECT_TRUE(r.races().empty());
}

// DESIGN.md's motivating example: the ADR's kernel ignores axis 2, so the matching PEs of both
// SIPs compute and write the same columns. coverage() must report every byte as an overlap.
TEST(ShardedGemm, TheAdrsOriginalKernelOnTwoSipsWritesEveryColumnTwice) {
  Simulation sim(two_sips(), {.timing_only = true});
  const std::int64_t M = 16, K = 32, N = 64;
  const Ptr a = alloc_array(sim, DType::f16, M * K), b = alloc_array(sim, DType::f16, K * N),
            out = alloc_array(sim, DType::f16, M * N);
  const auto bytes = static_cast<std::uint64_t>(M * N * 2);
  const RunResult r = sim.launch(adr_sharded_gemm, a, b, out, M, K, N);
  const Coverage c = r.coverage(out, bytes);
  EXPECT_FALSE(c.exactly_once());
  EXPECT_TRUE(c.gaps.empty()) << r.describe(c, out);
  ASSERT_FALSE(c.overlaps.empty());
  std::uint64_t overlapped = 0;
  for (const auto& ov : c.overlaps) {
    overlapped += ov.range.end - ov.range.begin;
    ASSERT_EQ(ov.programs.size(), 2u);
    const auto& p0 = r.programs[ov.programs[0]];
    const auto& p1 = r.programs[ov.programs[1]];
    EXPECT_NE(p0.id[2], p1.id[2]) << "the two writers are on different SIPs";
    EXPECT_EQ(p0.id[0], p1.id[0]);
    EXPECT_EQ(p0.id[1], p1.id[1]);
  }
  EXPECT_EQ(overlapped, bytes);
  EXPECT_FALSE(r.races().empty());
  // describe() names both writers by their program ids (axis 0, 1, 2).
  EXPECT_THAT(r.describe(c, out), HasSubstr("program (0, 0, 0); program (0, 0, 1)"));
}

TEST(ShardedGemm, OnOneSipItIsTheAdrsKernel) {
  const std::int64_t M = 32, K = 64, N = 64;
  std::vector<std::byte> outputs[2];
  std::uint64_t times[2];
  for (int which = 0; which < 2; ++which) {
    Simulation sim(tiny());
    const Buffers x = alloc_gemm(sim, M, K, N);
    const RunResult r = which == 0 ? sim.launch(adr_sharded_gemm, x.a, x.b, x.c, M, K, N)
                                   : sim.launch(sharded_gemm, x.a, x.b, x.c, M, K, N);
    times[which] = r.sim_time_ps;
    outputs[which] = sim.read<std::byte>(x.c, x.c_bytes);
  }
  EXPECT_EQ(times[0], times[1]);
  EXPECT_TRUE(outputs[0] == outputs[1]);
}

// A deliberately gappy kernel: integer division drops the remainder of N, so the last columns
// are never written. coverage() finds the gap.
void gappy_sharded_gemm(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                        std::int64_t K, std::int64_t N) {
  const std::int64_t global_pid = global_program_id(tl);
  const std::int64_t n_per_pid = N / total_programs(tl);  // the bug: N % programs columns lost
  const std::int64_t col_start = global_pid * n_per_pid;
  auto a = tl.load(a_ptr, {M, K}, DType::f16);
  auto b = tl.ref(b_ptr + col_start * K * 2, {K, n_per_pid}, DType::f16);
  auto h = tl.composite(Op::gemm, a, b, out_ptr + col_start * M * 2);
  tl.wait(h);
}

TEST(ShardedGemm, CoverageCatchesAKernelThatLeavesAGap) {
  Simulation sim(tiny(), {.timing_only = true});
  const std::int64_t M = 8, K = 16, N = 8 * 4 + 3;  // 8 programs: 3 columns left over
  const Ptr a = alloc_array(sim, DType::f16, M * K), b = alloc_array(sim, DType::f16, K * N),
            out = alloc_array(sim, DType::f16, M * N);
  const RunResult r = sim.launch(gappy_sharded_gemm, a, b, out, M, K, N);
  const Coverage c = r.coverage(out, static_cast<std::uint64_t>(M * N * 2));
  EXPECT_FALSE(c.exactly_once());
  EXPECT_TRUE(c.overlaps.empty());
  ASSERT_EQ(c.gaps.size(), 1u);
  EXPECT_EQ(c.gaps[0].begin, out.addr + static_cast<std::uint64_t>(M * (N - 3) * 2));
  EXPECT_EQ(c.gaps[0].end, out.addr + static_cast<std::uint64_t>(M * N * 2));
}

TEST(ShardedGemm, NNotDivisibleByTheProgramsIsAUsageErrorSayingWhatWorks) {
  try {
    run_harness(Spec::load(spec_path("default.json")), {"N=1000"}, true);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
    EXPECT_THAT(e.what(), HasSubstr("N = 1000 is not divisible by the 64 programs (4 cubes x 16 "
                                    "PEs); use a multiple of 64"));
  }
  try {
    run_harness(two_sips(), {"N=20"}, true);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("16 programs (2 SIPs x 2 cubes x 4 PEs)"));
  }
}

TEST(ShardedGemm, LaunchedDirectlyWithABadNItFaultsSayingWhy) {
  Simulation sim(tiny(), {.timing_only = true});
  const Ptr p = sim.alloc(1 << 16);
  try {
    sim.launch(sharded_gemm, p, p, p, std::int64_t{4}, std::int64_t{4}, std::int64_t{12});
    FAIL() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    EXPECT_THAT(e.what(), HasSubstr("N = 12 is not divisible by the 8 programs"));
  }
}

TEST(ShardedGemm, ABlockTooLargeForSramIsAUsageError) {
  EXPECT_THROW(run_harness(tiny(), {"M=1024", "K=1024", "N=8", "block_m=512"}, true), UsageError);
  // block_m >= M asks for A whole; the hint is the block size that fits, and it runs.
  const std::uint64_t sram = tiny().config().pe.sram_bytes, row = 1024 * 2;  // K f16 elements
  try {
    run_harness(tiny(), {"M=1024", "K=1024", "N=8", "block_m=1024"}, true);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("use block_m <= " + std::to_string(sram / row) +
                                    " (A in blocks of rows) or 0 (automatic)"));
  }
  EXPECT_NO_THROW(run_harness(
      tiny(), {"M=1024", "K=1024", "N=8", "block_m=" + std::to_string(sram / row)}, true));
}

}  // namespace
}  // namespace cubesim::kernels
