// run_reporting (emu/progress.hpp): a run reports while it goes and once at its end, with the
// simulated time and events it has run so far, and stops for the same reasons Scheduler::run
// does.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "emu/errors.hpp"
#include "emu/progress.hpp"

namespace cubesim::emu {
namespace {

// A process that waits `steps` times, one ns each: one event per step.
void stepper(Scheduler& s, int steps, int& done) {
  s.spawn("stepper", [&s, steps, &done] {
    for (int i = 0; i < steps; ++i) {
      s.wait_for(1'000);
      ++done;
    }
  });
}

TEST(Progress, AReportingRunReportsEverySliceAndOnceAtTheEnd) {
  Scheduler s;
  constexpr int kSteps = 1'000'000;  // several slices of events
  int done = 0;
  stepper(s, kSteps, done);
  std::vector<Progress> seen;
  const ProgressFn report = [&seen](const Progress& p) { seen.push_back(p); };
  const RunResult r = run_reporting(s, {.report = &report,
                                        .what = "steps",
                                        .unit = "steps",
                                        .total = kSteps,
                                        .done = [&done] { return std::uint64_t(done); },
                                        .interval = std::chrono::milliseconds(0)});
  EXPECT_EQ(r.reason, StopReason::idle);
  ASSERT_GE(seen.size(), 3u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].what, "steps");
    EXPECT_EQ(seen[i].total, std::uint64_t(kSteps));
    EXPECT_EQ(seen[i].finished, i + 1 == seen.size());
    // Each step's event advances time by 1 ns, so time and steps done agree with the events.
    EXPECT_EQ(seen[i].simulated, seen[i].done * 1'000);
    if (i > 0) {
      EXPECT_GT(seen[i].events, seen[i - 1].events);
      EXPECT_GE(seen[i].elapsed_s, seen[i - 1].elapsed_s);
    }
  }
  EXPECT_EQ(seen.back().done, std::uint64_t(kSteps));
  EXPECT_EQ(seen.back().simulated, r.time);
  EXPECT_EQ(seen.back().events, r.events);
}

TEST(Progress, ARunWithoutACallbackOrTooShortToReportSaysNothing) {
  for (const bool with_callback : {false, true}) {
    Scheduler s;
    int done = 0, reports = 0;
    stepper(s, 1'000, done);
    const ProgressFn report = [&reports](const Progress&) { ++reports; };
    run_reporting(s, {.report = with_callback ? &report : nullptr, .what = "short"});
    EXPECT_EQ(done, 1'000);
    EXPECT_EQ(reports, 0);  // a run shorter than the interval reports nothing, not even its end
  }
}

TEST(Progress, ItStopsAtTheCallersLimitsAndPassesErrorsOnAfterAFinalReport) {
  Scheduler s;
  int done = 0;
  stepper(s, 1'000'000, done);
  int finals = 0;
  const ProgressFn report = [&finals](const Progress& p) { finals += p.finished; };
  const RunResult r =
      run_reporting(s, {.report = &report, .interval = std::chrono::milliseconds(0)},
                    RunLimits{.max_events = 600'000});
  EXPECT_EQ(r.reason, StopReason::event_limit);
  EXPECT_EQ(r.events, 600'000u);
  EXPECT_EQ(finals, 1);

  Scheduler failing;
  failing.spawn("p", [&failing] {
    for (int i = 0; i < 700'000; ++i) failing.wait_for(1);
    throw std::runtime_error("broken");
  });
  finals = 0;
  EXPECT_THROW(
      run_reporting(failing, {.report = &report, .interval = std::chrono::milliseconds(0)}),
      ProcessError);
  EXPECT_EQ(finals, 1);
}

}  // namespace
}  // namespace cubesim::emu
