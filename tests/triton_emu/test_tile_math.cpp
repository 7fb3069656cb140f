// Tile math against an fp64 reference on random inputs, with relative-error bounds from the
// dtype: f32 results are rounded once from f32 arithmetic (a few ulp: 1e-6), f16 results once
// to 11 bits (2^-11 ~ 4.9e-4), bf16 to 8 bits (2^-8 ~ 3.9e-3).
#include <gtest/gtest.h>

#include <cmath>
#include <cubesim/cubesim.hpp>
#include <random>

#include "spec_path.hpp"

namespace cubesim {
namespace {

double rel(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-3);
}

struct Math : ::testing::Test {
  Simulation sim{Spec::load(spec_path("tiny.json"))};
  std::mt19937_64 rng{11};
  std::vector<float> random(std::size_t n) {
    std::uniform_real_distribution<float> d(0.25f, 2.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = (rng() & 1 ? 1 : -1) * d(rng);
    return v;
  }
  template <typename F>
  void run(F f) {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, f);
  }
};

TEST_F(Math, ElementwiseBroadcastAndReductionsMatchFp64) {
  const std::int64_t r = 12, c = 37;
  const auto x = random(r * c), y = random(c);
  const Ptr px = sim.alloc(r * c * 4), py = sim.alloc(c * 4);
  sim.write(px, x);
  sim.write(py, y);
  run([&](tl::Context& tl) {
    const auto a = tl.load(px, {r, c}, DType::f32);
    const auto b = tl.load(py, {c}, DType::f32);
    const auto e = tl::exp(a * b - 0.5);  // broadcast the row over all rows
    const auto s = tl::sum(e, 1);
    const auto mx = tl::max(a, 0);
    for (std::int64_t i = 0; i < r; ++i) {
      double want = 0;
      for (std::int64_t j = 0; j < c; ++j) {
        const double v = std::exp(double(x[i * c + j]) * y[j] - 0.5);
        EXPECT_LT(rel(e.at(i, j), v), 1e-6);
        want += v;
      }
      EXPECT_LT(rel(s.at(i), want), 1e-5);  // 37 f32 additions
    }
    for (std::int64_t j = 0; j < c; ++j) {
      double want = -1e30;
      for (std::int64_t i = 0; i < r; ++i) want = std::max(want, double(x[i * c + j]));
      EXPECT_EQ(mx.at(j), want);
    }
  });
}

TEST_F(Math, HalfPrecisionRoundsOncePerOperation) {
  const std::int64_t n = 512;
  const auto x = random(n), y = random(n);
  std::vector<half> hx(n), hy(n);
  std::vector<bfloat16> bx(n), by(n);
  for (std::int64_t i = 0; i < n; ++i) {
    hx[i] = half(x[i]);
    hy[i] = half(y[i]);
    bx[i] = bfloat16(x[i]);
    by[i] = bfloat16(y[i]);
  }
  const Ptr p = sim.alloc(4 * n * 2);
  sim.write(p, hx);
  sim.write(p + n * 2, hy);
  sim.write(p + 2 * n * 2, bx);
  sim.write(p + 3 * n * 2, by);
  run([&](tl::Context& tl) {
    const auto a = tl.load(p, {n}, DType::f16) * tl.load(p + n * 2, {n}, DType::f16);
    const auto b =
        tl.load(p + 2 * n * 2, {n}, DType::bf16) * tl.load(p + 3 * n * 2, {n}, DType::bf16);
    EXPECT_EQ(a.dtype(), DType::f16);
    EXPECT_EQ(b.dtype(), DType::bf16);
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_LT(rel(a.at(i), double(float(hx[i])) * float(hy[i])), 4.9e-4);
      EXPECT_LT(rel(b.at(i), double(float(bx[i])) * float(by[i])), 3.9e-3);
    }
  });
}

TEST_F(Math, WhereMasksIntegersAndDot) {
  const std::int64_t m = 6, k = 9, n = 5;
  const auto x = random(m * k), y = random(k * n);
  const Ptr px = sim.alloc(m * k * 4), py = sim.alloc(k * n * 4);
  sim.write(px, x);
  sim.write(py, y);
  run([&](tl::Context& tl) {
    const auto a = tl.load(px, {m, k}, DType::f32);
    const auto b = tl.load(py, {k, n}, DType::f32);
    const auto d = tl::dot(a, b);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t p = 0; p < k; ++p) want += double(x[i * k + p]) * y[p * n + j];
        EXPECT_LT(std::abs(d.at(i, j) - want), 1e-5 * k);
      }
    const auto idx = tl.arange(0, 10);
    const auto w = tl::where(idx < 4.0, idx * 3.0, -1.0);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(w.at(i), i < 4 ? 3 * i : -1);
    EXPECT_EQ(w.dtype(), DType::i32);
    const auto big = tl.full({1}, 2147483647.0, DType::i32) + 1.0;  // wraps like hardware
    EXPECT_EQ(big.at(0), -2147483648.0);
  });
}

TEST_F(Math, ShapesThatDoNotBroadcastAreAFault) {
  EXPECT_THROW(run([&](tl::Context& tl) {
                 (void)(tl.full({3, 4}, 1.0, DType::f32) + tl.full({5}, 1.0, DType::f32));
               }),
               KernelError);
}

TEST_F(Math, FloatToIntSaturatesAndNanGivesZeroOnEveryPath) {
  run([&](tl::Context& tl) {
    const float big = 3e9f, nan = std::nanf("");
    auto f = [&](double v) { return tl.full({1}, v, DType::f32); };
    const std::vector<std::pair<double, std::int32_t>> cases = {
        {big, INT32_MAX}, {-big, INT32_MIN}, {nan, 0}, {-7.9, -7}, {7.9, 7}};
    for (const auto& [v, want] : cases) {
      EXPECT_EQ(f(v).to_i32()[0], want) << v;                   // Tile::to_i32
      EXPECT_EQ(f(v).to(DType::i32).at(0), double(want)) << v;  // a cast on the vector unit
    }
  });
}

TEST_F(Math, FloatMasksAreTrueWhereNonzeroIncludingNan) {
  run([&](tl::Context& tl) {
    const float nan = std::nanf("");
    const std::vector<float> mv = {0.0f, 0.5f, -2.0f, nan};
    auto mask = tl.full({4}, 0.0, DType::f32);
    for (int i = 0; i < 4; ++i)
      mask = tl::where(tl.arange(0, 4) == tl.full({1}, i, DType::i32),
                       tl.full({4}, mv[i], DType::f32), mask);
    const auto ones = tl.full({4}, 1.0, DType::i32);
    const auto picked = tl::where(mask, ones, 0.0);
    const auto both = mask & ones, either = mask | tl.full({4}, 0.0, DType::i32);
    for (int i = 0; i < 4; ++i) {
      const int want = i == 0 ? 0 : 1;  // 0.5 is nonzero: a cast to int would make it 0
      EXPECT_EQ(picked.at(i), double(want)) << i;
      EXPECT_EQ(both.at(i), double(want)) << i;
      EXPECT_EQ(either.at(i), double(want)) << i;
    }
  });
}

TEST_F(Math, ArangePastTheI32RangeIsAFaultNotAWrap) {
  const std::int64_t two31 = std::int64_t{1} << 31;
  try {
    run([&](tl::Context& tl) { (void)tl.arange(two31 - 2, two31 + 2); });
    FAIL() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("do not fit the i32 index tile"), std::string::npos)
        << e.what();
  }
  run([&](tl::Context& tl) {  // the largest i32 values are fine
    const auto t = tl.arange(two31 - 4, two31);
    EXPECT_EQ(t.at(3), double(two31 - 1));
  });
  EXPECT_THROW(run([&](tl::Context& tl) { (void)tl.full({2}, 3e9, DType::i32); }), KernelError);
}

}  // namespace
}  // namespace cubesim
