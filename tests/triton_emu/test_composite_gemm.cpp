// Composite GEMM numerics through the engine: f16 operands (tiles and refs) against an fp64
// reference, and the shared f16 -> f32 operand cache seeing writes made between GEMMs.
#include <gtest/gtest.h>

#include <cmath>
#include <cubesim/cubesim.hpp>
#include <stdexcept>

#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

// f16 inputs are exact in f32; the f32 sum of K products has a relative error of about
// K * 2^-24, and the f16 result adds one rounding of 2^-11: 1e-3 bounds both at K = 64
// (relative to the sum of |products|, so cancellation cannot inflate it).
void expect_gemm(const std::vector<half>& a, const std::vector<half>& b, const std::vector<half>& c,
                 std::int64_t m, std::int64_t k, std::int64_t n) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = double(float(a[i * k + p])) * double(float(b[p * n + j]));
        ref += x;
        mag += std::abs(x);
      }
      ASSERT_LT(std::abs(double(float(c[i * n + j])) - ref) / mag, 1e-3) << i << "," << j;
    }
}

TEST(CompositeGemm, F16TileTimesRefMatchesFp64) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 32, k = 64, n = 48;
  const auto a = random_values<half>(m * k, 1), b = random_values<half>(k * n, 2);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2), pc = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h =
        tl.composite(Op::gemm, tl.load(pa, {m, k}, DType::f16), tl.ref(pb, {k, n}, DType::f16), pc);
    tl.wait(h);
  });
  expect_gemm(a, b, sim.read<half>(pc, m * n), m, k, n);
}

TEST(CompositeGemm, AWriteBetweenTwoGemmsIsSeenByTheSecond) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 16, k = 64, n = 16;
  const auto a = random_values<half>(m * k, 3), b1 = random_values<half>(k * n, 4),
             b2 = random_values<half>(k * n, 5);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2);
  const Ptr c1 = sim.alloc(m * n * 2), c2 = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b1);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto ta = tl.load(pa, {m, k}, DType::f16);
    auto h = tl.composite(Op::gemm, ta, tl.ref(pb, {k, n}, DType::f16), c1);
    tl.wait(h);
  });
  sim.write(pb, b2);  // the same bytes, new values: the cached f32 copy of B is stale now
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h =
        tl.composite(Op::gemm, tl.load(pa, {m, k}, DType::f16), tl.ref(pb, {k, n}, DType::f16), c2);
    tl.wait(h);
  });
  expect_gemm(a, b1, sim.read<half>(c1, m * n), m, k, n);
  expect_gemm(a, b2, sim.read<half>(c2, m * n), m, k, n);
}

TEST(CompositeGemm, TransposedBAndF32OutputAndAccumulate) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 8, k = 32, n = 12;
  const auto a = random_values<half>(m * k, 6),
             bt = random_values<half>(n * k, 7);  // B stored N x K
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(n * k * 2), pc = sim.alloc(m * n * 4);
  sim.write(pa, a);
  sim.write(pb, bt);
  std::vector<float> init(m * n, 0.75f);
  sim.write(pc, init);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h = tl.composite(Op::gemm, tl.ref(pa, {m, k}, DType::f16), tl.ref(pb, {n, k}, DType::f16),
                          pc, {.trans_b = true, .out_dtype = DType::f32, .accumulate = true});
    tl.wait(h);
  });
  const auto c = sim.read<float>(pc, m * n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0.75, mag = 0.75;
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = double(float(a[i * k + p])) * double(float(bt[j * k + p]));
        ref += x;
        mag += std::abs(x);
      }
      EXPECT_LT(std::abs(c[i * n + j] - ref) / mag, 1e-5);
    }
}

// GEMMs whose operands are in memory are computed late and together (held_gemms.hpp); a
// kernel must see the same memory as if each had been computed when its engine started.
TEST(CompositeGemm, LoadsAndStoresAfterAWaitSeeTheResultAndOverwriteIt) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 16, k = 64, n = 16;
  const auto a = random_values<half>(m * k, 8), b = random_values<half>(k * n, 9);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2);
  const Ptr pc = sim.alloc(m * n * 2), copy = sim.alloc(m * n * 2), pd = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto ta = tl.load(pa, {m, k}, DType::f16);
    auto h1 = tl.composite(Op::gemm, ta, tl.ref(pb, {k, n}, DType::f16), pc);
    tl.wait(h1);
    tl.store(copy, tl.load(pc, {m, n}, DType::f16));  // the kernel reads the result back
    auto h2 = tl.composite(Op::gemm, ta, tl.ref(pb, {k, n}, DType::f16), pd);
    tl.wait(h2);
    tl.store(pd, tl.full({m, n}, 3.0, DType::f16));  // a store after the wait wins
  });
  expect_gemm(a, b, sim.read<half>(copy, m * n), m, k, n);
  expect_gemm(a, b, sim.read<half>(pc, m * n), m, k, n);
  for (const half x : sim.read<half>(pd, m * n)) ASSERT_EQ(float(x), 3.0f);
}

TEST(CompositeGemm, AStoreToAnOperandWhileTheGemmRunsDoesNotChangeItsResult) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 16, k = 64, n = 16;
  const auto a = random_values<half>(m * k, 10), b = random_values<half>(k * n, 11);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2), pc = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    auto h =
        tl.composite(Op::gemm, tl.ref(pa, {m, k}, DType::f16), tl.ref(pb, {k, n}, DType::f16), pc);
    tl.store(pb, tl.full({k, n}, -2.0, DType::f16));  // the engine read B when it started
    tl.wait(h);
  });
  expect_gemm(a, b, sim.read<half>(pc, m * n), m, k, n);
}

TEST(CompositeGemm, ProgramsSharingOperandBlocksEachGetTheirOwnProduct) {
  // Four programs, each two row blocks of A times its own column block of B: the ADR's
  // sharding in small, whose eight products settle as one GEMM.
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 32, k = 64, n = 64, bm = 16, bn = 16;
  const auto a = random_values<half>(m * k, 12), b = random_values<half>(k * n, 13);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2), pc = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b);
  sim.launch_on(Grid{.pes = 4, .cubes = 1}, [&](tl::Context& tl) {
    const std::int64_t col = tl.program_id(0) * bn;
    const auto tb = tl.ref(pb + col * 2, {k, bn}, DType::f16, n);
    for (std::int64_t row = 0; row < m; row += bm) {
      const auto ta = tl.load(pa + row * k * 2, {bm, k}, DType::f16);
      // Program p's columns of C, m x bn, contiguous at pc + p * m * bn.
      auto h = tl.composite(Op::gemm, ta, tb, pc + (col * m + row * bn) * 2);
      tl.wait(h);
    }
  });
  const auto out = sim.read<half>(pc, m * n);
  std::vector<half> c(m * n);
  for (std::int64_t p = 0; p < n / bn; ++p)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < bn; ++j) c[i * n + p * bn + j] = out[(p * m + i) * bn + j];
  expect_gemm(a, b, c, m, k, n);
}

TEST(CompositeGemm, AFaultLeavesTheGemmsThatFinishedWrittenAndNoOthers) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t m = 16, k = 64, n = 16;
  const auto a = random_values<half>(m * k, 14), b = random_values<half>(k * n, 15);
  const Ptr pa = sim.alloc(m * k * 2), pb = sim.alloc(k * n * 2);
  const Ptr done = sim.alloc(m * n * 2), running = sim.alloc(m * n * 2);
  sim.write(pa, a);
  sim.write(pb, b);
  const std::vector<half> sentinel(m * n, half(0.5f));
  sim.write(running, sentinel);
  EXPECT_THROW(sim.launch_on(Grid{.pes = 1, .cubes = 1},
                             [&](tl::Context& tl) {
                               const auto ra = tl.ref(pa, {m, k}, DType::f16);
                               const auto rb = tl.ref(pb, {k, n}, DType::f16);
                               auto h = tl.composite(Op::gemm, ra, rb, done);
                               tl.wait(h);
                               auto never = tl.composite(Op::gemm, ra, rb, running);
                               throw std::runtime_error("the kernel gives up");
                             }),
               KernelError);
  expect_gemm(a, b, sim.read<half>(done, m * n), m, k, n);
  EXPECT_EQ(sim.read<half>(running, m * n), sentinel);
}

}  // namespace
}  // namespace cubesim
