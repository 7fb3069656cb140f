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
