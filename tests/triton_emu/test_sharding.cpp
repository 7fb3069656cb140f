// The sharding checks users' unit tests lean on: output written exactly once (gaps, overlaps
// with program coordinates) and races between programs with no barrier between them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::int64_t kPer = 256;  // f32 elements per program

void correct(tl::Context& tl, Ptr out) {
  const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
  tl.store(out + pid * kPer * 4, tl.full({kPer}, 1.0, DType::f32));
}

void overlapping(tl::Context& tl, Ptr out) {  // forgets the cube: both cubes write the same half
  tl.store(out + tl.program_id(0) * kPer * 4, tl.full({kPer}, 1.0, DType::f32));
}

void gappy(tl::Context& tl, Ptr out) {  // writes one element short of its block
  const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
  tl.store(out + pid * kPer * 4, tl.full({kPer - 1}, 1.0, DType::f32));
}

struct Fixture : ::testing::Test {
  Simulation sim{Spec::load(spec_path("tiny.json")), {.timing_only = true}};
  const std::int64_t programs = 8;
  const Ptr out = sim.alloc(8 * kPer * 4);
};

using Sharding = Fixture;

TEST_F(Sharding, ACorrectKernelWritesEveryByteExactlyOnceWithoutRaces) {
  const auto r = sim.launch(correct, out);
  const auto c = r.coverage(out, programs * kPer * 4);
  EXPECT_TRUE(c.exactly_once()) << r.describe(c, out);
  EXPECT_TRUE(r.races().empty());
}

TEST_F(Sharding, OverlappingWritesAreReportedWithProgramCoordinates) {
  const auto r = sim.launch(overlapping, out);
  const auto c = r.coverage(out, programs * kPer * 4);
  ASSERT_FALSE(c.exactly_once());
  EXPECT_EQ(c.overlaps.size(), 4u);  // each of the first four blocks, by two programs
  EXPECT_EQ(c.gaps.size(), 1u);      // the second half, by nobody
  const std::string text = r.describe(c, out);
  EXPECT_THAT(text, HasSubstr("program (0, 0, 0)"));
  EXPECT_THAT(text, HasSubstr("program (0, 1, 0)"));
  EXPECT_THAT(text, HasSubstr("written more than once"));
  const auto races = r.races();
  ASSERT_FALSE(races.empty());
  EXPECT_TRUE(races.front().write_write);
  EXPECT_THAT(r.describe(races), HasSubstr("both write"));
}

TEST_F(Sharding, AGappyKernelIsReported) {
  const auto r = sim.launch(gappy, out);
  const auto c = r.coverage(out, programs * kPer * 4);
  EXPECT_TRUE(c.overlaps.empty());
  ASSERT_EQ(c.gaps.size(), 8u);
  EXPECT_EQ(c.gaps[0].end - c.gaps[0].begin, 4u);
  EXPECT_THAT(r.describe(c, out), HasSubstr("8 gap(s)"));
  // Each gap ends one program's share and lies before the next program's; the last ends the
  // region.
  EXPECT_THAT(r.describe(c, out),
              AllOf(HasSubstr("of the region), between the writes of program (0, 0, 0) and "
                              "program (1, 0, 0)\n"),
                    HasSubstr("of the region), between the writes of program (3, 0, 0) and "
                              "program (0, 1, 0)\n"),
                    HasSubstr("of the region), after the write of program (3, 1, 0)")));
}

TEST_F(Sharding, AReadOfAnotherProgramsOutputNeedsABarrier) {
  auto neighbour = [](tl::Context& tl, Ptr o, bool with_barrier) {
    const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
    tl.store(o + pid * kPer * 4, tl.full({kPer}, 1.0, DType::f32));
    if (with_barrier) tl.barrier();
    (void)tl.load(o + ((pid + 1) % 8) * kPer * 4, {kPer}, DType::f32);
  };
  const auto racy = sim.launch(neighbour, out, false);
  const auto races = racy.races();
  ASSERT_FALSE(races.empty());
  EXPECT_FALSE(races.front().write_write);
  EXPECT_THAT(racy.describe(races), HasSubstr("one reads what the other writes"));
  EXPECT_TRUE(sim.launch(neighbour, out, true).races().empty());
}

// Program 0 computes C = A . B on its GEMM engine; program 1 reads C after the barrier. The
// composite writes C when it completes, not when it is issued: unless program 0 waits on it
// before the barrier, the read is unordered with the write.
enum class WaitAt { before_barrier, after_barrier, never };

void gemm_then_neighbour_reads(tl::Context& tl, Ptr a, Ptr b, Ptr c, WaitAt wait_at) {
  const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
  constexpr std::int64_t n = 16;
  tl::Handle h;
  if (pid == 0) {
    h = tl.composite(tl::Op::gemm, tl.ref(a, {n, n}, DType::f16), tl.ref(b, {n, n}, DType::f16), c);
    if (wait_at == WaitAt::before_barrier) tl.wait(h);
  }
  tl.barrier();
  if (pid == 1) (void)tl.load(c, {n, n}, DType::f16);
  if (pid == 0 && wait_at == WaitAt::after_barrier) tl.wait(h);
}

TEST_F(Sharding, ACompositeNotWaitedOnBeforeTheBarrierRacesWithReadsAfterIt) {
  const Ptr a = sim.alloc(16 * 16 * 2), b = sim.alloc(16 * 16 * 2), c = sim.alloc(16 * 16 * 2);
  for (const WaitAt late : {WaitAt::after_barrier, WaitAt::never}) {
    const auto r = sim.launch(gemm_then_neighbour_reads, a, b, c, late);
    const auto races = r.races();
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_EQ(races.front().first, 0u);
    EXPECT_EQ(races.front().second, 1u);
    EXPECT_FALSE(races.front().write_write);
    EXPECT_TRUE(races.front().in_flight);
    EXPECT_EQ(races.front().range.begin, c.addr);
    EXPECT_EQ(races.front().range.end, c.addr + 16 * 16 * 2);
    EXPECT_THAT(r.describe(races), HasSubstr("still in flight"));
  }
  const auto ordered = sim.launch(gemm_then_neighbour_reads, a, b, c, WaitAt::before_barrier);
  EXPECT_TRUE(ordered.races().empty()) << ordered.describe(ordered.races());
}

TEST_F(Sharding, WaitingOnALaterCompositeOrdersTheEarlierOnesOfThatEngine) {
  // A PE's engine runs composites in order: waiting on the second means the first is done.
  const Ptr a = sim.alloc(16 * 16 * 2), b = sim.alloc(16 * 16 * 2);
  const Ptr c1 = sim.alloc(16 * 16 * 2), c2 = sim.alloc(16 * 16 * 2);
  auto kernel = [&](tl::Context& tl) {
    const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
    if (pid == 0) {
      const auto ra = tl.ref(a, {16, 16}, DType::f16), rb = tl.ref(b, {16, 16}, DType::f16);
      (void)tl.composite(tl::Op::gemm, ra, rb, c1);
      auto second = tl.composite(tl::Op::gemm, ra, rb, c2);
      tl.wait(second);
    }
    tl.barrier();
    if (pid == 1) (void)tl.load(c1, {16, 16}, DType::f16);
  };
  const auto r = sim.launch(kernel);
  EXPECT_TRUE(r.races().empty()) << r.describe(r.races());
}

}  // namespace
}  // namespace cubesim
