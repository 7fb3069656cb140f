// The sharding checks users' unit tests lean on: output written exactly once (gaps, overlaps
// with program coordinates) and races between programs with no barrier between them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "spec_path.hpp"

namespace cubesim {
namespace {

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

}  // namespace
}  // namespace cubesim
