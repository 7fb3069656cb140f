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

// The systolic model (gemm_timing.hpp): a 64 x 64 array at 1 GHz whose f16 peak is two
// multiply-adds per cell per cycle (2 * 64 * 64 * 1e9 * 2 = 16.384 TFLOP/s), so w = 2; every
// expected figure below is the header's formula worked by hand.
GemmConfig systolic(Dataflow flow, double feed_bytes_per_s = 0) {
  GemmConfig g = testing::small_config().pe.gemm;
  g.model = GemmModel::systolic;
  g.rows = 64;
  g.cols = 64;
  g.dataflow = flow;
  g.sram_feed_bytes_per_s = feed_bytes_per_s;
  g.clock = Frequency::from_GHz(1.0);
  g.peak_flops[static_cast<int>(DType::f16)] = 16.384e12;
  return g;
}

TEST(GemmTiming, SystolicSquareGemmsPayEachFoldsFillAndDrain) {
  const GemmTimingModel ws(systolic(Dataflow::weight_stationary));
  // Folds: K / (64 * 2) = 8, N / 64 = 16; each M + 2R + C - 2 = 1024 + 190 cycles.
  EXPECT_EQ(ws.systolic_cycles(1024, 1024, 1024, DType::f16), 8u * 16 * 1214);
  EXPECT_EQ(ws.compute_time(1024, 1024, 1024, DType::f16), 8u * 16 * 1214 * 1000);
  const GemmTimingModel os(systolic(Dataflow::output_stationary));
  // Folds: M / 64 = 16, N / 64 = 16; each K / w + 2R + C - 2 = 512 + 190 cycles.
  EXPECT_EQ(os.systolic_cycles(1024, 1024, 1024, DType::f16), 16u * 16 * 702);
  // Both above the peak's 2 M N K / 16.384e12 = 131.072 us, and near it for a long stream.
  EXPECT_GT(ws.compute_time(1024, 1024, 1024, DType::f16), 131'072'000u);
  EXPECT_LT(ws.compute_time(8192, 1024, 1024, DType::f16),
            std::uint64_t{131'072'000} * 8 * 103 / 100);
}

TEST(GemmTiming, SystolicSkinnyAndTinyKGemmsLeaveTheArrayIdle) {
  const GemmTimingModel ws(systolic(Dataflow::weight_stationary));
  const GemmTimingModel os(systolic(Dataflow::output_stationary));
  // M = 16 rows through a weight-stationary array: 128 folds of 16 + 190 cycles, 12.9x the
  // 2.048 us the peak would take.
  EXPECT_EQ(ws.compute_time(16, 1024, 1024, DType::f16), 128u * 206 * 1000);
  // K = 64: one K fold of half the array's rows; output-stationary streams 32 cycles of K per
  // fold and pays 190 of skew, over 256 folds.
  EXPECT_EQ(ws.systolic_cycles(1024, 1024, 64, DType::f16), 1u * 16 * 1214);
  EXPECT_EQ(os.systolic_cycles(1024, 1024, 64, DType::f16), 256u * 222);
  // Shapes that are not whole folds are rounded up to them (quantisation): 65 columns take
  // two column folds, as 128 do.
  EXPECT_EQ(ws.systolic_cycles(100, 65, 128, DType::f16),
            ws.systolic_cycles(100, 128, 128, DType::f16));
  // A dtype at a quarter of the rate (w = 0.5): a fold covers 32 of K, four times the folds.
  GemmConfig slow = systolic(Dataflow::weight_stationary);
  slow.peak_flops[static_cast<int>(DType::f32)] = 4.096e12;
  EXPECT_EQ(GemmTimingModel(slow).systolic_cycles(1024, 1024, 1024, DType::f32), 32u * 16 * 1214);
}

TEST(GemmTiming, ASlowSramFeedBoundsTheSystolicArray) {
  // Weight-stationary 1024^3 f16: A (2 MiB) once per N fold (16), B (2 MiB) once, the f32 partial
  // sums (4 MiB) written per K fold and read back (2 * 8 - 1 = 15 times): 94 MiB.
  const std::uint64_t bytes = 2 * 1048576 * 16 + 2 * 1048576 + 4 * 1048576 * 15;
  const GemmTimingModel fed(systolic(Dataflow::weight_stationary, 100e9));
  EXPECT_EQ(fed.feed_bytes(1024, 1024, 1024, DType::f16), bytes);
  EXPECT_EQ(fed.compute_time(1024, 1024, 1024, DType::f16), (bytes * 1000 + 99) / 100);
  // A fast feed leaves the array's time.
  const GemmTimingModel fast(systolic(Dataflow::weight_stationary, 1e15));
  EXPECT_EQ(fast.compute_time(1024, 1024, 1024, DType::f16), 8u * 16 * 1214 * 1000);
}

}  // namespace
}  // namespace cubesim::components
