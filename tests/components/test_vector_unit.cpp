// The vector unit's cost of element-wise math, computed from the configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

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

// Gathers through the SRAM's banks: 64 lanes, so 64 banks of 8 B by default.
std::vector<std::int64_t> transposed(std::int64_t rows, std::int64_t cols) {
  std::vector<std::int64_t> src;  // output (j, i) is input (i, j), the input rows x cols
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) src.push_back(i * cols + j);
  return src;
}

TEST(VectorUnit, AContiguousGatherCostsWhatElementWiseMathDoes) {
  const SystemConfig c = testing::small_config();
  const VectorUnit v(c.pe.vector, c.pe.clock);
  ASSERT_EQ(v.banks(), 64u);
  for (const std::int64_t n : {1, 64, 1000, 4096}) {
    std::vector<std::int64_t> src(static_cast<std::size_t>(n));
    std::iota(src.begin(), src.end(), 0);
    for (const std::uint32_t bytes : {1u, 2u, 4u, 8u})
      EXPECT_EQ(v.gather_cycles(src, bytes, n).count, v.cycles(static_cast<std::uint64_t>(n)).count)
          << n << " elements of " << bytes << " B";
  }
  // A broadcast reads one word for every lane: no conflict.
  const std::vector<std::int64_t> same(256, 5);
  EXPECT_EQ(v.gather_cycles(same, 4, 8).count, v.cycles(256).count);
}

// The transpose of a 128 x 128 f32 tile: a row is 512 B = 64 words, so with 64 linear banks an
// output group (one input column, 64 rows) asks one bank for 64 words: 64 cycles a group, 256
// groups. Skewed, row i's words start i banks on: a group meets 64 different banks.
TEST(VectorUnit, ATransposeConflictsInLinearBanksAndSpreadsInSkewedOnes) {
  SystemConfig c = testing::small_config();
  const std::vector<std::int64_t> src = transposed(128, 128);
  const VectorUnit linear(c.pe.vector, c.pe.clock);
  EXPECT_EQ(linear.gather_cycles(src, 4, 128 * 128).count, 256u * 64u + 4u);
  c.pe.vector.sram_bank_mapping = BankMapping::skewed;
  const VectorUnit skewed(c.pe.vector, c.pe.clock);
  EXPECT_EQ(skewed.gather_cycles(src, 4, 128 * 128).count, 256u + 4u);
  // f16: a row is 32 words, so a column's even rows fall in one bank and its odd rows in the
  // bank 32 on: a group of 64 rows asks each of the two for 32 words.
  EXPECT_EQ(linear.gather_cycles(src, 2, 128 * 128).count, 256u * 32u + 4u);
}

// A strided read, every 16th element of f32 (64 B apart = 8 words): 8 banks per group of 64
// elements, 8 words each.
TEST(VectorUnit, AStridedGatherTakesTheMostWordsOneBankGives) {
  SystemConfig c = testing::small_config();
  std::vector<std::int64_t> src;
  for (std::int64_t k = 0; k < 64; ++k) src.push_back(16 * k);
  const VectorUnit v(c.pe.vector, c.pe.clock);
  EXPECT_EQ(v.gather_cycles(src, 4, 1024).count, 8u + 4u);
  c.pe.vector.sram_banks = 128;  // twice the banks: half the conflicts
  const VectorUnit wider(c.pe.vector, c.pe.clock);
  EXPECT_EQ(wider.gather_cycles(src, 4, 1024).count, 4u + 4u);
}

// cat's second source starts on the bank row after the first's: a: 96 f32 (48 words, so b at
// word 64); output k < 64 from a's first 64, then 64 from b.
TEST(VectorUnit, ASecondSourceStartsOnTheNextBankRow) {
  const SystemConfig c = testing::small_config();
  const VectorUnit v(c.pe.vector, c.pe.clock);
  std::vector<std::int64_t> src;
  for (std::int64_t k = 0; k < 32; ++k) src.push_back(k);       // a's words 0..15
  for (std::int64_t k = 0; k < 32; ++k) src.push_back(96 + k);  // b's words 64..79: banks 0..15
  EXPECT_EQ(v.gather_cycles(src, 4, 96).count, 2u + 4u);        // banks 0..15 twice
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
