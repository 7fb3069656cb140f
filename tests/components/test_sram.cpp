// A PE's SRAM account: what allocate() takes, what free() gives back, and the peak.
#include <gtest/gtest.h>

#include "components/pe/sram.hpp"

namespace cubesim::components {
namespace {

TEST(Sram, PeakIsTheMostHeldAtOnce) {
  Sram s(1024);
  ASSERT_TRUE(s.allocate(400));
  ASSERT_TRUE(s.allocate(500));
  EXPECT_EQ(s.used(), 900u);
  EXPECT_EQ(s.available(), 124u);
  s.free(400);
  ASSERT_TRUE(s.allocate(100));
  EXPECT_EQ(s.used(), 600u);
  EXPECT_EQ(s.peak(), 900u);
}

TEST(Sram, ResetPeakMeasuresFromWhatIsHeldNow) {
  Sram s(1024);
  ASSERT_TRUE(s.allocate(800));
  s.free(500);
  s.reset_peak();
  EXPECT_EQ(s.peak(), 300u);
  ASSERT_TRUE(s.allocate(100));
  EXPECT_EQ(s.peak(), 400u);
}

TEST(Sram, AnAllocationThatDoesNotFitTakesNothing) {
  Sram s(1024);
  EXPECT_FALSE(s.allocate(1025));
  EXPECT_EQ(s.used(), 0u);
  EXPECT_EQ(s.peak(), 0u);
  EXPECT_TRUE(s.allocate(1024));  // exactly the capacity fits
  EXPECT_EQ(s.available(), 0u);
  EXPECT_FALSE(s.allocate(1));
  EXPECT_EQ(s.used(), 1024u);
}

}  // namespace
}  // namespace cubesim::components
