// LinkCalendar (components/network/link_calendar.hpp): a booking takes the first gap long
// enough from when it can start, whatever order the bookings come in, and touching bookings
// merge. Times are small integers: the rules, not a spec, decide them.
#include <gtest/gtest.h>

#include "components/network/link_calendar.hpp"

namespace cubesim::components {
namespace {

TEST(LinkCalendar, ABookingTakesTheFirstGapLongEnoughFromWhenItCanStart) {
  LinkCalendar c;
  EXPECT_EQ(c.gap(5, 10), 5u);
  c.occupy(100, 200, 0);           // booked first, for later
  EXPECT_EQ(c.gap(10, 50), 10u);   // fits before it
  EXPECT_EQ(c.gap(60, 50), 200u);  // would overlap it: after it
  EXPECT_EQ(c.gap(150, 1), 200u);  // starts inside it
  c.occupy(10, 60, 0);
  EXPECT_EQ(c.gap(0, 10), 0u);
  EXPECT_EQ(c.gap(0, 11), 60u);   // [60, 100) is the next gap of 40
  EXPECT_EQ(c.gap(0, 41), 200u);  // too short for 41
  EXPECT_EQ(c.last(), 200u);
}

TEST(LinkCalendar, TouchingBookingsMergeAndWhatEndedIsForgotten) {
  LinkCalendar c;
  c.occupy(0, 10, 0);
  c.occupy(20, 30, 0);
  c.occupy(10, 20, 0);  // fills the gap exactly: one booking [0, 30)
  EXPECT_EQ(c.gap(0, 1), 30u);
  c.occupy(25, 40, 0);  // overlaps its end
  EXPECT_EQ(c.gap(5, 1), 40u);
  for (emu::Tick t = 100; t < 10000; t += 100) c.occupy(t, t + 50, t);  // ends as time passes
  EXPECT_EQ(c.gap(9900, 10), 9950u);
  EXPECT_EQ(c.gap(9960, 10), 9960u);
  c.clear();
  EXPECT_EQ(c.gap(0, 5), 0u);
  EXPECT_EQ(c.last(), 0u);
}

}  // namespace
}  // namespace cubesim::components
