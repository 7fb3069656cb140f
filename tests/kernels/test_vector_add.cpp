// vector_add: Triton's tutorial kernel in a grid-stride loop over all programs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <ostream>

#include "kernel_test_support.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/vector_add.hpp"

namespace cubesim::kernels {
namespace {

using testing::spec_path;
using testing::tiny;
using testing::two_sips;

using ::testing::HasSubstr;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("vector_add", spec, assignments, timing_only, 7);
}

struct Case {
  std::string spec, dtype;
};

// Names the case in test listings (gtest would print its bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.spec << " " << c.dtype;
}

class VectorAddNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(VectorAddNumerics, MatchesFp64WithinOneRounding) {
  const auto& c = GetParam();
  // 10007 is prime: the last chunk is partial and every program gets a different count.
  const Outcome o =
      run_harness(Spec::load(spec_path(c.spec)), {"n=10007", "block=128", "dtype=" + c.dtype});
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified) << o.details.dump(2);
  EXPECT_EQ(o.elements_checked, 10007u);
  EXPECT_LE(o.max_rel_error, o.tolerance);
  EXPECT_GT(o.run.sim_time_ps, 0u);
  EXPECT_EQ(o.useful_flops, 10007u);
}

INSTANTIATE_TEST_SUITE_P(SpecsAndDtypes, VectorAddNumerics,
                         ::testing::Values(Case{"tiny.json", "f32"}, Case{"tiny.json", "f16"},
                                           Case{"tiny.json", "bf16"}, Case{"tiny.json", "i32"},
                                           Case{"default.json", "f32"},
                                           Case{"default.json", "f16"}),
                         [](const auto& param_info) {
                           return param_info.param.spec.substr(0, param_info.param.spec.find('.')) +
                                  "_" + param_info.param.dtype;
                         });

// The double-buffered kernel computes the same sums, masked tail included, on every spec.
TEST_P(VectorAddNumerics, DoubleBufferedMatchesFp64WithinOneRounding) {
  const auto& c = GetParam();
  const Outcome o = run_harness(Spec::load(spec_path(c.spec)),
                                {"n=10007", "block=128", "dtype=" + c.dtype, "pipeline=double"});
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified) << o.details.dump(2);
  EXPECT_EQ(o.elements_checked, 10007u);
  EXPECT_EQ(o.details["pipeline"], "double");
}

// Timing-only runs compute index math (i32 tiles: arange, comparisons, masks), so a masked
// tail moves only its live elements, exactly as in a functional run.
TEST(VectorAdd, TimingOnlyTakesTheSameSimulatedTimeWithAMaskedTail) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const std::vector<std::string> params = {"n=5000", "block=256"};
  EXPECT_EQ(run_harness(spec, params, true).run.sim_time_ps,
            run_harness(spec, params, false).run.sim_time_ps);
}

TEST(VectorAdd, TimingOnlyRunsWithAPartialLastBlockFromTheCli) {
  // n = 10007 with block = 4096: the tail block would run past the end of the first buffer
  // allocated (the top of the interleaved window) if the harness did not pad the buffers.
  const Outcome o =
      run_harness(Spec::load(spec_path("tiny.json")), {"n=10007", "block=4096"}, true);
  EXPECT_FALSE(o.verified.has_value());
  EXPECT_GT(o.run.sim_time_ps, 0u);
}

TEST(VectorAdd, FewerElementsThanOneBlockStillVerify) {
  const Outcome o = run_harness(Spec::load(spec_path("tiny.json")), {"n=5", "block=64"});
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified);
}

TEST(VectorAdd, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const std::vector<std::string> params = {"n=5120", "block=256"};  // no partial chunk
  const Outcome timed = run_harness(spec, params, true);
  const Outcome full = run_harness(spec, params, false);
  EXPECT_FALSE(timed.verified.has_value());
  EXPECT_GT(timed.run.sim_time_ps, 0u);
  EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps);
}

TEST(VectorAdd, EveryOutputByteIsWrittenOnceAndNoProgramsRace) {
  Simulation sim(Spec::load(spec_path("default.json")));
  const std::int64_t n = 100'003, block = 512;
  const Ptr x = alloc_array(sim, DType::f32, n), y = alloc_array(sim, DType::f32, n),
            out = alloc_array(sim, DType::f32, n);
  write_array(sim, x, random_array(DType::f32, n, 1, 1));
  write_array(sim, y, random_array(DType::f32, n, 1, 2));
  const RunResult r = sim.launch(vector_add, x, y, out, n, block, DType::f32);
  const Coverage c = r.coverage(out, static_cast<std::uint64_t>(n) * 4);
  EXPECT_TRUE(c.exactly_once()) << r.describe(c, out);
  const auto races = r.races();
  EXPECT_TRUE(races.empty()) << r.describe(races);
}

TEST(VectorAdd, OnTwoSipsTheSipAxisSharesTheChunksToo) {
  const Spec spec = Spec::load(spec_path("tiny.json")).with("system.sips.count", 2);
  Simulation sim(spec);
  const std::int64_t n = 4096, block = 64;  // 64 chunks over 16 programs
  const Ptr x = alloc_array(sim, DType::f32, n), y = alloc_array(sim, DType::f32, n),
            out = alloc_array(sim, DType::f32, n);
  const RunResult r = sim.launch(vector_add, x, y, out, n, block, DType::f32);
  const Coverage c = r.coverage(out, static_cast<std::uint64_t>(n) * 4);
  EXPECT_TRUE(c.exactly_once()) << r.describe(c, out);
  EXPECT_TRUE(r.races().empty());
}

// With the banked HBM model the kernel computes the same sums; the report says what the DRAM
// did, and every packet to or from HBM (4 KiB granules, x and y read, out written) was one
// request of a controller.
TEST(VectorAdd, WithBankedHbmItVerifiesAndTheReportCountsTheDramsRequests) {
  const Spec spec = Spec::load(spec_path("default.json")).with("system.cube.hbm.model", "banked");
  const Outcome o = run_harness(spec, {"n=262144", "block=4096", "dtype=f32"});
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_TRUE(*o.verified) << o.details.dump(2);
  const auto& dram = o.run.report["stats"]["dram"];
  ASSERT_TRUE(dram.is_object()) << o.run.report["stats"].dump(2);
  const std::uint64_t packets = 3 * 262144 * 4 / 4096;  // whole, aligned 4 KiB pieces
  EXPECT_EQ(dram["reads"].get<std::uint64_t>(), 2 * packets / 3);
  EXPECT_EQ(dram["writes"].get<std::uint64_t>(), packets / 3);
  EXPECT_GT(dram["row_misses"].get<std::uint64_t>() + dram["row_conflicts"].get<std::uint64_t>(),
            0u);
}

// block = 0 picks the largest power of two whose x, y and sum fit the SRAM, capped by a
// program's share of n: 1 MiB / (3 * 4 + 8) bytes = 52428 elements -> 32768 on default.json.
TEST(VectorAdd, AnAutomaticBlockFillsTheSramUpToAProgramsShare) {
  const Spec spec = Spec::load(spec_path("default.json"));
  EXPECT_EQ(run_harness(spec, {"n=16777216"}, true).details["block"], 32768);
  EXPECT_EQ(run_harness(spec, {"n=1048576"}, true).details["block"], 16384);  // 64 programs
  EXPECT_EQ(run_harness(spec, {"n=100"}, true).details["block"], 2);
}

// The shipped default is a balanced design: a long vector add streams at no less than 60 % of
// the HBM bandwidth the spec gives (2.4 TB/s per cube), though 3/4 of its interleaved bytes
// cross UCIe and each router input sends one packet at a time (input speedup 1). (Its first
// version, with two HBM controller nodes per cube, reached 9 %.)
TEST(VectorAdd, OnTheShippedDefaultALongVectorStreamsNearTheHbmPeak) {
  const Spec spec = Spec::load(spec_path("default.json"));
  const Outcome o = run_harness(spec, {"n=16777216"}, true);
  const double seconds = static_cast<double>(o.run.sim_time_ps) * 1e-12;
  const double hbm_peak = static_cast<double>(spec.config().cube.hbm.bandwidth.bytes_per_s()) *
                          static_cast<double>(spec.config().total_cubes());
  EXPECT_GE(static_cast<double>(o.useful_bytes) / seconds, 0.6 * hbm_peak);
}

// Double buffering overlaps a chunk's add and store with the next chunk's loads: with several
// chunks per program it takes less simulated time, and writes every byte once without races.
TEST(VectorAdd, DoubleBufferingOverlapsChunksAndIsFaster) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  for (const char* block : {"block=64", "block=512"}) {
    const std::vector<std::string> plain = {"n=65536", block};
    std::vector<std::string> piped = plain;
    piped.push_back("pipeline=double");
    const Outcome a = run_harness(spec, plain, true), b = run_harness(spec, piped, true);
    EXPECT_LT(b.run.sim_time_ps, a.run.sim_time_ps) << block;
    const auto loaded = [](const Outcome& o) {
      std::uint64_t bytes = 0;
      for (const auto& pe : o.run.stats.pes) bytes += pe.bytes_loaded;
      return bytes;
    };
    EXPECT_EQ(loaded(b), loaded(a));
    EXPECT_EQ(loaded(a), 2u * 65536 * 4);
  }
  Simulation sim(spec);
  const std::int64_t n = 10'003, block = 128;
  const Ptr x = alloc_array(sim, DType::f32, n), y = alloc_array(sim, DType::f32, n),
            out = alloc_array(sim, DType::f32, n);
  const RunResult r = sim.launch(vector_add_pipelined, x, y, out, n, block, DType::f32);
  const Coverage c = r.coverage(out, static_cast<std::uint64_t>(n) * 4);
  EXPECT_TRUE(c.exactly_once()) << r.describe(c, out);
  EXPECT_TRUE(r.races().empty()) << r.describe(r.races());
}

// block = 0 with pipeline=double: two of each tile fit, and a program gets four chunks at least.
TEST(VectorAdd, AnAutomaticDoubleBufferedBlockLeavesFourChunksPerProgram) {
  const Spec spec = Spec::load(spec_path("default.json"));
  // 1 MiB / (6 * 4 + 8) = 32768 elements; 2^24 / 64 programs / 4 = 65536.
  EXPECT_EQ(run_harness(spec, {"n=16777216", "pipeline=double"}, true).details["block"], 32768);
  EXPECT_EQ(run_harness(spec, {"n=1048576", "pipeline=double"}, true).details["block"], 4096);
}

TEST(VectorAdd, DoubleBufferingOnATritonGridIsAUsageError) {
  try {
    run_harness(Spec::load(spec_path("tiny.json")), {"grid=triton", "pipeline=double"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("use grid=hardware (or --grid) with pipeline=double"));
  }
}

TEST(VectorAdd, ABlockTooLargeForSramIsAUsageErrorSayingWhatFits) {
  try {
    run_harness(Spec::load(spec_path("tiny.json")), {"n=1000000", "block=1000000"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::usage);
    EXPECT_THAT(e.what(), HasSubstr("block = 1000000"));
    EXPECT_THAT(e.what(), HasSubstr("use block <= 13107"));
  }
}

// placement=auto (cube on the hardware grid): block b lies on the cube of the program that adds
// it, so no byte crosses a UCIe or inter-SIP link; with placement=pe on its PE's own channels, so
// none crosses a mesh link either; interleaved over the system (placement=system) most do.
TEST(VectorAdd, DistributedBlocksStayWithTheirPrograms) {
  for (const std::string placement : {"auto", "pe", "system"}) {
    const Outcome o = run_harness(Spec::load(spec_path("default.json")),
                                  {"n=1048576", "placement=" + placement}, true);
    const components::LinkStats& net = o.run.stats.network;
    const std::uint64_t mesh = net.bytes(components::LinkKind::noc),
                        between = net.bytes(components::LinkKind::ucie) +
                                  net.bytes(components::LinkKind::inter_sip);
    if (placement == "system") {
      EXPECT_GT(between, o.useful_bytes / 2) << "interleaved over 4 cubes, 3/4 crosses UCIe";
      continue;
    }
    EXPECT_EQ(between, 0u) << placement;
    EXPECT_THAT(o.details["placement"].get<std::string>(), HasSubstr("distributed")) << placement;
    if (placement == "pe")
      EXPECT_EQ(mesh, 0u);
    else
      EXPECT_GT(mesh, 0u) << "a cube's channels are on all of its routers";
  }
}

// Issue 38's target: on large.json (32 cubes of 8 TB/s over 4 SIPs) at least 70 % of the HBM
// peak, where interleaving over every cube put three quarters of the data on the inter-SIP
// links (1-2 %). 2^26 elements, 384 KiB per program: more streams closer to the peak.
TEST(VectorAdd, OnARackOfSipsItStreamsAtMostOfTheHbmPeak) {
  const Spec large = Spec::load(spec_path("large.json"));
  const Outcome o = run_harness(large, {"n=67108864"}, true);
  const double peak = static_cast<double>(large.config().cube.hbm.bandwidth.bytes_per_s()) *
                      large.config().total_cubes();
  const double achieved =
      static_cast<double>(o.useful_bytes) * 1e12 / static_cast<double>(o.run.sim_time_ps);
  EXPECT_GE(achieved / peak, 0.7) << achieved / 1e12 << " TB/s of " << peak / 1e12;
}

TEST(VectorAdd, ADistributedPlacementOnALogicalGridIsAUsageError) {
  for (const std::string placement : {"cube", "pe"})
    testing::expect_usage_error("vector_add", {"grid=triton", "placement=" + placement},
                                "the dispatcher places the programs");
}

}  // namespace
}  // namespace cubesim::kernels
