// Where a composite GEMM puts its result and what it does on the way: a strided block of a
// row-major matrix, a tile in SRAM, accumulation in SRAM across a K loop, and the epilogue
// (alpha, beta, bias, activation, cast). Numbers against an fp64 reference for f32, f16 and
// bf16; engine times derived from the spec; the faults of calls that do not fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cubesim/cubesim.hpp>
#include <functional>
#include <optional>
#include <vector>

#include "components/system/system.hpp"
#include "error_of.hpp"
#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr DType kFloatTypes[] = {DType::f32, DType::f16, DType::bf16};

// Random values of T written at p; returns them exactly, as double.
template <class T>
std::vector<double> write_random_as(Simulation& sim, Ptr p, std::int64_t n, std::uint64_t seed) {
  const auto v = random_values<T>(static_cast<std::size_t>(n), seed);
  sim.write(p, v);
  std::vector<double> d;
  for (const T x : v) d.push_back(double(float(x)));
  return d;
}

std::vector<double> write_random(Simulation& sim, Ptr p, DType t, std::int64_t n,
                                 std::uint64_t seed) {
  if (t == DType::f16) return write_random_as<half>(sim, p, n, seed);
  if (t == DType::bf16) return write_random_as<bfloat16>(sim, p, n, seed);
  return write_random_as<float>(sim, p, n, seed);
}

std::vector<double> read_values(Simulation& sim, Ptr p, DType t, std::int64_t n) {
  std::vector<double> d;
  if (t == DType::f16)
    for (const half x : sim.read<half>(p, n)) d.push_back(double(float(x)));
  else if (t == DType::bf16)
    for (const bfloat16 x : sim.read<bfloat16>(p, n)) d.push_back(double(float(x)));
  else
    for (const float x : sim.read<float>(p, n)) d.push_back(x);
  return d;
}

double unit_roundoff(DType t) {
  return t == DType::f16 ? 0x1p-11 : t == DType::bf16 ? 0x1p-8 : 0x1p-24;
}

// The f32 sum of k products has an error of at most about (k + 4) 2^-24 times the sum of their
// magnitudes (the epilogue's few f32 operations are the 4), and the cast to out_dtype one
// rounding; gelu's slope is at most 1.13. Twice that bounds the error relative to the magnitude
// of every term that went into the element.
double tolerance(std::int64_t k, DType out) {
  return 2.0 * 1.13 * ((static_cast<double>(k) + 4) * 0x1p-24 + unit_roundoff(out));
}

double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

struct Expected {
  std::vector<double> value, magnitude;
};

// alpha * (a . b) + beta * acc + bias[j], then the activation, in fp64; a is m x k, b k x n.
Expected reference(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m,
                   std::int64_t k, std::int64_t n, double alpha = 1.0,
                   const std::vector<double>* acc = nullptr, double beta = 1.0,
                   const std::vector<double>* bias = nullptr,
                   tl::Activation act = tl::Activation::none) {
  Expected e;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        sum += a[i * k + p] * b[p * n + j];
        mag += std::abs(a[i * k + p] * b[p * n + j]);
      }
      double v = alpha * sum;
      mag *= std::abs(alpha);
      if (acc) {
        v += beta * (*acc)[i * n + j];
        mag += std::abs(beta * (*acc)[i * n + j]);
      }
      if (bias) {
        v += (*bias)[j];
        mag += std::abs((*bias)[j]);
      }
      if (act == tl::Activation::relu) v = std::max(v, 0.0);
      if (act == tl::Activation::gelu) v = gelu(v);
      e.value.push_back(v);
      e.magnitude.push_back(mag);
    }
  return e;
}

void expect_close(const std::vector<double>& got, const Expected& e, std::int64_t k, DType out,
                  const std::string& what) {
  ASSERT_EQ(got.size(), e.value.size()) << what;
  const double tol = tolerance(k, out);
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::abs(got[i] - e.value[i]) / e.magnitude[i], tol)
        << what << ": element " << i << " is " << got[i] << ", expected " << e.value[i];
}

std::vector<double> tile_values(const tl::Tile& t) {
  return t.to_f64();
}

// ---- A strided block of a larger row-major matrix --------------------------------------------

TEST(CompositeOutputs, AStridedOutputWritesItsRowsAndLeavesTheGapsAlone) {
  for (const DType t : kFloatTypes) {
    Simulation sim(Spec::load(spec_path("tiny.json")));
    const std::int64_t m = 12, k = 40, n = 10, ldc = 23, col0 = 7, size = dtype_size(t);
    const Ptr pa = sim.alloc(m * k * size), pb = sim.alloc(k * n * size),
              pc = sim.alloc(m * ldc * size);
    const auto a = write_random(sim, pa, t, m * k, 1), b = write_random(sim, pb, t, k * n, 2);
    const auto before = write_random(sim, pc, t, m * ldc, 3);  // never zero: a stray write shows
    const RunResult r = sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      auto h = tl.composite(Op::gemm, tl.load(pa, {m, k}, t), tl.ref(pb, {k, n}, t),
                            pc + col0 * size, {.out_row_stride = ldc});
      tl.wait(h);
    });
    const auto c = read_values(sim, pc, t, m * ldc);
    std::vector<double> block;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < ldc; ++j) {
        if (j >= col0 && j < col0 + n)
          block.push_back(c[i * ldc + j]);
        else
          ASSERT_EQ(c[i * ldc + j], before[i * ldc + j])
              << dtype_name(t) << " gap " << i << "," << j;
      }
    expect_close(block, reference(a, b, m, k, n), k, t, std::string(dtype_name(t)));

    // The access log holds the rows, not the span: the gaps are gaps.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> writes;
    for (const auto& acc : r.accesses->accesses())
      if (acc.write) writes.emplace_back(acc.begin, acc.end);
    ASSERT_EQ(writes.size(), static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      const std::uint64_t row = pc.addr + static_cast<std::uint64_t>((i * ldc + col0) * size);
      EXPECT_EQ(writes[i].first, row);
      EXPECT_EQ(writes[i].second, row + static_cast<std::uint64_t>(n * size));
    }
    const Coverage cov = r.coverage(pc, static_cast<std::uint64_t>(m * ldc * size));
    std::uint64_t gap_bytes = 0;
    for (const auto& g : cov.gaps) gap_bytes += g.end - g.begin;
    EXPECT_EQ(gap_bytes, static_cast<std::uint64_t>(m * (ldc - n) * size));
    EXPECT_TRUE(cov.overlaps.empty());
  }
}

TEST(CompositeOutputs, ProgramsWritingNeighbouringColumnBlocksDoNotRace) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 8, k = 16, n = 4, programs = 4, ldc = n * programs;
  const Ptr pa = sim.alloc(m * k * 4), pb = sim.alloc(k * ldc * 4), pc = sim.alloc(m * ldc * 4);
  const auto a = write_random(sim, pa, DType::f32, m * k, 4);
  const auto b = write_random(sim, pb, DType::f32, k * ldc, 5);
  const RunResult r = sim.launch_on(Grid{.pes = programs, .cubes = 1}, [&](tl::Context& tl) {
    const std::int64_t col = tl.program_id(0) * n;
    auto h = tl.composite(Op::gemm, tl.ref(pa, {m, k}, DType::f32),
                          tl.ref(pb + col * 4, {k, n}, DType::f32, ldc), pc + col * 4,
                          {.out_row_stride = ldc});
    tl.wait(h);
  });
  const Coverage cov = r.coverage(pc, m * ldc * 4);
  EXPECT_TRUE(cov.exactly_once()) << r.describe(cov, pc);
  EXPECT_TRUE(r.races().empty()) << r.describe(r.races());
  expect_close(read_values(sim, pc, DType::f32, m * ldc), reference(a, b, m, k, ldc), k, DType::f32,
               "f32");
}

// ---- A result in SRAM ------------------------------------------------------------------------

TEST(CompositeOutputs, ATileResultIsReservedWhenIssuedAndHoldsTheProduct) {
  for (const DType t : kFloatTypes) {
    Simulation sim(Spec::load(spec_path("tiny.json")));
    const std::int64_t m = 16, k = 48, n = 24, size = dtype_size(t);
    const Ptr pa = sim.alloc(m * k * size), pb = sim.alloc(k * n * size);
    const auto a = write_random(sim, pa, t, m * k, 6), b = write_random(sim, pb, t, k * n, 7);
    std::vector<double> got;
    std::uint64_t reserved = 0;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto ta = tl.load(pa, {m, k}, t);
      const std::uint64_t free = tl.sram_free();
      auto h = tl.composite(Op::gemm, ta, tl.ref(pb, {k, n}, t), tl::to_tile);
      reserved = free - tl.sram_free();
      const tl::Tile c = tl.wait(h);
      EXPECT_EQ(c.shape(), (tl::Shape{m, n}));
      EXPECT_EQ(c.dtype(), t);
      got = tile_values(c);
    });
    EXPECT_EQ(reserved, static_cast<std::uint64_t>(m * n * size)) << dtype_name(t);
    expect_close(got, reference(a, b, m, k, n), k, t, std::string(dtype_name(t)));
  }
}

// ---- Accumulation in SRAM across a K loop ----------------------------------------------------

TEST(CompositeOutputs, AKLoopAccumulatesInOneF32TileAndCastsOnTheLastStep) {
  for (const DType t : kFloatTypes) {
    Simulation sim(Spec::load(spec_path("tiny.json")));
    const std::int64_t m = 16, k = 96, n = 20, kb = 16, steps = k / kb, size = dtype_size(t);
    const Ptr pa = sim.alloc(m * k * size), pb = sim.alloc(k * n * size);
    const auto a = write_random(sim, pa, t, m * k, 8), b = write_random(sim, pb, t, k * n, 9);
    std::vector<double> got;
    std::uint64_t held = 0;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const std::uint64_t free = tl.sram_free();
      // A's columns [s kb, (s + 1) kb) are a strided ref; B's rows a contiguous one.
      const auto a_k = [&](std::int64_t s) { return tl.ref(pa + s * kb * size, {m, kb}, t, k); };
      const auto b_k = [&](std::int64_t s) { return tl.ref(pb + s * kb * n * size, {kb, n}, t); };
      tl::TileHandle acc =
          tl.composite(Op::gemm, a_k(0), b_k(0), tl::to_tile, {.out_dtype = DType::f32});
      for (std::int64_t s = 1; s + 1 < steps; ++s)
        acc = tl.composite(Op::gemm, a_k(s), b_k(s), acc, {.accumulate = true});
      held = free - tl.sram_free();  // one f32 tile, added into in place
      acc = tl.composite(Op::gemm, a_k(steps - 1), b_k(steps - 1), acc,
                         {.out_dtype = t, .accumulate = true});
      const tl::Tile c = tl.wait(acc);
      EXPECT_EQ(c.dtype(), t);
      got = tile_values(c);
    });
    EXPECT_EQ(held, static_cast<std::uint64_t>(m * n * 4)) << dtype_name(t);
    expect_close(got, reference(a, b, m, k, n), k, t, std::string(dtype_name(t)));
  }
}

TEST(CompositeOutputs, AccumulatingIntoATileMakesANewTileAndLeavesTheOldOne) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 8, k = 32, n = 16;
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2), pc = sim.alloc(m * n * 4);
  const auto a = write_random(sim, pa, DType::bf16, m * k, 10);
  const auto b = write_random(sim, pb, DType::bf16, k * n, 11);
  const auto c0 = write_random(sim, pc, DType::f32, m * n, 12);
  std::vector<double> got, old;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const tl::Tile acc = tl.load(pc, {m, n}, DType::f32);
    auto h =
        tl.composite(Op::gemm, tl.ref(pa, {m, k}, DType::bf16), tl.ref(pb, {k, n}, DType::bf16),
                     acc, {.accumulate = true, .alpha = 0.5, .beta = -2.0});
    got = tile_values(tl.wait(h));
    old = tile_values(acc);
  });
  EXPECT_EQ(old, c0);
  expect_close(got, reference(a, b, m, k, n, 0.5, &c0, -2.0), k, DType::f32, "bf16 into f32");
}

// ---- Epilogues -------------------------------------------------------------------------------

TEST(CompositeOutputs, TheEpilogueChainMatchesFp64ForEveryDtypeAndActivation) {
  for (const DType t : kFloatTypes)
    for (const auto act : {tl::Activation::none, tl::Activation::relu, tl::Activation::gelu})
      for (const bool bias_ref : {false, true}) {
        Simulation sim(Spec::load(spec_path("tiny.json")));
        const std::int64_t m = 12, k = 64, n = 18, size = dtype_size(t);
        const Ptr pa = sim.alloc(m * k * size), pb = sim.alloc(k * n * size),
                  pc = sim.alloc(m * n * size), pbias = sim.alloc(n * 2);
        const auto a = write_random(sim, pa, t, m * k, 13), b = write_random(sim, pb, t, k * n, 14);
        const auto c0 = write_random(sim, pc, t, m * n, 15);
        const auto bias = write_random(sim, pbias, DType::f16, n, 16);
        sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
          tl::CompositeOptions o{.accumulate = true, .alpha = 0.75, .beta = 0.5, .activation = act};
          if (bias_ref)
            o.bias = tl.ref(pbias, {n}, DType::f16);
          else
            o.bias = tl.load(pbias, {1, n}, DType::f16);
          auto h = tl.composite(Op::gemm, tl.load(pa, {m, k}, t), tl.ref(pb, {k, n}, t), pc, o);
          tl.wait(h);
        });
        expect_close(read_values(sim, pc, t, m * n),
                     reference(a, b, m, k, n, 0.75, &c0, 0.5, &bias, act), k, t,
                     std::string(dtype_name(t)) + " activation " +
                         std::to_string(static_cast<int>(act)) + (bias_ref ? " bias ref" : ""));
      }
}

TEST(CompositeOutputs, GeluIsTheErfForm) {
  // Large products make the tanh approximation differ from erf by more than f32 rounding.
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 4, k = 1, n = 64;
  const Ptr pa = sim.alloc(m * k * 4), pb = sim.alloc(k * n * 4);
  std::vector<float> av = {1.0f, -1.0f, 0.5f, 2.0f}, bv(n);
  for (std::int64_t j = 0; j < n; ++j) bv[j] = -4.0f + 8.0f * static_cast<float>(j) / n + 0.01f;
  sim.write(pa, av);
  sim.write(pb, bv);
  std::vector<double> got;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h =
        tl.composite(Op::gemm, tl.load(pa, {m, k}, DType::f32), tl.load(pb, {k, n}, DType::f32),
                     tl::to_tile, {.activation = tl::Activation::gelu});
    got = tile_values(tl.wait(h));
  });
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double x = double(av[i]) * bv[j];
      EXPECT_NEAR(got[i * n + j], gelu(x), 1e-6 * (1 + std::abs(x))) << x;
    }
}

// ---- Engine time -----------------------------------------------------------------------------

Tick epilogue_ps(const components::SystemConfig& c, std::uint64_t elements) {
  const auto rate = static_cast<std::uint64_t>(std::llround(c.pe.gemm.epilogue_elements_per_s));
  return static_cast<Tick>((elements * emu::kPsPerSecond + rate - 1) / rate);
}

TEST(CompositeOutputs, EachEpilogueStepAddsItsTimeOverTheOutput) {
  // A slow epilogue, so its steps matter beside the compute.
  const Spec spec =
      Spec::load(spec_path("tiny.json")).with("system.pe.gemm.epilogue_Gelem_per_s", 3);
  const auto& c = spec.config();
  const std::int64_t m = 32, k = 16, n = 48;
  const components::GemmTimingModel model(c.pe.gemm);
  const Tick plain = c.pe.gemm.startup + model.compute_time(m, n, k, DType::f16);
  const auto time_with = [&](const tl::CompositeOptions& o, bool bias = false) {
    Simulation sim(spec, {.timing_only = true});
    const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2), pbias = sim.alloc(n * 4);
    Tick t = 0;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto ta = tl.load(pa, {m, k}, DType::f16), tb = tl.load(pb, {k, n}, DType::f16);
      tl::CompositeOptions opts = o;
      if (bias) opts.bias = tl.load(pbias, {n}, DType::f32);
      const Tick t0 = tl.now();
      auto h = tl.composite(Op::gemm, ta, tb, tl::to_tile, opts);
      (void)tl.wait(h);
      t = tl.now() - t0;
    });
    return t;
  };
  const Tick step = epilogue_ps(c, m * n);
  ASSERT_GT(step, 0u);
  EXPECT_EQ(time_with({}), plain);
  EXPECT_EQ(time_with({.out_dtype = DType::f32}), plain);  // the cast is free
  EXPECT_EQ(time_with({.alpha = 2.0}), plain + step);
  EXPECT_EQ(time_with({.activation = tl::Activation::relu}), plain + step);
  EXPECT_EQ(time_with({.alpha = 0.5, .activation = tl::Activation::gelu}, true), plain + 3 * step);
}

// The network time of `rows` writes of `row_bytes`, `stride` apart, issued together from PE 0
// on an idle tiny.json whose buffers were allocated as in the GEMM runs below.
Tick network_write_time(const Spec& spec, std::uint64_t a_bytes, std::uint64_t b_bytes,
                        std::uint64_t c_bytes, std::uint64_t rows, std::uint64_t row_bytes,
                        std::uint64_t stride) {
  Simulation sim(spec, {.timing_only = true});
  (void)sim.alloc(a_bytes);
  (void)sim.alloc(b_bytes);
  const Ptr c = sim.alloc(c_bytes);
  auto& sys = sim.system();
  const Tick t0 = sys.scheduler().now();
  Tick last = 0;
  for (std::uint64_t i = 0; i < rows; ++i)
    sys.network().write(0, c.addr + i * stride, row_bytes,
                        [&] { last = std::max(last, sys.scheduler().now() - t0); });
  sys.scheduler().run();
  return last;
}

TEST(CompositeOutputs, AStridedOutputIsStreamedAsItsRowsAndATileOutputNotAtAll) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  const std::int64_t m = 64, k = 8, n = 96, ldc = 160;
  const auto a_bytes = static_cast<std::uint64_t>(m * k * 2),
             b_bytes = static_cast<std::uint64_t>(k * n * 2);
  const auto c_bytes = static_cast<std::uint64_t>(m * ldc * 2);
  const auto time_to = [&](int where) {  // 0 contiguous, 1 strided, 2 tile
    Simulation sim(spec, {.timing_only = true});
    const Ptr pa = sim.alloc(a_bytes), pb = sim.alloc(b_bytes), pc = sim.alloc(c_bytes);
    Tick t = 0;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto ta = tl.load(pa, {m, k}, DType::f16), tb = tl.load(pb, {k, n}, DType::f16);
      const Tick t0 = tl.now();
      if (where == 2) {
        auto h = tl.composite(Op::gemm, ta, tb, tl::to_tile);
        (void)tl.wait(h);
      } else {
        auto h = tl.composite(Op::gemm, ta, tb, pc, {.out_row_stride = where == 1 ? ldc : 0});
        tl.wait(h);
      }
      t = tl.now() - t0;
    });
    return t;
  };
  const components::GemmTimingModel model(c.pe.gemm);
  const Tick compute = model.compute_time(m, n, k, DType::f16);
  const Tick rows = network_write_time(spec, a_bytes, b_bytes, c_bytes, m, n * 2, ldc * 2);
  const Tick whole = network_write_time(spec, a_bytes, b_bytes, c_bytes, 1, m * n * 2, 0);
  ASSERT_GT(rows, compute);  // streaming-bound, so the streaming shows
  ASSERT_GT(whole, compute);
  ASSERT_NE(rows, whole);
  EXPECT_EQ(time_to(1), c.pe.gemm.startup + rows);
  EXPECT_EQ(time_to(0), c.pe.gemm.startup + whole);
  EXPECT_EQ(time_to(2), c.pe.gemm.startup + compute);
}

TEST(CompositeOutputs, AccumulatingIntoMemoryStreamsTheOldValuesInBesideTheResultOut) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  const std::int64_t m = 64, k = 8, n = 96;
  const auto a_bytes = static_cast<std::uint64_t>(m * k * 2),
             b_bytes = static_cast<std::uint64_t>(k * n * 2),
             c_bytes = static_cast<std::uint64_t>(m * n * 2);
  Tick gemm_time = 0, network_time = 0;
  {
    Simulation sim(spec, {.timing_only = true});
    const Ptr pa = sim.alloc(a_bytes), pb = sim.alloc(b_bytes), pc = sim.alloc(c_bytes);
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto ta = tl.load(pa, {m, k}, DType::f16), tb = tl.load(pb, {k, n}, DType::f16);
      const Tick t0 = tl.now();
      auto h = tl.composite(Op::gemm, ta, tb, pc, {.accumulate = true});
      tl.wait(h);
      gemm_time = tl.now() - t0;
    });
  }
  {
    Simulation sim(spec, {.timing_only = true});
    (void)sim.alloc(a_bytes);
    (void)sim.alloc(b_bytes);
    const Ptr pc = sim.alloc(c_bytes);
    auto& sys = sim.system();
    const auto done = [&] { network_time = sys.scheduler().now(); };
    sys.network().read(0, pc.addr, c_bytes, done);
    sys.network().write(0, pc.addr, c_bytes, done);
    sys.scheduler().run();
  }
  const components::GemmTimingModel model(c.pe.gemm);
  ASSERT_GT(network_time, model.compute_time(m, n, k, DType::f16));
  EXPECT_EQ(gemm_time, c.pe.gemm.startup + network_time);
}

TEST(CompositeOutputs, AKLoopInSramTakesTheSumOfItsEngineJobs) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  const std::int64_t m = 32, n = 32, kb = 64, steps = 5;
  Simulation sim(spec, {.timing_only = true});
  const Ptr pa = sim.alloc(m * kb * 2), pb = sim.alloc(kb * n * 2);
  Tick total = 0;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto ta = tl.load(pa, {m, kb}, DType::f16), tb = tl.load(pb, {kb, n}, DType::f16);
    const auto zeros = tl.zeros({m, n}, DType::f32);
    const Tick t0 = tl.now();
    tl::TileHandle acc = tl.composite(Op::gemm, ta, tb, zeros, {.accumulate = true});
    for (std::int64_t s = 1; s + 1 < steps; ++s)
      acc = tl.composite(Op::gemm, ta, tb, acc, {.accumulate = true});
    acc = tl.composite(
        Op::gemm, ta, tb, acc,
        {.out_dtype = DType::f16, .accumulate = true, .activation = tl::Activation::relu});
    (void)tl.wait(acc);
    total = tl.now() - t0;
  });
  const components::GemmTimingModel model(c.pe.gemm);
  EXPECT_EQ(total, steps * (c.pe.gemm.startup + model.compute_time(m, n, kb, DType::f16)) +
                       epilogue_ps(c, m * n));
}

// ---- Calls that do not fit -------------------------------------------------------------------

std::string fault_of(const std::function<void(tl::Context&, Ptr)>& kernel) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr p = sim.alloc(1 << 16);
  std::string msg;
  try {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) { kernel(tl, p); });
    ADD_FAILURE() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    msg = e.what();
  }
  return msg;
}

TEST(CompositeOutputs, AnEpilogueOrAccumulatorThatDoesNotFitIsAKernelFault) {
  const auto a = [](tl::Context& tl, Ptr p) { return tl.load(p, {8, 16}, DType::f16); };
  const auto b = [](tl::Context& tl, Ptr p) { return tl.ref(p, {16, 12}, DType::f16); };
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                tl::CompositeOptions o;
                o.bias = tl.load(p, {10}, DType::f32);
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile, o);
              }),
              AllOf(HasSubstr("the bias has shape [10]"), HasSubstr("N = 12 columns"),
                    HasSubstr("shape [12]")));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                tl::CompositeOptions o;
                o.bias = tl.ref(p, {12}, DType::i32);
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile, o);
              }),
              AllOf(HasSubstr("the bias is i32: an integer bias is not supported"),
                    HasSubstr("cast it to f32")));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl.zeros({8, 10}, DType::f32),
                                   {.accumulate = true});
              }),
              AllOf(HasSubstr("accumulator tile has shape [8, 10]"), HasSubstr("8 x 12"),
                    HasSubstr("shape [8, 12]")));
  EXPECT_THAT(
      fault_of([&](tl::Context& tl, Ptr p) {
        (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl.zeros({8, 12}, DType::i32),
                           {.accumulate = true});
      }),
      AllOf(HasSubstr("accumulator tile is i32 but a is f16"), HasSubstr("f32 accumulator")));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl.zeros({8, 12}, DType::f32));
              }),
              HasSubstr("without .accumulate = true"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile, {.accumulate = true});
              }),
              HasSubstr("instead of tl::to_tile"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile, {.beta = 2.0});
              }),
              HasSubstr("beta scales the accumulator"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile, {.alpha = NAN});
              }),
              HasSubstr("must be finite"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, tl.ref(p, {8, 16}, DType::i32),
                                   tl.ref(p, {16, 12}, DType::i32), tl::to_tile,
                                   {.activation = tl::Activation::relu});
              }),
              HasSubstr("integer GEMM (i32 inputs, i32 result) has no epilogue"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), p, {.out_row_stride = 11});
              }),
              AllOf(HasSubstr("out_row_stride 11"), HasSubstr("N = 12")));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile,
                                   {.out_row_stride = 20});
              }),
              HasSubstr("out_row_stride applies to a result in memory"));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                // 8 rows 8192 elements apart run past the 64 KiB buffer.
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), p, {.out_row_stride = 8192});
              }),
              HasSubstr("composite gemm output"));
}

TEST(CompositeOutputs, AResultTileThatOverflowsSramIsAKernelFault) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const std::uint64_t sram = spec.config().pe.sram_bytes;
  const std::int64_t m = 512, n = static_cast<std::int64_t>(sram / 512 / 4) + 1, k = 4;
  EXPECT_THAT(
      fault_of([&](tl::Context& tl, Ptr p) {
        (void)tl.composite(Op::gemm, tl.ref(p, {m, k}, DType::f16), tl.ref(p, {k, n}, DType::f16),
                           tl::to_tile, {.out_dtype = DType::f32});
      }),
      AllOf(HasSubstr(std::to_string(m) + " x " + std::to_string(n) + " f32 result tile"),
            HasSubstr("needs " + std::to_string(m * n * 4) + " bytes"), HasSubstr("sram_KiB")));
}

TEST(CompositeOutputs, AnAccumulatorHandleIsUsedUpByTheCompositeItIsPassedTo) {
  const auto a = [](tl::Context& tl, Ptr p) { return tl.load(p, {8, 16}, DType::f16); };
  const auto b = [](tl::Context& tl, Ptr p) { return tl.ref(p, {16, 12}, DType::f16); };
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                auto first = tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile);
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), first, {.accumulate = true});
                (void)tl.wait(first);  // its tile is second's now
              }),
              AllOf(HasSubstr("passed on as the accumulator"),
                    HasSubstr("wait on the handle that composite returned")));
  EXPECT_THAT(fault_of([&](tl::Context& tl, Ptr p) {
                auto first = tl.composite(Op::gemm, a(tl, p), b(tl, p), tl::to_tile);
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), first, {.accumulate = true});
                (void)tl.composite(Op::gemm, a(tl, p), b(tl, p), first, {.accumulate = true});
              }),
              HasSubstr("already passed to a later composite"));
}

TEST(CompositeOutputs, ADtypeWithoutARateInTheSpecNamesTheFieldToAdd) {
  // tiny.json gives the GEMM engine rates for f16, bf16, f32 and i32 only.
  for (const DType t : {DType::f8e4m3, DType::i8}) {
    const std::string msg = fault_of([&](tl::Context& tl, Ptr p) {
      (void)tl.composite(Op::gemm, tl.load(p, {8, 16}, t), tl.ref(p, {16, 12}, t), tl::to_tile);
    });
    const std::string name(dtype_name(t));
    EXPECT_THAT(msg,
                AllOf(HasSubstr("no " + name + " rate"),
                      HasSubstr("system.pe.gemm.peak_TFLOPS." + name), HasSubstr("does not give")))
        << dtype_name(t);
  }
}

TEST(CompositeOutputs, AProgramWaitsOnlyOnItsOwnCompositesHandles) {
  // Program 0 hands its handles to program 1 through the host (the kernel's captures): waiting
  // on them would tie program 1 to program 0's engine, which no hardware does.
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr p = sim.alloc(1 << 16);
  tl::Handle to_memory;
  tl::TileHandle to_tile;
  for (const bool tile : {false, true}) {
    const std::string msg = error_of<KernelError>([&] {
      sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
        if (tl.program_id() == 0) {
          const tl::Tile a = tl.load(p, {8, 16}, DType::f16);
          const tl::Ref b = tl.ref(p, {16, 12}, DType::f16);
          if (tile)
            to_tile = tl.composite(Op::gemm, a, b, tl::to_tile);
          else
            to_memory = tl.composite(Op::gemm, a, b, p + 8192);
        }
        tl.barrier();
        if (tl.program_id() == 1) {
          if (tile)
            (void)tl.wait(to_tile);
          else
            tl.wait(to_memory);
        }
      });
    });
    EXPECT_THAT(msg, AllOf(HasSubstr("wait on sip0.cube0.pe1"),
                           HasSubstr("belongs to sip0.cube0.pe0's composite")))
        << (tile ? "to a tile" : "to memory");
    to_memory = {};
    to_tile = {};
  }
  // Still usable; a handle kept past its launch is refused in the next one.
  EXPECT_NO_THROW(sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    to_memory = tl.composite(Op::gemm, tl.load(p, {8, 16}, DType::f16),
                             tl.ref(p, {16, 12}, DType::f16), p + 8192);
    tl.wait(to_memory);
  }));
  EXPECT_THAT(error_of<KernelError>([&] {
                sim.launch_on(Grid{.pes = 1, .cubes = 1},
                              [&](tl::Context& tl) { tl.wait(to_memory); });
              }),
              HasSubstr("the handle comes from a composite of an earlier launch"));
}

}  // namespace
}  // namespace cubesim
