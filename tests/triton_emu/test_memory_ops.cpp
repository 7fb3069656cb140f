// tl.load / tl.store / tl.ref: values, masks, strides and gathers, against host data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

TEST(MemoryOps, LoadAddStoreRoundTripsValues) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t n = 4096;
  const auto x = random_values<float>(n, 1), y = random_values<float>(n, 2);
  const Ptr px = sim.alloc(n * 4), py = sim.alloc(n * 4), pz = sim.alloc(n * 4);
  sim.write(px, x);
  sim.write(py, y);
  sim.launch([&](tl::Context& tl) {
    const std::int64_t per = n / (tl.num_programs(0) * tl.num_programs(1));
    const std::int64_t pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
    const auto a = tl.load(px + pid * per * 4, {per}, DType::f32);
    const auto b = tl.load(py + pid * per * 4, {per}, DType::f32);
    tl.store(pz + pid * per * 4, a + b);
  });
  const auto z = sim.read<float>(pz, n);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(z[i], x[i] + y[i]) << i;
}

TEST(MemoryOps, MaskedLoadGivesOtherAndMaskedStoreLeavesMemoryAlone) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const auto x = random_values<float>(64, 3);
  const Ptr px = sim.alloc(64 * 4), pz = sim.alloc(64 * 4);
  sim.write(px, x);
  const std::vector<float> before(64, 7.0f);
  sim.write(pz, before);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto offs = tl.arange(0, 64);
    const auto m = offs < 40.0;
    const auto a = tl.load(px, {64}, DType::f32, {.mask = &m, .other = -1.0});
    EXPECT_EQ(a.at(39), double(x[39]));
    EXPECT_EQ(a.at(40), -1.0);
    tl.store(pz, a * 2.0, {.mask = &m});
  });
  const auto z = sim.read<float>(pz, 64);
  for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(z[i], i < 40 ? 2 * x[i] : 7.0f) << i;
}

TEST(MemoryOps, RowStridedAndElementStridedLoadsPickTheRightElements) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t rows = 8, cols = 16;
  const auto x = random_values<float>(rows * cols, 4);
  const Ptr px = sim.alloc(rows * cols * 4);
  sim.write(px, x);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    // A 4 x 5 block starting at (2, 3), rows 16 elements apart.
    const auto block = tl.load(px + (2 * cols + 3) * 4, {4, 5}, DType::f32, {.row_stride = cols});
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) EXPECT_EQ(block.at(i, j), double(x[(2 + i) * cols + 3 + j]));
    // Column 6 as a 1D gather: every 16th element.
    const auto column = tl.load(px + 6 * 4, {rows}, DType::f32, {.col_stride = cols});
    for (int i = 0; i < rows; ++i) EXPECT_EQ(column.at(i), double(x[i * cols + 6]));
  });
}

TEST(MemoryOps, HalfPrecisionValuesSurviveLoadAndStore) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  std::vector<half> h(256);
  std::vector<bfloat16> b(256);
  const auto f = random_values<float>(256, 5);
  for (int i = 0; i < 256; ++i) {
    h[i] = half(f[i]);
    b[i] = bfloat16(f[i]);
  }
  const Ptr ph = sim.alloc(512), pb = sim.alloc(512), po = sim.alloc(1024);
  sim.write(ph, h);
  sim.write(pb, b);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto th = tl.load(ph, {256}, DType::f16);
    const auto tb = tl.load(pb, {256}, DType::bf16);
    tl.store(po, (th.to(DType::f32) + tb.to(DType::f32)));
  });
  const auto o = sim.read<float>(po, 256);
  for (int i = 0; i < 256; ++i) EXPECT_FLOAT_EQ(o[i], float(h[i]) + float(b[i])) << i;
}

TEST(MemoryOps, TimingOnlyRunsMoveNoDataButTakeTheSameTime) {
  auto run = [](bool timing_only) {
    Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = timing_only});
    const Ptr p = sim.alloc(1 << 16);
    return sim
        .launch([&](tl::Context& tl) {
          const auto t = tl.load(p + tl.program_id(0) * 4096, {1024}, DType::f32);
          tl.store(p + 32768 + tl.program_id(0) * 4096, tl::exp(t) + 1.0);
        })
        .sim_time_ps;
  };
  EXPECT_EQ(run(true), run(false));
}

}  // namespace
}  // namespace cubesim
