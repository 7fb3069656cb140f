#include <gtest/gtest.h>

#include <cmath>

#include "emu/time.hpp"

using namespace cubesim::emu;

TEST(Time, WholeUnitsConvertToPicoseconds) {
  EXPECT_EQ(ns(1), 1'000u);
  EXPECT_EQ(us(3), 3'000'000u);
  EXPECT_EQ(ns(0), 0u);
}

TEST(Time, WholeUnitsRefuseOverflowInsteadOfWrapping) {
  EXPECT_EQ(ns(kTickMax / 1000), kTickMax / 1000 * 1000);
  EXPECT_THROW(ns(kTickMax / 1000 + 1), TimeOverflow);
  EXPECT_THROW(us(kTickMax / 1'000'000 + 1), TimeOverflow);
}

TEST(Time, FractionalNanosecondsRoundToNearestPicosecond) {
  EXPECT_EQ(from_ns(0.5), 500u);
  EXPECT_EQ(from_ns(0.1), 100u);  // 0.1 * 1000 is 100.00000000000001 in binary
  EXPECT_EQ(from_ns(1.0004), 1'000u);
  EXPECT_EQ(from_ns(1.0006), 1'001u);
  EXPECT_EQ(from_us(2.5), 2'500'000u);
}

TEST(Time, FractionalValuesRejectNegativeNanAndHuge) {
  EXPECT_THROW(from_ns(-1), TimeError);
  EXPECT_THROW(from_ns(std::nan("")), TimeError);
  EXPECT_THROW(from_ns(INFINITY), TimeError);
  EXPECT_THROW(from_ns(1e20), TimeError);  // 1e23 ps > 2^64
}

TEST(Time, CheckedAddDetectsOverflow) {
  EXPECT_EQ(checked_add(5, 7), 12u);
  EXPECT_EQ(checked_add(kTickMax - 1, 1), kTickMax);
  EXPECT_THROW(checked_add(kTickMax, 1), TimeOverflow);
}

TEST(Time, OverflowErrorsNameTheQuantityAndTheOperands) {
  try {
    checked_add(kTickMax - ns(1), ns(2), "a packet's arrival");
    FAIL() << "no TimeOverflow";
  } catch (const TimeOverflow& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a packet's arrival: "), std::string::npos) << what;
    EXPECT_NE(what.find(" + 2 ns overflows simulated time"), std::string::npos) << what;
  }
}

TEST(Time, CheckedMulDetectsOverflow) {
  EXPECT_EQ(checked_mul(3, 7), 21u);
  EXPECT_EQ(checked_mul(kTickMax / 5, 5), kTickMax / 5 * 5);
  EXPECT_EQ(checked_mul(0, kTickMax), 0u);
  EXPECT_THROW(checked_mul(kTickMax / 5 + 1, 5), TimeOverflow);
  EXPECT_THROW(checked_mul(2, kTickMax / 2 + 1, "round trips"), TimeOverflow);
}

TEST(Time, FormatTimeIsExact) {
  EXPECT_EQ(format_time(0), "0 ps");
  EXPECT_EQ(format_time(999), "999 ps");
  EXPECT_EQ(format_time(1'000), "1 ns");
  EXPECT_EQ(format_time(12'345), "12.345 ns");
  EXPECT_EQ(format_time(1'000'001'000), "1.000001 ms");
  EXPECT_EQ(format_time(3 * kPsPerSecond), "3 s");
}

TEST(Frequency, PeriodIsRoundedToNearestPicosecond) {
  EXPECT_EQ(Frequency::from_GHz(1.0).period(), 1'000u);
  EXPECT_EQ(Frequency::from_GHz(1.5).period(), 667u);  // 666.67 ps
  EXPECT_EQ(period_from_GHz(3.0), 333u);
}

TEST(Frequency, CyclesConvertExactlyWithoutAccumulatingPeriodRounding) {
  const Frequency f = Frequency::from_GHz(1.5);
  EXPECT_EQ(f.hz(), 1'500'000'000u);
  // 3 cycles at 1.5 GHz are exactly 2 ns; 3 x the rounded period would be 2001 ps.
  EXPECT_EQ(f.cycles_to_ticks({3}), 2'000u);
  // A million cycles: 666,666,666.67 ps, rounded up once.
  EXPECT_EQ(f.cycles_to_ticks({1'000'000}), 666'666'667u);
  EXPECT_EQ(f.ticks_to_cycles(2'000).count, 3u);
  EXPECT_EQ(f.ticks_to_cycles(1'999).count, 2u);
}

TEST(Frequency, CyclesPastTheEndOfTimeAreRefusedNotWrapped) {
  // At 1 Hz a cycle is 10^12 ps: floor(kTickMax / 10^12) cycles fit, one more does not.
  const Frequency f = Frequency::from_hz(1);
  const std::uint64_t fit = kTickMax / kPsPerSecond;
  EXPECT_EQ(f.cycles_to_ticks({fit}), fit * kPsPerSecond);
  EXPECT_THROW(f.cycles_to_ticks({fit + 1}), TimeOverflow);
  EXPECT_THROW(Frequency::from_GHz(1).cycles_to_ticks({UINT64_MAX}), TimeOverflow);
}

TEST(Frequency, RejectsZeroAndNegative) {
  EXPECT_THROW(Frequency::from_GHz(0), TimeError);
  EXPECT_THROW(Frequency::from_GHz(-1), TimeError);
  EXPECT_THROW(Frequency::from_hz(0), TimeError);
}

TEST(Bandwidth, ZeroBytesTakeNoTime) {
  EXPECT_EQ(Bandwidth::from_GBps(3).transfer_time(0), 0u);
}

TEST(Bandwidth, OneByteAtThreeGBpsRoundsUpOnce) {
  // 1 B / 3e9 B/s = 333.33 ps -> 334 ps.
  EXPECT_EQ(Bandwidth::from_GBps(3).transfer_time(1), 334u);
}

TEST(Bandwidth, ManyBytesRoundOnceNotPerByte) {
  // 3 bytes at 3 GB/s are exactly 1 ns; 3 x 334 would drift to 1002 ps.
  EXPECT_EQ(Bandwidth::from_GBps(3).transfer_time(3), 1'000u);
  // 1 GiB at 25.6 GB/s: 1073741824e12 / 25.6e9 = 41,943,040,000 ps exactly.
  EXPECT_EQ(Bandwidth::from_GBps(25.6).bytes_per_s(), 25'600'000'000u);
  EXPECT_EQ(Bandwidth::from_GBps(25.6).transfer_time(1ull << 30), 41'943'040'000u);
}

TEST(Bandwidth, HugeValuesDoNotOverflowTheIntermediate) {
  // 2^63 bytes at 2^63 B/s: the intermediate product is 2^63 * 1e12, far past 64 bits.
  const auto b = Bandwidth::from_bytes_per_s(1ull << 63);
  EXPECT_EQ(b.transfer_time(1ull << 63), kPsPerSecond);
  // A result past 2^64 ps is refused, not wrapped.
  EXPECT_THROW(Bandwidth::from_bytes_per_s(1).transfer_time(UINT64_MAX), TimeOverflow);
}

TEST(Bandwidth, SameResultEitherSideOfThe64BitPath) {
  // Up to floor(2^64 / 1e12) = 18,446,744 bytes the product fits 64 bits; past it the 128-bit
  // path takes over. Both round up once, so the times are exact on both sides: at 7 B/s,
  // ceil(n * 1e12 / 7) computed here with 128-bit integers.
  __extension__ using u128 = unsigned __int128;
  const auto b = Bandwidth::from_bytes_per_s(7);
  for (const std::uint64_t n : {18'446'743ull, 18'446'744ull, 18'446'745ull, 18'446'746ull}) {
    const u128 num = static_cast<u128>(n) * kPsPerSecond;
    EXPECT_EQ(b.transfer_time(n), static_cast<Tick>((num + 6) / 7)) << n << " bytes";
  }
  // The largest 64-bit case at the largest bandwidth: 18,446,744e12 / (2^64 - 1) is just under
  // one picosecond, which rounds up to one.
  EXPECT_EQ(Bandwidth::from_bytes_per_s(UINT64_MAX).transfer_time(18'446'744), 1u);
}

TEST(Bandwidth, RejectsZeroAndNegative) {
  EXPECT_THROW(Bandwidth::from_GBps(0), TimeError);
  EXPECT_THROW(Bandwidth::from_GBps(-5), TimeError);
  EXPECT_THROW(Bandwidth::from_bytes_per_s(0), TimeError);
}
