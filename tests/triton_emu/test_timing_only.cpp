// Timing-only runs keep index math only. A mask built from it selects the same elements, so the
// time equals the functional run's; a mask computed from loaded values cannot be known there,
// and the run says so instead of guessing (which would change the simulated time).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::int64_t kN = 1000, kBlock = 256;

// Copies the elements of x that are positive (a mask from loaded values).
void copy_positive(tl::Context& tl, Ptr x, Ptr out) {
  const auto t = tl.load(x, {kBlock}, DType::f32);
  const auto positive = t > 0.0;
  tl.store(out, t, {.mask = &positive});
}

// The vector-add pattern: the mask is index math.
void copy_in_bounds(tl::Context& tl, Ptr x, Ptr out) {
  for (std::int64_t start = 0; start < kN; start += kBlock) {
    const auto offs = tl.arange(start, start + kBlock);
    const auto in_bounds = offs < double(kN);
    const auto t = tl.load(x + start * 4, {kBlock}, DType::f32, {.mask = &in_bounds});
    tl.store(out + start * 4, t, {.mask = &in_bounds});
  }
}

template <typename K>
std::uint64_t run(bool timing_only, K kernel) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = timing_only});
  const Ptr x = sim.alloc(1024 * 4), out = sim.alloc(1024 * 4);
  if (!timing_only) {
    std::vector<float> v(1024);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i % 3 == 0 ? 1.0f : -1.0f) * (1.0f + i);
    sim.write(x, v);
  }
  return sim.launch_on(Grid{.pes = 1, .cubes = 1}, kernel, x, out).sim_time_ps;
}

TEST(TimingOnly, IndexMasksGiveTheFunctionalRunsTime) {
  EXPECT_EQ(run(true, copy_in_bounds), run(false, copy_in_bounds));
}

TEST(TimingOnly, AMaskFromLoadedValuesIsAFaultThatSaysWhy) {
  (void)run(false, copy_positive);  // fine with values
  try {
    (void)run(true, copy_positive);
    FAIL() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("store"), HasSubstr("computed from loaded values"),
                                HasSubstr("timing-only"), HasSubstr("sip0.cube0.pe0")));
  }
}

}  // namespace
}  // namespace cubesim
