#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "components/pe/gemm_timing.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

TEST(GemmTiming, ComputeTimeIsFlopsOverPeakRoundedUpOnce) {
  const SystemConfig c = testing::small_config();
  const GemmTimingModel g(c.pe.gemm);
  // 2 * 128^3 = 4194304 FLOP at 32 TFLOP/s = 131.072 ns exactly.
  EXPECT_EQ(g.compute_time(128, 128, 128, DType::f16), 131072u);
  // 2 * 3 * 5 * 7 = 210 FLOP at 8 TFLOP/s = 26.25 ps -> 27 ps.
  EXPECT_EQ(g.compute_time(3, 5, 7, DType::f32), 27u);
  EXPECT_EQ(g.compute_time(0, 5, 7, DType::f32), 0u);
}

TEST(GemmTiming, HugeShapesDoNotOverflow) {
  const SystemConfig c = testing::small_config();
  const GemmTimingModel g(c.pe.gemm);
  // 2 * 2^60 FLOP at 32e12 FLOP/s ~ 72,000 s: fits in a Tick (213 days).
  EXPECT_GT(g.compute_time(1ull << 20, 1ull << 20, 1ull << 20, DType::f16), 0u);
  EXPECT_THAT([&] { g.compute_time(1ull << 30, 1ull << 30, 1ull << 30, DType::f16); },
              ::testing::ThrowsMessage<emu::TimeOverflow>(
                  ::testing::AllOf(::testing::HasSubstr("system.pe.gemm.peak_TFLOPS.f16"),
                                   ::testing::HasSubstr("1073741824 x 1073741824 x 1073741824"))));
}

TEST(GemmTiming, ADtypeWithoutPeakRateIsAnError) {
  SystemConfig c = testing::small_config();
  c.pe.gemm.peak_flops[static_cast<int>(DType::i32)] = 0;
  const GemmTimingModel g(c.pe.gemm);
  EXPECT_THAT(
      [&] { g.compute_time(8, 8, 8, DType::i32); },
      ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("peak_TFLOPS.i32")));
}

TEST(GemmTiming, EpilogueStepsEachTakeTheOutputOverTheRateRoundedUpOnce) {
  SystemConfig c = testing::small_config();
  c.pe.gemm.epilogue_elements_per_s = 96e9;
  const GemmTimingModel g(c.pe.gemm);
  // 4096 elements at 96e9 / s = 42.666 ns -> 42667 ps per step.
  EXPECT_EQ(g.epilogue_time(4096, 1), 42667u);
  EXPECT_EQ(g.epilogue_time(4096, 3), 3 * 42667u);
  EXPECT_EQ(g.epilogue_time(4096, 0), 0u);
  EXPECT_EQ(g.epilogue_time(0, 2), 0u);
  EXPECT_THAT([&] { g.epilogue_time(1ull << 62, 4); },
              ::testing::ThrowsMessage<emu::TimeOverflow>(
                  ::testing::HasSubstr("system.pe.gemm.epilogue_Gelem_per_s")));
}

}  // namespace
}  // namespace cubesim::components
