// The vectorised f16 / bf16 <-> f32 conversions agree bit for bit with Eigen's portable
// round-to-nearest-even on every value (NaNs: stay NaN), on every ISA this CPU has.

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "triton_emu/backends/cpu_convert.hpp"

namespace cubesim::backends {
namespace {

class ConvertBlock : public ::testing::TestWithParam<ConvertIsa> {
 protected:
  void SetUp() override {
    if (GetParam() == ConvertIsa::avx2_f16c && best_convert_isa() != ConvertIsa::avx2_f16c)
      GTEST_SKIP() << "this CPU has no AVX2 + F16C";
  }
  ConvertIsa isa() const { return GetParam(); }
};

float eigen_to_f32(DType t, std::uint16_t bits) {
  return t == DType::f16 ? static_cast<float>(std::bit_cast<Eigen::half>(bits))
                         : static_cast<float>(std::bit_cast<Eigen::bfloat16>(bits));
}
std::uint16_t eigen_from_f32(DType t, float v) {
  return t == DType::f16 ? std::bit_cast<std::uint16_t>(Eigen::half(v))
                         : std::bit_cast<std::uint16_t>(Eigen::bfloat16(v));
}

// f32 test values: specials, values on and beside rounding ties, the edges of the f16 and bf16
// ranges (overflow, denormals), and random bit patterns.
std::vector<float> interesting_floats() {
  std::vector<float> v{0.0f,      -0.0f, 1.0f,  -1.0f,   65504.0f, 65519.0f, 65520.0f,
                       1e-8f,     6e-8f, 3e-8f, 6.1e-5f, 1e38f,    3.4e38f,  INFINITY,
                       -INFINITY, NAN,   -NAN,  1e-40f,  -1e-45f};
  for (std::uint32_t base : {0x3f800000u, 0x3f808000u, 0x3f818000u, 0x00008000u, 0x7f7f8000u,
                             0x33000000u, 0x33800000u, 0x387fc000u})
    for (std::uint32_t delta : {0u, 1u, 0x0fffu, 0x1000u, 0x1001u, 0x7fffu})
      for (std::uint32_t sign : {0u, 0x80000000u}) {
        v.push_back(std::bit_cast<float>((base + delta) | sign));
        v.push_back(std::bit_cast<float>((base - delta) | sign));
      }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i)
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  return v;
}

TEST_P(ConvertBlock, EveryHalfAndBfloat16WidensExactly) {
  for (DType t : {DType::f16, DType::bf16}) {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    std::vector<float> out(all.size());
    convert_block(t, all.data(), 65536, DType::f32, out.data(), 65536, 1, 65536, isa());
    for (std::size_t i = 0; i < all.size(); ++i) {
      const float want = eigen_to_f32(t, all[i]);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(out[i])) << dtype_name(t) << " bits " << i;
      else
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(want))
            << dtype_name(t) << " bits " << i;
    }
  }
}

TEST_P(ConvertBlock, NarrowingRoundsToNearestEvenLikeEigen) {
  const std::vector<float> in = interesting_floats();
  for (DType t : {DType::f16, DType::bf16}) {
    std::vector<std::uint16_t> out(in.size());
    const auto n = static_cast<std::int64_t>(in.size());
    convert_block(DType::f32, in.data(), n, t, out.data(), n, 1, n, isa());
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (std::isnan(in[i])) {
        ASSERT_TRUE(std::isnan(eigen_to_f32(t, out[i]))) << dtype_name(t);
        continue;
      }
      ASSERT_EQ(out[i], eigen_from_f32(t, in[i]))
          << dtype_name(t) << " from f32 bits 0x" << std::hex
          << std::bit_cast<std::uint32_t>(in[i]);
    }
  }
}

TEST_P(ConvertBlock, StridedBlocksTouchOnlyTheirElements) {
  // Odd widths exercise the vector loops' scalar tails; the destination's row padding keeps
  // its sentinel.
  for (std::int64_t cols : {1, 7, 16, 17, 33, 100}) {
    const std::int64_t rows = 5, ld_src = cols + 4, ld_dst = cols + 3;
    std::vector<float> src(static_cast<std::size_t>(rows * ld_src));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = 0.25f * static_cast<float>(i % 64) - 7.0f;
    for (DType t : {DType::f16, DType::bf16}) {
      std::vector<std::uint16_t> mid(static_cast<std::size_t>(rows * ld_dst), 0xABCD);
      std::vector<float> back(static_cast<std::size_t>(rows * ld_src), -1.0f);
      convert_block(DType::f32, src.data(), ld_src, t, mid.data(), ld_dst, rows, cols, isa());
      convert_block(t, mid.data(), ld_dst, DType::f32, back.data(), ld_src, rows, cols, isa());
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c = 0; c < ld_dst; ++c) {
          const std::uint16_t got = mid[static_cast<std::size_t>(r * ld_dst + c)];
          if (c >= cols) {
            EXPECT_EQ(got, 0xABCD) << "padding written at row " << r;
          }
        }
        for (std::int64_t c = 0; c < ld_src; ++c) {
          const std::size_t i = static_cast<std::size_t>(r * ld_src + c);
          // Quarters in [-7, 8.75): at most 6 significant bits, exact in both f16 and bf16.
          EXPECT_EQ(back[i], c < cols ? src[i] : -1.0f) << dtype_name(t) << " cols " << cols;
        }
      }
    }
  }
}

TEST_P(ConvertBlock, HalfToBfloat16GoesThroughF32) {
  const std::vector<std::uint16_t> h{std::bit_cast<std::uint16_t>(Eigen::half(1.5f)),
                                     std::bit_cast<std::uint16_t>(Eigen::half(-3.0f)),
                                     std::bit_cast<std::uint16_t>(Eigen::half(1.0009765625f))};
  std::vector<std::uint16_t> bf(3);
  convert_block(DType::f16, h.data(), 3, DType::bf16, bf.data(), 3, 1, 3, isa());
  EXPECT_EQ(eigen_to_f32(DType::bf16, bf[0]), 1.5f);
  EXPECT_EQ(eigen_to_f32(DType::bf16, bf[1]), -3.0f);
  EXPECT_EQ(eigen_to_f32(DType::bf16, bf[2]), 1.0f);  // 1 + 2^-10 rounds to 1 in bf16
}

TEST(gemm_convert, I32IsRefused) {
  std::int32_t x = 1;
  float y = 0;
  EXPECT_THROW(convert_block(DType::i32, &x, 1, DType::f32, &y, 1, 1, 1), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(gemm, ConvertBlock,
                         ::testing::Values(ConvertIsa::scalar, ConvertIsa::avx2_f16c),
                         [](const ::testing::TestParamInfo<ConvertIsa>& p) {
                           return std::string(convert_isa_name(p.param)) == "scalar"
                                      ? std::string("scalar")
                                      : std::string("avx2_f16c");
                         });

}  // namespace
}  // namespace cubesim::backends
