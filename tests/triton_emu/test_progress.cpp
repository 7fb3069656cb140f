// SimOptions::progress: a launch reports its simulated time, events and programs finished while
// it runs, and once at its end, where the figures are the launch's own.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <vector>

#include "spec_path.hpp"

namespace cubesim {
namespace {

TEST(LaunchProgress, ReportsEndWithTheLaunchsTimeAndEveryProgramFinished) {
  std::vector<emu::Progress> seen;
  SimOptions o{.timing_only = true};
  o.progress = [&seen](const emu::Progress& p) { seen.push_back(p); };
  o.progress_interval = std::chrono::milliseconds(0);
  Simulation sim(Spec::load(spec_path("tiny.json")), o);
  sim.set_kernel_name("many_loads");
  const Ptr x = sim.alloc(1 << 20);
  const RunResult r = sim.launch([&](tl::Context& tl) {
    for (int i = 0; i < 40'000; ++i) tl.load(x + (i % 64) * 256, {64}, DType::f32);
  });
  const std::uint64_t programs = r.stats.programs;
  ASSERT_GE(seen.size(), 2u) << "the launch should run several slices of events";
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].what, "many_loads");
    EXPECT_EQ(seen[i].unit, "programs");
    EXPECT_EQ(seen[i].total, programs);
    EXPECT_EQ(seen[i].finished, i + 1 == seen.size());
    if (i > 0) {
      EXPECT_GE(seen[i].simulated, seen[i - 1].simulated);
    }
  }
  EXPECT_EQ(seen.back().simulated, r.sim_time_ps);
  EXPECT_EQ(seen.back().done, programs);
  EXPECT_LT(seen.front().done, programs);

  // Without a callback (the default) nothing is reported and the launch's time is the same.
  SimOptions quiet{.timing_only = true};
  Simulation again(Spec::load(spec_path("tiny.json")), quiet);
  const Ptr y = again.alloc(1 << 20);
  const RunResult r2 = again.launch([&](tl::Context& tl) {
    for (int i = 0; i < 40'000; ++i) tl.load(y + (i % 64) * 256, {64}, DType::f32);
  });
  EXPECT_EQ(r2.sim_time_ps, r.sim_time_ps);
}

}  // namespace
}  // namespace cubesim
