// tp_linear: a row-parallel linear layer, the partial products all-reduced over messages.
// Numerics against fp64 for every all-reduce algorithm and buffer, with and without the bias
// and for shapes that do not divide; Y written exactly once without races, and the broken
// variant where every program stores all of Y caught; the all-reduce timed against the ring's
// closed form and the GEMM against its engine; the usage errors of its parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "components/pe/gemm_timing.hpp"
#include "kernel_test_support.hpp"
#include "kernels/collectives/plan.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/tp_linear.hpp"

namespace cubesim::kernels {
namespace {

using collectives::Collective;
using components::collectives::Buffer;
using emu::Tick;
using testing::expect_verified;
using testing::MessageCosts;
using testing::spec_named;
using testing::tiny;
using testing::vector_op_time;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("tp_linear", spec, assignments, timing_only, 11);
}

using Case = testing::NumericsCase;

class TpLinearNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(TpLinearNumerics, MatchesAnFp64Reference) {
  const auto& c = GetParam();
  const Outcome o = run_harness(spec_named(c.spec), c.params);
  expect_verified(o);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TpLinearNumerics,
    ::testing::Values(
        Case{"tiny.json", {"M=16", "N=32", "K=256"}, "tiny_f16"},
        // 5 x 7 = 35 elements: padded to 40 (8 blocks of 5); K = 50 in slices of 6 and 7.
        Case{"tiny.json", {"M=5", "N=7", "K=50"}, "tiny_nothing_divides"},
        Case{"tiny.json", {"M=5", "N=7", "K=50", "algorithm=tree"}, "tiny_tree_nothing_divides"},
        Case{"tiny.json", {"M=8", "N=24", "K=64", "bias=false"}, "tiny_no_bias"},
        Case{"tiny.json", {"M=9", "N=24", "K=64", "dtype=bf16"}, "tiny_bf16"},
        Case{"tiny.json", {"M=12", "N=20", "K=40", "dtype=f32"}, "tiny_f32"},
        // Fewer rows than programs: some programs add no bias.
        Case{"tiny.json", {"M=3", "N=16", "K=64"}, "tiny_fewer_rows_than_programs"},
        Case{"tiny.json", {"M=16", "N=16", "K=64", "programs=3"}, "tiny_three_programs"},
        Case{"tiny.json", {"M=16", "N=16", "K=64", "programs=1"}, "tiny_one_program"},
        Case{"two_sips", {"M=8", "N=32", "K=64", "algorithm=hierarchical"}, "two_sips"},
        Case{"default.json", {"M=32", "N=128", "K=1024"}, "default"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(TpLinear, EveryAlgorithmAndBufferMatchesTheReference) {
  for (const char* algorithm : {"ring", "bidir_ring", "hierarchical", "mesh2d", "tree"})
    for (const char* buffer : {"sram", "hbm"}) {
      const Outcome o =
          run_harness(tiny(), {"M=10", "N=24", "K=80", std::string("algorithm=") + algorithm,
                               std::string("buffer=") + buffer});
      SCOPED_TRACE(std::string(algorithm) + " " + buffer);
      expect_verified(o);
      EXPECT_EQ(o.details["algorithm"], algorithm);
    }
}

TEST(TpLinear, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  const std::vector<std::string> params = {"M=16", "N=24", "K=64"};
  const Outcome timed = run_harness(tiny(), params, true);
  const Outcome full = run_harness(tiny(), params);
  EXPECT_FALSE(timed.verified.has_value());
  EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps);
}

TEST(TpLinear, EveryByteOfYIsWrittenOnceWithoutRaces) {
  for (const char* algorithm : {"ring", "bidir_ring", "hierarchical", "mesh2d", "tree"})
    for (const Buffer buffer : {Buffer::sram, Buffer::hbm}) {
      SCOPED_TRACE(algorithm);
      Simulation sim(testing::two_sips(), {.timing_only = true});
      const GridShape grid = grid_of(sim.config(), 0, "programs");
      auto s = setup_tp_linear(
          sim, grid, {.M = 6, .N = 11, .K = 64, .algorithm = algorithm, .buffer = buffer});
      const RunResult r = sim.launch_on(launch_grid(grid), splitk_gemm, s->args);
      const Coverage c = r.coverage(s->c, 6 * 11 * 4);
      EXPECT_TRUE(c.exactly_once()) << r.describe(c, s->c);
      const auto races = r.races();
      EXPECT_TRUE(races.empty()) << r.describe(races);
    }
}

// The broken variant: the plain all-reduce, without stored_by_owners, has every program store
// every block of Y. Coverage names all of Y as written by every program, and they race.
TEST(TpLinear, CoverageCatchesEveryProgramStoringAllOfY) {
  Simulation sim(tiny(), {.timing_only = true});
  const auto& cfg = sim.config();
  const GridShape grid = grid_of(cfg, 0, "programs");
  const std::int64_t M = 4, N = 16;
  auto s = setup_tp_linear(sim, grid, {.M = M, .N = N, .K = 64});
  const collectives::Plan every =
      collectives::make_plan(cfg, grid, Collective::all_reduce, "ring", M * N * 4);
  s->args.sum.schedule = every.schedule.get();
  const RunResult r = sim.launch_on(launch_grid(grid), splitk_gemm, s->args);
  const Coverage c = r.coverage(s->c, M * N * 4);
  EXPECT_FALSE(c.exactly_once());
  EXPECT_TRUE(c.gaps.empty());
  std::uint64_t overlapped = 0;
  for (const auto& ov : c.overlaps) {
    overlapped += ov.range.end - ov.range.begin;
    EXPECT_EQ(ov.programs.size(), 8u);
  }
  EXPECT_EQ(overlapped, static_cast<std::uint64_t>(M * N * 4)) << r.describe(c, s->c);
  EXPECT_FALSE(r.races().empty());
}

// With a trivially small product on one idle cube of tiny (the ring 0 -> 1 -> 3 -> 2, each step
// one hop on its own link, blocks of one packet in PE SRAM slots), the all-reduce is the ring's
// closed form, from the spec: R from a message's send to the end of its read (hop, link, slot
// write, slot read), c a credit's time on a link, add the vector add of a block. The p - 1
// reduce-scatter steps each read and add, the next send waiting for the add and the port (the
// credit leaving): R + max(add, c); the p - 1 all-gather steps read, the next send waiting for
// the credit: R + c; the last ends with its read. The alpha-beta model gives the same, and the
// GEMM phase takes at least its engine's start-up and compute.
TEST(TpLinear, TheAllReduceTakesTheRingsClosedFormAndTheGemmAtLeastItsEngineTime) {
  Simulation sim(tiny(), {.timing_only = true});
  const auto& cfg = sim.config();
  const std::int64_t p = 4, M = 4, N = 64, K = 64, block = M * N / p;
  const GridShape grid = grid_of(cfg, p, "programs");
  auto s =
      setup_tp_linear(sim, grid, {.M = M, .N = N, .K = K, .bias = false, .buffer = Buffer::sram});
  const Outcome o = launch_split_k(sim, *s);
  ASSERT_EQ(o.details["block_bytes"], block * 4);
  const MessageCosts m = MessageCosts::of(cfg, static_cast<std::uint64_t>(block * 4));
  const Tick read = m.delivered(), credit = m.credit, add = vector_op_time(cfg, block);
  const Tick expected = (p - 1) * (read + std::max(add, credit)) + (p - 2) * (read + credit) + read;
  EXPECT_EQ(o.details["sum_time_ps"].get<Tick>(), expected);
  EXPECT_EQ(o.details["sum_model_ps"].get<Tick>(), expected);

  const components::GemmTimingModel engine(cfg.pe.gemm);
  const Tick bound = engine.startup() + engine.compute_time(M, N, K / p, DType::f16);
  EXPECT_EQ(bound, 10'000 + 2 * M * N * (K / p));  // tiny: 10 ns start-up, 1 FLOP per ps
  EXPECT_GE(o.details["gemm_time_ps"].get<Tick>(), bound);
  EXPECT_GE(o.run.sim_time_ps, o.details["gemm_time_ps"].get<Tick>() + expected);
}

// On one idle cube every algorithm's routes share only their end ports, where the model is
// exact for one-packet messages (test_collectives.cpp): so is the all-reduce inside tp_linear.
TEST(TpLinear, OnOneIdleCubeEveryAlgorithmTakesItsModelTime) {
  for (const char* algorithm : {"ring", "bidir_ring", "hierarchical", "mesh2d", "tree"}) {
    const Outcome o = run_harness(
        tiny(),
        {"M=4", "N=32", "K=64", "programs=4", "buffer=sram", std::string("algorithm=") + algorithm},
        true);
    EXPECT_EQ(o.details["sum_time_ps"], o.details["sum_model_ps"]) << algorithm;
    EXPECT_GT(o.details["sum_time_ps"].get<Tick>(), 0u) << algorithm;
  }
}

void expect_usage_error(const std::vector<std::string>& params, const std::string& text) {
  testing::expect_usage_error("tp_linear", params, text);
}

TEST(TpLinear, ParametersThatCannotBeShardedAreUsageErrorsSayingWhatWorks) {
  expect_usage_error({"K=7"}, "K = 7 is smaller than the 8 programs (2 cubes x 4 PEs)");
  expect_usage_error({"programs=5"}, "programs = 5 does not fit the 8 programs");
  expect_usage_error({"programs=9"}, "programs = 9 does not fit the 8 programs");
  expect_usage_error({"programs=2", "algorithm=mesh2d"}, "mesh2d runs over whole cube meshes");
  // A 256 x 256 f32 Y is 256 KiB, all of tiny's SRAM: its sum in SRAM cannot be; with
  // buffer=hbm it streams through the SRAM (test_collectives.cpp).
  expect_usage_error({"M=256", "N=256", "buffer=sram"},
                     "bytes of SRAM per program but a PE has 262144 (system.pe.sram_KiB); use "
                     "buffer=hbm, or a smaller M x N");
  expect_usage_error({"bias=maybe"}, "'maybe' is not true or false");
  expect_usage_error({"algorithm=pairwise"}, "'pairwise' is not one of: ring");
}

}  // namespace
}  // namespace cubesim::kernels
