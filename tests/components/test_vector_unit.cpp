// The vector unit's cost of element-wise math, computed from the configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "components/pe/vector_unit.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

TEST(VectorUnit, CyclesAreElementsOverLanesRoundedUpPlusTheLatency) {
  const SystemConfig c = testing::small_config();
  ASSERT_EQ(c.pe.vector.lanes, 64u);
  ASSERT_EQ(c.pe.vector.latency_cycles, 4u);
  const VectorUnit v(c.pe.vector, c.pe.clock);
  EXPECT_EQ(v.cycles(1000).count, 16u + 4u);  // ceil(1000 / 64) = 16
  EXPECT_EQ(v.cycles(64).count, 1u + 4u);
  EXPECT_EQ(v.cycles(65).count, 2u + 4u);
  EXPECT_EQ(v.cycles(0).count, 4u);  // the pipeline latency alone
}

TEST(VectorUnit, TimeIsTheCyclesAtThePeClockRoundedUpOnce) {
  SystemConfig c = testing::small_config();
  const VectorUnit at_1ghz(c.pe.vector, c.pe.clock);
  EXPECT_EQ(at_1ghz.time(1000), emu::ns(20));  // 20 cycles of 1 ns
  c.pe.clock = Frequency::from_GHz(1.5);
  const VectorUnit at_1_5ghz(c.pe.vector, c.pe.clock);
  EXPECT_EQ(at_1_5ghz.time(1000), 13334u);  // 20 / 1.5e9 s = 13333.3 ps
}

// Reductions as trees (vector_unit.hpp), 64 lanes, latency 4, one cycle per combine.
TEST(VectorUnit, ARowReductionCombinesLaneByLaneThenAcrossTheLanesInLog2Levels) {
  const SystemConfig c = testing::small_config();
  const VectorUnit v(c.pe.vector, c.pe.clock);
  ASSERT_EQ(v.op_cycles(VectorOp::reduce), 1u);
  EXPECT_EQ(v.reduce_cycles(1, 4096, 1, false).count, 64u + 6u + 4u);  // 6 levels over 64 lanes
  EXPECT_EQ(v.reduce_cycles(1, 100, 1, false).count, 2u + 6u + 4u);    // w = 64: 6 levels
  EXPECT_EQ(v.reduce_cycles(1, 5, 1, false).count, 1u + 3u + 4u);      // w = 5: 3 levels
  // 64 rows of 16: four rows side by side in a vector, 16 vectors of 4 levels each.
  EXPECT_EQ(v.reduce_cycles(64, 16, 1, false).count, 16u + 16u * 4u + 4u);
  // 10 rows of 16: ceil(10 / 4) = 3 vectors.
  EXPECT_EQ(v.reduce_cycles(10, 16, 1, false).count, 3u + 3u * 4u + 4u);
  EXPECT_EQ(v.reduce_cycles(8, 1, 1, false).count, 1u + 4u);  // runs of one: nothing to combine
  EXPECT_EQ(v.reduce_cycles(4, 0, 1, false).count, 4u);       // empty: the latency
}

TEST(VectorUnit, AColumnReductionKeepsAnOutputPerLaneAndNeedsNoLevels) {
  const SystemConfig c = testing::small_config();
  const VectorUnit v(c.pe.vector, c.pe.clock);
  // 128 x 256 reduced over its rows (axis 0): runs of 128, 256 apart.
  EXPECT_EQ(v.reduce_cycles(1, 128, 256, false).count, v.cycles(128 * 256, VectorOp::reduce).count);
  EXPECT_EQ(v.reduce_cycles(1, 128, 256, false).count, 512u + 4u);
}

TEST(VectorUnit, AScanPassesOverItsElementsOncePerLevel) {
  SystemConfig c = testing::small_config();
  c.pe.vector.op_cycles[static_cast<int>(VectorOp::reduce)] = 2;
  const VectorUnit v(c.pe.vector, c.pe.clock);
  // cumsum of 4 rows of 1024: 4096 elements, 2 cycles each over 64 lanes = 128; then 6 passes
  // of 64 vectors at 2 cycles.
  EXPECT_EQ(v.reduce_cycles(4, 1024, 1, true).count, 128u + 6u * 64u * 2u + 4u);
  EXPECT_EQ(v.reduce_time(4, 1024, 1, true), emu::ns(128 + 768 + 4));  // at 1 GHz
}

TEST(VectorUnit, HugeCountsDoNotWrapAround) {
  const SystemConfig c = testing::small_config();
  const VectorUnit v(c.pe.vector, c.pe.clock);
  EXPECT_EQ(v.cycles(UINT64_MAX).count, (std::uint64_t{1} << 58) + 4);  // ceil((2^64 - 1) / 64)
  EXPECT_THROW(v.time(UINT64_MAX), emu::TimeOverflow);                  // 2^58 ns is past 2^64 ps
}

TEST(VectorUnit, NoLanesIsAnError) {
  SystemConfig c = testing::small_config();
  c.pe.vector.lanes = 0;
  EXPECT_THAT([&] { VectorUnit(c.pe.vector, c.pe.clock); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  ::testing::HasSubstr("system.pe.vector.lanes")));
}

}  // namespace
}  // namespace cubesim::components
