// Large loads copy their values when first used (triton_emu/tile/deferred_loads.hpp); a kernel must
// see exactly what an eager load would have given it.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

constexpr std::int64_t kRows = 64, kCols = 128;  // 32 KiB of f32: deferred

TEST(DeferredLoads, ALoadKeepsItsValuesWhenItsRowsAreOverwrittenBeforeTheyAreUsed) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const auto x = random_values<float>(kRows * kCols, 1);
  const Ptr src = sim.alloc(kRows * kCols * 4), dst = sim.alloc(kRows * kCols * 4);
  sim.write(src, x);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto t = tl.load(src, {kRows, kCols}, DType::f32);
    tl.store(src, tl.full({kRows, kCols}, -3.0, DType::f32));
    tl.store(dst, t + 1.0);
  });
  const auto out = sim.read<float>(dst, kRows * kCols);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], x[i] + 1.0f) << i;
  for (const float v : sim.read<float>(src, kRows * kCols)) ASSERT_EQ(v, -3.0f);
}

// Program 0 loads rows (one transfer each) while program 1 stores over them: the rows that
// landed before the store read the old values, the others the new ones. A load with an
// all-ones mask is never deferred and moves the same transfers at the same times, so both
// runs must give the same tile.
std::vector<float> load_during_store(bool masked, const std::vector<float>& x) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const std::int64_t stride = 2 * kCols;  // rows apart: one transfer per row
  const Ptr src = sim.alloc(kRows * stride * 4), dst = sim.alloc(kRows * kCols * 4);
  sim.write(src, x);
  sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    const auto ones = tl.full({kRows, kCols}, 1.0, DType::i32);  // the same time in both runs
    // Both programs make a tile first, so the store and the load start together.
    const auto fill = tl.full({kRows, kCols}, -3.0, DType::f32);
    if (tl.program_id(0) == 1) {
      tl.store(src, fill, {.row_stride = stride});
      return;
    }
    const auto t = tl.load(src, {kRows, kCols}, DType::f32,
                           {.row_stride = stride, .mask = masked ? &ones : nullptr});
    tl.store(dst, t);
  });
  return sim.read<float>(dst, kRows * kCols);
}

TEST(DeferredLoads, AStoreLandingWhileTheLoadIsInFlightGivesWhatAnEagerLoadGives) {
  const auto x = random_values<float>(kRows * 2 * kCols, 2);
  const auto deferred = load_during_store(false, x), eager = load_during_store(true, x);
  EXPECT_EQ(deferred, eager);
  // The store did land mid-load: some rows are old, some new.
  int old_rows = 0, new_rows = 0;
  for (std::int64_t r = 0; r < kRows; ++r) {
    const float v = deferred[static_cast<std::size_t>(r * kCols)];
    if (v == -3.0f)
      ++new_rows;
    else if (v == x[static_cast<std::size_t>(r * 2 * kCols)])
      ++old_rows;
  }
  EXPECT_EQ(old_rows + new_rows, kRows);
  EXPECT_GT(old_rows, 0);
  EXPECT_GT(new_rows, 0);
}

}  // namespace
}  // namespace cubesim
