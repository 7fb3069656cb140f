// The tile operations beyond + - * / (integer division, bitwise, shifts, float functions,
// argmax/argmin, cumsum, 3D tiles, data movement, i8/i64/bool/f8 dtypes, device_print and
// device_assert), each against an exact-integer or fp64 reference on random inputs, and the
// vector-unit cost of each operation class derived from the spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cubesim/cubesim.hpp>
#include <limits>
#include <random>

#include "components/float8.hpp"
#include "error_of.hpp"
#include "spec_path.hpp"
#include "triton_emu/tile/element_codec.hpp"

namespace cubesim {
namespace {

using components::VectorOp;
using ::testing::HasSubstr;

double rel(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-30);
}

struct Ops : ::testing::Test {
  Simulation sim{Spec::load(spec_path("tiny.json"))};
  std::mt19937_64 rng{7};
  // Nonzero integers in [-limit, limit].
  std::vector<double> ints(std::size_t n, std::int64_t limit) {
    std::uniform_int_distribution<std::int64_t> d(1, limit);
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>((rng() & 1 ? 1 : -1) * d(rng));
    return v;
  }
  std::vector<double> floats(std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<float>(d(rng));
    return v;
  }
  template <typename F>
  void run(F f) {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, f);
  }
};

// Loads v into a tile through a buffer written before the launch.
struct Input {
  std::vector<double> v;
  tl::Shape shape;
  DType dtype;
  Ptr p{};
};

void put(Simulation& sim, Input& in) {
  std::vector<std::byte> b(in.v.size() * dtype_size(in.dtype));
  tl::encode_f64(in.v.data(), static_cast<std::int64_t>(in.v.size()), in.dtype, b.data());
  in.p = sim.alloc(std::max<std::size_t>(b.size(), 1));
  sim.write_bytes(in.p, b.data(), b.size());
}

tl::Tile get(tl::Context& tl, const Input& in) {
  return tl.load(in.p, in.shape, in.dtype);
}

TEST_F(Ops, IntegerDivisionTruncatesTowardZeroAndRemainderKeepsTheDividendsSign) {
  for (DType t : {DType::i8, DType::i32, DType::i64}) {
    const std::int64_t lim = t == DType::i8 ? 127 : t == DType::i32 ? 2'000'000'000 : 1LL << 60;
    Input a{ints(96, lim), {8, 12}, t}, b{ints(12, t == DType::i8 ? 20 : 1000), {12}, t};
    put(sim, a);
    put(sim, b);
    run([&](tl::Context& tl) {
      const auto x = get(tl, a), y = get(tl, b);
      const auto q = tl::floordiv(x, y), r = x % y;
      ASSERT_EQ(q.dtype(), t);
      const auto qv = q.to_i64(), rv = r.to_i64();
      for (std::int64_t i = 0; i < 96; ++i) {
        const auto xi = static_cast<std::int64_t>(a.v[i]),
                   yi = static_cast<std::int64_t>(b.v[i % 12]);
        EXPECT_EQ(qv[i], xi / yi) << dtype_name(t) << " " << xi << " // " << yi;
        EXPECT_EQ(rv[i], xi % yi);
        EXPECT_EQ(qv[i] * yi + rv[i], xi);
      }
      const auto qs = tl::floordiv(x, -7.0).to_i64();
      for (std::int64_t i = 0; i < 96; ++i)
        EXPECT_EQ(qs[i], static_cast<std::int64_t>(a.v[i]) / -7);
    });
  }
}

TEST_F(Ops, IntegerDivisionByZeroFaultsNamingTheElementAndFloatsGiveInf) {
  Input a{ints(6, 100), {2, 3}, DType::i32}, b{{3, -2, 5, 4, 0, 9}, {2, 3}, DType::i32};
  put(sim, a);
  put(sim, b);
  const auto msg = error_of<KernelError>(
      [&] { run([&](tl::Context& tl) { tl::floordiv(get(tl, a), get(tl, b)); }); });
  EXPECT_THAT(msg, HasSubstr("floordiv"));
  EXPECT_THAT(msg, HasSubstr("by zero at element (1, 1)"));
  EXPECT_THAT(
      error_of<KernelError>([&] { run([&](tl::Context& tl) { get(tl, a) % get(tl, b); }); }),
      HasSubstr("remainder"));
  run([&](tl::Context& tl) {
    const auto q = get(tl, a) / get(tl, b);  // true division: f32
    EXPECT_EQ(q.dtype(), DType::f32);
    EXPECT_TRUE(std::isinf(q.at(1, 1)));
    EXPECT_EQ(std::signbit(q.at(1, 1)), a.v[4] < 0);
    EXPECT_FLOAT_EQ(q.at(0, 0), static_cast<float>(a.v[0] / 3));
  });
}

TEST_F(Ops, IntMinDividedByMinusOneWrapsToIntMin) {
  Input a{{-2147483648.0, 7}, {2}, DType::i32}, m{{-1, -1}, {2}, DType::i32};
  Input a8{{-128, 5}, {2}, DType::i8}, m8{{-1, -1}, {2}, DType::i8};
  for (Input* in : {&a, &m, &a8, &m8}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto q = tl::floordiv(get(tl, a), get(tl, m)), r = get(tl, a) % get(tl, m);
    EXPECT_EQ(q.at(0), -2147483648.0);
    EXPECT_EQ(q.at(1), -7);
    EXPECT_EQ(r.at(0), 0);
    EXPECT_EQ(tl::floordiv(get(tl, a8), get(tl, m8)).at(0), -128);
    EXPECT_EQ(tl::abs(get(tl, a)).at(0), -2147483648.0);  // abs wraps too
  });
}

TEST_F(Ops, BitwiseAndShiftsMatchExactIntegers) {
  Input a{ints(64, 1'000'000'000), {64}, DType::i32}, b{ints(64, 1'000'000'000), {64}, DType::i32};
  std::uniform_int_distribution<int> sd(0, 31);
  Input s{{}, {64}, DType::i32};
  for (int i = 0; i < 64; ++i) s.v.push_back(sd(rng));
  for (Input* in : {&a, &b, &s}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a), y = get(tl, b), k = get(tl, s);
    const auto band = (x & y).to_i64(), bor = (x | y).to_i64(), bxor = (x ^ y).to_i64(),
               bnot = (~x).to_i64(), l = (x << k).to_i64(), r = (x >> k).to_i64(),
               l3 = (x << 3).to_i64();
    for (int i = 0; i < 64; ++i) {
      const auto xi = static_cast<std::int32_t>(a.v[i]), yi = static_cast<std::int32_t>(b.v[i]);
      const int ki = static_cast<int>(s.v[i]);
      EXPECT_EQ(band[i], xi & yi);
      EXPECT_EQ(bor[i], xi | yi);
      EXPECT_EQ(bxor[i], xi ^ yi);
      EXPECT_EQ(bnot[i], ~xi);
      EXPECT_EQ(l[i], static_cast<std::int32_t>(static_cast<std::uint32_t>(xi) << ki));
      EXPECT_EQ(r[i], xi >> ki);
      EXPECT_EQ(l3[i], static_cast<std::int32_t>(static_cast<std::uint32_t>(xi) << 3));
    }
  });
  EXPECT_THAT(error_of<KernelError>([&] { run([&](tl::Context& tl) { get(tl, a) << 32; }); }),
              HasSubstr("shift by 32, outside 0 .. 31 for i32"));
  EXPECT_THAT(error_of<KernelError>([&] { run([&](tl::Context& tl) { get(tl, a) >> -1; }); }),
              HasSubstr("shift by -1"));
}

TEST_F(Ops, NarrowAndWideIntegersWrapOnOverflow) {
  Input a{ints(50, 127), {50}, DType::i8}, b{ints(50, 127), {50}, DType::i8};
  Input c{ints(50, 1LL << 62), {50}, DType::i64}, d{ints(50, 1LL << 62), {50}, DType::i64};
  for (Input* in : {&a, &b, &c, &d}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto s8 = get(tl, a) + get(tl, b), p8 = get(tl, a) * get(tl, b);
    const auto p64 = get(tl, c) * get(tl, d), s64 = get(tl, c) + get(tl, d);
    ASSERT_EQ(s8.dtype(), DType::i8);
    ASSERT_EQ(p64.dtype(), DType::i64);
    for (int i = 0; i < 50; ++i) {
      const auto x = static_cast<std::int64_t>(a.v[i]), y = static_cast<std::int64_t>(b.v[i]);
      EXPECT_EQ(s8.at(i), static_cast<std::int8_t>(static_cast<std::uint8_t>(x + y)));
      EXPECT_EQ(p8.at(i), static_cast<std::int8_t>(static_cast<std::uint8_t>(x * y)));
      const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(c.v[i])),
                 w = static_cast<std::uint64_t>(static_cast<std::int64_t>(d.v[i]));
      EXPECT_EQ(p64.to_i64()[i], static_cast<std::int64_t>(u * w));
      EXPECT_EQ(s64.to_i64()[i], static_cast<std::int64_t>(u + w));
    }
  });
}

TEST_F(Ops, FloatFunctionsMatchFp64) {
  Input a{floats(200, -3, 3), {10, 20}, DType::f32}, p{floats(200, 0.1, 4), {10, 20}, DType::f32};
  for (Input* in : {&a, &p}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a), y = get(tl, p);
    struct Case {
      const char* name;
      tl::Tile got;
      double (*f)(double, double);
      const std::vector<double>* in;
    };
    const Case cases[] = {
        {"exp2", tl::exp2(x), [](double v, double) { return std::exp2(v); }, &a.v},
        {"log2", tl::log2(y), [](double v, double) { return std::log2(v); }, &p.v},
        {"rsqrt", tl::rsqrt(y), [](double v, double) { return 1 / std::sqrt(v); }, &p.v},
        {"tanh", tl::tanh(x), [](double v, double) { return std::tanh(v); }, &a.v},
        {"sigmoid", tl::sigmoid(x), [](double v, double) { return 1 / (1 + std::exp(-v)); }, &a.v},
        {"erf", tl::erf(x), [](double v, double) { return std::erf(v); }, &a.v},
        {"pow", tl::pow(y, x), [](double v, double w) { return std::pow(v, w); }, &p.v},
        {"floor", tl::floor(x), [](double v, double) { return std::floor(v); }, &a.v},
        {"ceil", tl::ceil(x), [](double v, double) { return std::ceil(v); }, &a.v},
    };
    for (const auto& c : cases) {
      ASSERT_EQ(c.got.dtype(), DType::f32);
      for (int i = 0; i < 200; ++i) {
        const double want = c.f((*c.in)[i], a.v[i]);
        // f32 arithmetic, a handful of roundings; log2 near 1 and erf/tanh near 0 keep
        // relative accuracy, floor/ceil are exact.
        if (std::abs(want) < 1e-3) continue;
        EXPECT_LT(rel(c.got.at(i), want), 4e-6) << c.name << "(" << (*c.in)[i] << ")";
      }
    }
    EXPECT_LT(rel(tl::pow(y, 2.5).at(3), std::pow(p.v[3], 2.5)), 4e-6);
  });
}

TEST_F(Ops, ArgmaxTakesTheFirstOnTiesAndTheFirstNanAndMaxPropagatesNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Input a{{1, 5, 5, 2, -4, -4, 3, nan, 9, nan}, {2, 5}, DType::f32};
  put(sim, a);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a);
    const auto am = tl::argmax(x, 1), an = tl::argmin(x, 1);
    EXPECT_EQ(am.dtype(), DType::i32);
    EXPECT_EQ(am.at(0), 1);  // 5 at 1 and 2: the first
    EXPECT_EQ(an.at(0), 4);  // -4 at 4 (row 0 has one -4)
    EXPECT_EQ(am.at(1), 2);  // the first NaN
    EXPECT_EQ(an.at(1), 2);
    EXPECT_TRUE(std::isnan(tl::max(x, 1).at(1)));
    EXPECT_TRUE(std::isnan(tl::min(x, 1).at(1)));
    EXPECT_EQ(tl::max(x, 1).at(0), 5);
    EXPECT_TRUE(std::isnan(tl::maximum(x, tl.full({1}, 100, DType::f32)).at(1, 2)));
    const auto a0 = tl::argmax(x, 0);
    EXPECT_EQ(a0.at(0), 0);  // column 0: 1, -4
    EXPECT_EQ(a0.at(2), 1);  // column 2: 5, NaN
  });
}

TEST_F(Ops, CumsumAlongEachAxisMatchesExactSums) {
  Input a{ints(60, 1'000'000), {3, 4, 5}, DType::i32}, f{floats(60, -2, 2), {3, 4, 5}, DType::f32};
  put(sim, a);
  put(sim, f);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a), y = get(tl, f);
    for (int axis = 0; axis < 3; ++axis) {
      const auto c = tl::cumsum(x, axis), cf = tl::cumsum(y, axis), s = tl::sum(x, axis);
      ASSERT_EQ(c.shape(), x.shape());
      for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t j = 0; j < 4; ++j)
          for (std::int64_t k = 0; k < 5; ++k) {
            std::int64_t want = 0;
            double wf = 0;
            std::int64_t at[3] = {i, j, k};
            for (std::int64_t m = 0; m <= at[axis]; ++m) {
              std::int64_t idx[3] = {i, j, k};
              idx[axis] = m;
              const auto flat = (idx[0] * 4 + idx[1]) * 5 + idx[2];
              want += static_cast<std::int64_t>(a.v[flat]);
              wf += f.v[flat];
            }
            EXPECT_EQ(c.at(i, j, k), want);
            EXPECT_NEAR(cf.at(i, j, k), wf, 1e-5);
          }
      EXPECT_EQ(s.shape().rank, 2);
    }
    // sum over axis 1 of [3, 4, 5] against the last element of the cumsum
    const auto s1 = tl::sum(x, 1), c1 = tl::cumsum(x, 1);
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t k = 0; k < 5; ++k) EXPECT_EQ(s1.at(i, k), c1.at(i, 3, k));
  });
}

TEST_F(Ops, ThreeDimensionalTilesBroadcastPermuteAndJoin) {
  Input a{floats(24, -2, 2), {2, 3, 4}, DType::f32}, b{floats(4, -2, 2), {4}, DType::f32},
      c{floats(12, -2, 2), {3, 1}, DType::f32}, d{floats(8, -2, 2), {2, 1, 4}, DType::f32};
  for (Input* in : {&a, &b, &c, &d}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a), y = get(tl, b), z = tl.load(c.p, {3, 1}, DType::f32);
    const auto s = x * y + z;  // [2,3,4] * [4] + [3,1]
    const auto p = tl::permute(x, {2, 0, 1});
    const auto bt = tl::broadcast_to(y, {2, 3, 4});
    const auto j = tl::cat(x, get(tl, d), 1);
    ASSERT_EQ(p.shape(), (tl::Shape{4, 2, 3}));
    ASSERT_EQ(j.shape(), (tl::Shape{2, 4, 4}));
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t r = 0; r < 3; ++r)
        for (std::int64_t k = 0; k < 4; ++k) {
          const double v = a.v[(i * 3 + r) * 4 + k];
          EXPECT_FLOAT_EQ(s.at(i, r, k),
                          static_cast<float>(static_cast<float>(v * b.v[k]) + c.v[r]));
          EXPECT_EQ(p.at(k, i, r), v);
          EXPECT_EQ(bt.at(i, r, k), b.v[k]);
          EXPECT_EQ(j.at(i, r, k), v);
          EXPECT_EQ(j.at(i, 3, k), d.v[i * 4 + k]);
        }
    const auto m2 = tl.load(a.p, {6, 4}, DType::f32);
    const auto t = tl::trans(m2);
    for (std::int64_t r = 0; r < 6; ++r)
      for (std::int64_t k = 0; k < 4; ++k) EXPECT_EQ(t.at(k, r), a.v[r * 4 + k]);
    EXPECT_EQ(x.reshape({4, 6}).at(1, 1), a.v[7]);
  });
  EXPECT_THAT(error_of<KernelError>([&] {
                run([&](tl::Context& tl) { tl::permute(get(tl, a), {0, 0, 1}); });
              }),
              HasSubstr("not a permutation"));
  EXPECT_THAT(error_of<KernelError>(
                  [&] { run([&](tl::Context& tl) { tl::cat(get(tl, a), get(tl, b), 0); }); }),
              HasSubstr("cat: cannot join"));
}

TEST_F(Ops, ThreeDimensionalLoadAndStoreFollowThePlaneStride) {
  // A [2, 3, 4] block of a [4, 5, 6] tensor at (1, 1, 2); stored into a [2, 3, 4] tensor.
  std::vector<float> big(4 * 5 * 6);
  for (auto& v : big) v = static_cast<float>(floats(1, -5, 5)[0]);
  const Ptr src = sim.alloc(big.size() * 4), dst = sim.alloc(24 * 4);
  sim.write(src, big);
  run([&](tl::Context& tl) {
    const auto t = tl.load(src + ((1 * 5 + 1) * 6 + 2) * 4, {2, 3, 4}, DType::f32,
                           {.row_stride = 6, .plane_stride = 30});
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t r = 0; r < 3; ++r)
        for (std::int64_t k = 0; k < 4; ++k)
          EXPECT_EQ(t.at(i, r, k), big[((1 + i) * 5 + 1 + r) * 6 + 2 + k]);
    tl.store(dst, t);
  });
  const auto out = sim.read<float>(dst, 24);
  for (std::int64_t i = 0; i < 24; ++i)
    EXPECT_EQ(out[i], big[((1 + i / 12) * 5 + 1 + (i / 4) % 3) * 6 + 2 + i % 4]);
}

TEST_F(Ops, ComparisonsGiveBoolMasksThatMaskLoadsAndCombine) {
  Input a{floats(32, -1, 1), {32}, DType::f32};
  put(sim, a);
  run([&](tl::Context& tl) {
    const auto i = tl.arange(0, 32);
    const auto m = i < 20;
    EXPECT_EQ(m.dtype(), DType::boolean);
    const auto both = m & (i >= 4), either = (i < 2) | m, one = m ^ (i < 10);
    EXPECT_EQ(both.dtype(), DType::boolean);
    const auto x = tl.load(a.p, {32}, DType::f32, {.mask = &both, .other = 7});
    for (int k = 0; k < 32; ++k) {
      EXPECT_EQ(x.at(k), (k >= 4 && k < 20) ? static_cast<float>(a.v[k]) : 7.0);
      EXPECT_EQ(either.at(k), k < 20);
      EXPECT_EQ(one.at(k), k >= 10 && k < 20);
      EXPECT_EQ((~m).at(k), k >= 20);
    }
    EXPECT_EQ(tl::sum(m, 0).dtype(), DType::i32);
    EXPECT_EQ(tl::sum(m, 0).at(0), 20);
    EXPECT_EQ(tl::where(m, x, 0.0).at(25), 0);
  });
}

TEST(Float8, EveryCodeRoundTripsAndFloatsRoundToTheNearestCode) {
  for (const auto* f : {&float8::kE4M3, &float8::kE5M2}) {
    std::vector<double> finite;
    for (int c = 0; c < 256; ++c) {
      const float v = float8::decode(*f, static_cast<std::uint8_t>(c));
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(float8::decode(*f, float8::encode(*f, v))));
        continue;
      }
      EXPECT_EQ(float8::encode(*f, v), c) << c;  // -0 included
      if (std::isfinite(v)) finite.push_back(v);
    }
    std::sort(finite.begin(), finite.end());
    EXPECT_EQ(finite.back(), f->max_finite);
    // Random values in range: the nearest code, ties to even mantissa (brute-force reference).
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> d(-f->max_finite, f->max_finite);
    for (int i = 0; i < 20000; ++i) {
      const double x = i % 2 ? d(rng) : d(rng) * 1e-4;
      const float got = float8::decode(*f, float8::encode(*f, x));
      double best = std::abs(finite[0] - x);
      for (double v : finite) best = std::min(best, std::abs(v - x));
      EXPECT_EQ(std::abs(got - x), best) << x;
    }
    // Beyond range (past the rounding boundary): NaN for e4m3 (no inf), inf for e5m2.
    const double past = f->max_finite * 1.2;
    const float big = float8::decode(*f, float8::encode(*f, past));
    if (f->has_inf) {
      EXPECT_TRUE(std::isinf(big));
      EXPECT_TRUE(std::isinf(float8::decode(*f, float8::encode(*f, -INFINITY))));
    } else {
      EXPECT_TRUE(std::isnan(big));
      EXPECT_EQ(float8::encode(*f, 450.0), 0x7e);  // rounds down to 448
      EXPECT_EQ(float8::encode(*f, INFINITY), 0x7f);
    }
  }
  EXPECT_EQ(float8::decode(float8::kE4M3, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(float8::decode(float8::kE5M2, 0x01), std::ldexp(1.0f, -16));
  // Ties go to the even mantissa: 17 between 16 (0x58) and 18, 19 between 18 and 20 (0x5a).
  EXPECT_EQ(float8::encode(float8::kE4M3, 17.0), 0x58);
  EXPECT_EQ(float8::encode(float8::kE4M3, 19.0), 0x5a);
}

TEST_F(Ops, Float8TilesComputeInF32AndRoundOnce) {
  Input a{floats(40, -8, 8), {40}, DType::f8e4m3}, b{floats(40, -8, 8), {40}, DType::f8e5m2};
  for (Input* in : {&a, &b}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto x = get(tl, a), y = get(tl, b);
    const auto s = x * x, c = x.to(DType::f32), z = (x + y);
    EXPECT_EQ(s.dtype(), DType::f8e4m3);
    EXPECT_EQ(z.dtype(), DType::f32);
    for (int i = 0; i < 40; ++i) {
      const double xv = float8::decode(float8::kE4M3, float8::encode(float8::kE4M3, a.v[i]));
      const double yv = float8::decode(float8::kE5M2, float8::encode(float8::kE5M2, b.v[i]));
      EXPECT_EQ(c.at(i), xv);
      EXPECT_EQ(s.at(i), float8::decode(float8::kE4M3, float8::encode(float8::kE4M3, xv * xv)));
      EXPECT_FLOAT_EQ(z.at(i), xv + yv);
    }
  });
}

TEST_F(Ops, CastsWrapIntegersAndSaturateFloats) {
  Input a{{300, -129, 1e10, -1e10, 2.5, -2.5, 0}, {7}, DType::f32};
  Input b{{300, -129, 5, 3e9}, {4}, DType::i64};
  for (Input* in : {&a, &b}) put(sim, *in);
  run([&](tl::Context& tl) {
    const auto f8 = get(tl, a).to(DType::i8), fb = get(tl, a).to(DType::boolean);
    EXPECT_EQ(f8.at(0), 127);
    EXPECT_EQ(f8.at(1), -128);
    EXPECT_EQ(f8.at(4), 2);
    EXPECT_EQ(f8.at(5), -2);
    EXPECT_EQ(get(tl, a).to(DType::i64).at(2), 1e10);
    EXPECT_EQ(fb.at(6), 0);
    EXPECT_EQ(fb.at(5), 1);
    const auto i8 = get(tl, b).to(DType::i8), i32 = get(tl, b).to(DType::i32);
    EXPECT_EQ(i8.at(0), 44);   // 300 - 256
    EXPECT_EQ(i8.at(1), 127);  // -129 + 256
    EXPECT_EQ(i32.at(3), static_cast<std::int32_t>(static_cast<std::uint32_t>(3000000000LL)));
  });
}

TEST_F(Ops, DevicePrintWritesTheProgramAndValuesAndAssertFaultsOnTheFirstFalse) {
  ::testing::internal::CaptureStdout();
  run([&](tl::Context& tl) { tl.device_print("offs", tl.arange(0, 4)); });
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("[program (0, 0, 0) on "));
  EXPECT_THAT(out, HasSubstr("] offs: [0, 1, 2, 3]"));
  const auto msg = error_of<KernelError>([&] {
    run([&](tl::Context& tl) { tl.device_assert(tl.arange(0, 8) < 5, "offsets in range"); });
  });
  EXPECT_THAT(msg, HasSubstr("device_assert failed: \"offsets in range\" in program (0, 0, 0)"));
  EXPECT_THAT(msg, HasSubstr("element (5)"));
  run([&](tl::Context& tl) { tl.device_assert(tl.arange(0, 8) < 9, "ok"); });
}

// ---- Costs -----------------------------------------------------------------------------------

// The time of one operation on n elements of class `op`, from the spec.
emu::Tick op_time(const components::SystemConfig& c, std::uint64_t n, VectorOp op) {
  const std::uint64_t slots = n * c.pe.vector.op_cycles[static_cast<int>(op)];
  return c.pe.clock.cycles_to_ticks(emu::Cycles{
      (slots + c.pe.vector.lanes - 1) / c.pe.vector.lanes + c.pe.vector.latency_cycles});
}

// A reduction of one row of n elements as a tree (docs/hardware-model.md, "Reductions are
// trees"): lane by lane, then ceil(log2 min(n, lanes)) levels across the lanes; a scan makes
// that many passes over all its elements instead.
emu::Tick row_reduce_time(const components::SystemConfig& c, std::uint64_t n, bool scan) {
  const std::uint64_t lanes = c.pe.vector.lanes;
  const std::uint64_t r = c.pe.vector.op_cycles[static_cast<int>(VectorOp::reduce)];
  std::uint64_t depth = 0;
  while ((std::uint64_t{1} << depth) < std::min(n, lanes)) ++depth;
  const std::uint64_t levels = scan ? (n + lanes - 1) / lanes * depth * r : depth * r;
  return c.pe.clock.cycles_to_ticks(
      emu::Cycles{(n * r + lanes - 1) / lanes + levels + c.pe.vector.latency_cycles});
}

void expect_costs(const Spec& spec) {
  const auto& c = spec.config();
  Simulation sim(spec, {.timing_only = true});
  const std::int64_t n = 1000;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto f = tl.full({n}, 1.5, DType::f32);
    const auto i = tl.full({n}, 3, DType::i32);
    auto cost = [&](auto op) {
      const emu::Tick t0 = tl.now();
      op();
      return tl.now() - t0;
    };
    const std::pair<emu::Tick, VectorOp> cases[] = {
        {cost([&] { f + f; }), VectorOp::simple},
        {cost([&] { i << 2; }), VectorOp::simple},
        {cost([&] { f.to(DType::f16); }), VectorOp::convert},
        {cost([&] { f / f; }), VectorOp::divide},
        {cost([&] { tl::floordiv(i, i); }), VectorOp::divide},
        {cost([&] { i % i; }), VectorOp::divide},
        {cost([&] { tl::sqrt(f); }), VectorOp::sqrt},
        {cost([&] { tl::rsqrt(f); }), VectorOp::sqrt},
        {cost([&] { tl::exp(f); }), VectorOp::exp},
        {cost([&] { tl::log2(f); }), VectorOp::exp},
        {cost([&] { tl::tanh(f); }), VectorOp::transcendental},
        {cost([&] { tl::pow(f, f); }), VectorOp::transcendental},
        {cost([&] { tl::erf(f); }), VectorOp::transcendental},
    };
    for (const auto& [t, op] : cases)
      EXPECT_EQ(t, op_time(c, n, op)) << components::vector_op_name(op);
    const auto un = static_cast<std::uint64_t>(n);
    EXPECT_EQ(cost([&] { tl::sum(f, 0); }), row_reduce_time(c, un, false));
    EXPECT_EQ(cost([&] { tl::argmax(f, 0); }), row_reduce_time(c, un, false));
    EXPECT_EQ(cost([&] { tl::cumsum(i, 0); }), row_reduce_time(c, un, true));
    // Printing and asserting are free.
    const auto positive = i > 0;
    EXPECT_EQ(cost([&] { tl.device_assert(positive, "positive"); }), 0u);
  });
}

TEST(OpCosts, EachClassCostsItsCyclesPerElementOverLanesPlusLatency) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& v = spec.config().pe.vector;
  EXPECT_EQ(v.op_cycles[static_cast<int>(VectorOp::simple)], 1u);
  EXPECT_GT(v.op_cycles[static_cast<int>(VectorOp::exp)], 1u);  // the defaults differ
  expect_costs(spec);
}

TEST(OpCosts, ASpecOverrideOfOpCyclesChangesTheCost) {
  const Spec spec = Spec::load(spec_path("tiny.json"))
                        .with("system.pe.vector.op_cycles.exp", 13)
                        .with("system.pe.vector.op_cycles.divide", 29)
                        .with("system.pe.vector.op_cycles.simple", 2);
  EXPECT_EQ(spec.config().pe.vector.op_cycles[static_cast<int>(VectorOp::exp)], 13u);
  EXPECT_EQ(spec.config().pe.vector.op_cycles[static_cast<int>(VectorOp::simple)], 2u);
  expect_costs(spec);
}

TEST(OpCosts, ABadOpCyclesFieldIsASpecErrorNamingItsPath) {
  const Spec base = Spec::load(spec_path("tiny.json"));
  for (const auto& [path, value] : {std::pair{"system.pe.vector.op_cycles.exp", 0},
                                    std::pair{"system.pe.vector.op_cycles.sqrt", -3},
                                    std::pair{"system.pe.vector.op_cycles.expo", 4}}) {
    const auto msg = error_of<SpecError>([&] { base.with(path, value); });
    EXPECT_THAT(msg, HasSubstr(std::string(path).substr(7))) << msg;
  }
}

}  // namespace
}  // namespace cubesim
