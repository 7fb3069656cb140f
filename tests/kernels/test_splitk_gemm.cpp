// splitk_gemm: K split over the programs, the partial products summed by a reduce-scatter over
// messages. Numerics against fp64 for every algorithm and buffer and for shapes that do not
// divide; C written exactly once without races, and broken variants caught; the GEMM and the
// sum timed against what the spec gives; the usage errors of its parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "components/pe/gemm_timing.hpp"
#include "kernel_test_support.hpp"
#include "kernels/collectives/plan.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/splitk_gemm.hpp"

namespace cubesim::kernels {
namespace {

using collectives::Collective;
using components::collectives::Buffer;
using emu::Tick;
using testing::expect_verified;
using ::testing::HasSubstr;
using testing::MessageCosts;
using testing::spec_named;
using testing::tiny;
using testing::vector_op_time;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("splitk_gemm", spec, assignments, timing_only, 7);
}

using Case = testing::NumericsCase;

class SplitKNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(SplitKNumerics, MatchesAnFp64Reference) {
  const auto& c = GetParam();
  const Outcome o = run_harness(spec_named(c.spec), c.params);
  expect_verified(o);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SplitKNumerics,
    ::testing::Values(
        Case{"tiny.json", {"M=16", "N=32", "K=256"}, "tiny_f16"},
        // 7 x 13 = 91 elements: padded to 96 (8 blocks of 12); K = 100 in slices of 12 and 13.
        Case{"tiny.json", {"M=7", "N=13", "K=100"}, "tiny_nothing_divides"},
        Case{"tiny.json", {"M=9", "N=24", "K=64", "dtype=bf16"}, "tiny_bf16"},
        Case{"tiny.json", {"M=12", "N=20", "K=40", "dtype=f32"}, "tiny_f32"},
        Case{"tiny.json", {"M=16", "N=16", "K=64", "split=3"}, "tiny_three_programs"},
        Case{"tiny.json", {"M=16", "N=16", "K=64", "split=1"}, "tiny_one_program"},
        // Blocks of 3000 elements travel as messages of a 4 KiB slot and a shorter one.
        Case{"tiny.json", {"M=96", "N=250", "K=32"}, "tiny_several_messages_per_block"},
        Case{"two_sips", {"M=8", "N=32", "K=64", "algorithm=hierarchical"}, "two_sips"},
        Case{"default.json", {"M=64", "N=64", "K=1024"}, "default"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(SplitKGemm, EveryAlgorithmAndBufferMatchesTheReference) {
  for (const char* algorithm : {"ring", "bidir_ring", "hierarchical", "mesh2d"})
    for (const char* buffer : {"sram", "hbm"}) {
      const Outcome o =
          run_harness(tiny(), {"M=10", "N=24", "K=80", std::string("algorithm=") + algorithm,
                               std::string("buffer=") + buffer});
      SCOPED_TRACE(std::string(algorithm) + " " + buffer);
      expect_verified(o);
      EXPECT_EQ(o.details["algorithm"], algorithm);
    }
}

TEST(SplitKGemm, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  const std::vector<std::string> params = {"M=16", "N=24", "K=64"};
  const Outcome timed = run_harness(tiny(), params, true);
  const Outcome full = run_harness(tiny(), params);
  EXPECT_FALSE(timed.verified.has_value());
  EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps);
}

struct Launched {
  RunResult run;
  Ptr c;
  std::uint64_t bytes;
};

Launched launch(const Spec& spec, const SplitKShape& shape, std::int64_t programs = 0) {
  Simulation sim(spec, {.timing_only = true});
  const GridShape grid = grid_of(sim.config(), programs, "split");
  auto s = setup_splitk_gemm(sim, grid, shape);
  return {sim.launch_on(launch_grid(grid), splitk_gemm, s->args), s->c,
          static_cast<std::uint64_t>(shape.M * shape.N * 4)};
}

TEST(SplitKGemm, EveryByteOfCIsWrittenOnceWithoutRaces) {
  for (const auto& [spec, algorithm] :
       {std::pair{"tiny.json", "ring"}, std::pair{"tiny.json", "mesh2d"},
        std::pair{"two_sips", "hierarchical"}, std::pair{"two_sips", "bidir_ring"}})
    for (const Buffer buffer : {Buffer::sram, Buffer::hbm}) {
      SCOPED_TRACE(std::string(spec) + " " + algorithm);
      const Launched l = launch(
          spec_named(spec), {.M = 7, .N = 13, .K = 64, .algorithm = algorithm, .buffer = buffer});
      const Coverage c = l.run.coverage(l.c, l.bytes);
      EXPECT_TRUE(c.exactly_once()) << l.run.describe(c, l.c);
      const auto races = l.run.races();
      EXPECT_TRUE(races.empty()) << l.run.describe(races);
    }
}

// A broken variant: every program stores its block at the start of C (its output pointer not
// moved to its block), so the first block is written by all and the rest by none.
TEST(SplitKGemm, CoverageCatchesProgramsThatStoreTheirBlocksOverEachOther) {
  Simulation sim(tiny(), {.timing_only = true});
  const GridShape grid = grid_of(sim.config(), 0, "split");
  auto s = setup_splitk_gemm(sim, grid, {.M = 8, .N = 16, .K = 64});
  for (Ptr& out : s->args.sum.out) out = s->c;
  const RunResult r = sim.launch_on(launch_grid(grid), splitk_gemm, s->args);
  const std::uint64_t bytes = 8 * 16 * 4, block = bytes / 8;
  const Coverage c = r.coverage(s->c, bytes);
  EXPECT_FALSE(c.exactly_once());
  ASSERT_EQ(c.overlaps.size(), 1u) << r.describe(c, s->c);
  EXPECT_EQ(c.overlaps[0].programs.size(), 8u);
  EXPECT_EQ(c.overlaps[0].range.end - c.overlaps[0].range.begin, block);
  ASSERT_EQ(c.gaps.size(), 1u);
  EXPECT_EQ(c.gaps[0].end - c.gaps[0].begin, bytes - block);
  EXPECT_FALSE(r.races().empty());
}

// A broken variant that skips a message: program 1 leaves out its first send, so its ring
// successor waits for it forever; the run ends in a deadlock report, not a hang or a wrong C.
class SkipsFirstSend final : public components::collectives::Schedule {
 public:
  explicit SkipsFirstSend(const components::collectives::Schedule& inner) : inner_(inner) {}
  std::int64_t programs() const override { return inner_.programs(); }
  std::vector<components::collectives::Segment> segments(std::int64_t g) const override {
    return inner_.segments(g);
  }
  std::int64_t steps(std::int64_t g) const override { return inner_.steps(g); }
  void step(std::int64_t g, std::int64_t k, components::collectives::Step& out) const override {
    inner_.step(g, k, out);
    if (g != 1 || k != 0) return;
    const auto send =
        std::find_if(out.begin(), out.end(), [](const components::collectives::Op& op) {
          return op.kind == components::collectives::OpKind::send;
        });
    out.erase(send);
  }

 private:
  const components::collectives::Schedule& inner_;
};

TEST(SplitKGemm, AProgramThatSkipsAMessageEndsInADeadlockReport) {
  Simulation sim(tiny(), {.timing_only = true});
  const GridShape grid = grid_of(sim.config(), 0, "split");
  auto s = setup_splitk_gemm(sim, grid, {.M = 8, .N = 16, .K = 64});
  const SkipsFirstSend broken(*s->plan.schedule);
  s->args.sum.schedule = &broken;
  try {
    sim.launch_on(launch_grid(grid), splitk_gemm, s->args);
    FAIL() << "no deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::deadlock);
    EXPECT_THAT(e.what(), HasSubstr("recv"));
  }
}

// With a trivially small product on one idle cube of tiny (the ring 0 -> 1 -> 3 -> 2, each step
// one hop on its own link, blocks of one packet), the sum is the ring reduce-scatter's closed
// form: p - 1 steps, each a message read (R) and added, the next step's send waiting for the
// add and for the port to return the credit: (p - 2)(R + max(add, c)) + R + add. The
// alpha-beta model of the schedule gives the same. The GEMM phase takes at least the engine's
// start-up and compute for the slice.
TEST(SplitKGemm, TheSumTakesTheRingsClosedFormAndTheGemmAtLeastItsEngineTime) {
  Simulation sim(tiny(), {.timing_only = true});
  const auto& cfg = sim.config();
  const std::int64_t p = 4, M = 4, N = 64, K = 64;
  const GridShape grid = grid_of(cfg, p, "split");
  auto s = setup_splitk_gemm(sim, grid, {.M = M, .N = N, .K = K, .buffer = Buffer::sram});
  const Outcome o = launch_split_k(sim, *s);
  const std::int64_t block = M * N / p;
  ASSERT_EQ(o.details["block_bytes"], block * 4);
  const MessageCosts m = MessageCosts::of(cfg, static_cast<std::uint64_t>(block * 4));
  const Tick read = m.delivered(), credit = m.credit, add = vector_op_time(cfg, block);
  const Tick expected = (p - 2) * (read + std::max(add, credit)) + read + add;
  EXPECT_EQ(o.details["sum_time_ps"].get<Tick>(), expected);
  EXPECT_EQ(o.details["sum_model_ps"].get<Tick>(), expected);

  const components::GemmTimingModel engine(cfg.pe.gemm);
  const Tick bound =
      engine.startup() + engine.compute_time(M, N, K / p, DType::f16);  // 10 ns + 2 M N k ps
  EXPECT_EQ(bound, 10'000 + 2 * M * N * (K / p));
  EXPECT_EQ(o.details["gemm_engine_bound_ps"].get<Tick>(), bound);
  EXPECT_GE(o.details["gemm_time_ps"].get<Tick>(), bound);
  EXPECT_GE(o.run.sim_time_ps, o.details["gemm_time_ps"].get<Tick>() + expected);
}

TEST(SplitKGemm, OneProgramSumsNothing) {
  const Outcome o = run_harness(tiny(), {"M=8", "N=8", "K=16", "split=1"});
  expect_verified(o);
  EXPECT_EQ(o.details["sum_time_ps"].get<Tick>(), 0u);
}

void expect_usage_error(const std::vector<std::string>& params, const std::string& text) {
  testing::expect_usage_error("splitk_gemm", params, text);
}

TEST(SplitKGemm, ParametersThatCannotBeSplitAreUsageErrorsSayingWhatWorks) {
  expect_usage_error({"K=5"}, "K = 5 is smaller than the 8 programs (2 cubes x 4 PEs)");
  expect_usage_error({"split=6"},
                     "split = 6 does not fit the 8 programs (2 cubes x 4 PEs): the programs take "
                     "the first PEs of cube 0 (1 to 4), whole cubes of SIP 0 (a multiple of 4 "
                     "up to 8)");
  expect_usage_error({"split=2", "algorithm=mesh2d"}, "mesh2d runs over whole cube meshes");
  // 256 x 256 f32 partials are 256 KiB, all of tiny's SRAM.
  expect_usage_error({"M=256", "N=256", "buffer=sram"}, "use buffer=hbm");
  expect_usage_error({"algorithm=tree"}, "'tree' is not one of: ring, bidir_ring");
}

}  // namespace
}  // namespace cubesim::kernels
