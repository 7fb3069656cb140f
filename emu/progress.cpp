#include "emu/progress.hpp"

#include <algorithm>

namespace cubesim::emu {

RunResult run_reporting(Scheduler& scheduler, const ProgressReport& report, RunLimits limits) {
  if (report.report == nullptr || !*report.report) return scheduler.run(limits);
  // Slices short enough that the wall clock is looked at a few times a second at the slowest
  // event rates, long enough that slicing costs nothing measurable.
  constexpr std::uint64_t kSlice = 1 << 18;
  using Clock = std::chrono::steady_clock;
  const auto wall0 = Clock::now();
  auto last = wall0;
  const Tick t0 = scheduler.now();
  const std::uint64_t e0 = scheduler.events_executed();
  bool reported = false;
  auto send = [&](bool finished) {
    Progress p;
    p.what = report.what;
    p.unit = report.unit;
    p.simulated = scheduler.now() - t0;
    p.events = scheduler.events_executed() - e0;
    p.elapsed_s = std::chrono::duration<double>(Clock::now() - wall0).count();
    p.done = report.done ? report.done() : 0;
    p.total = report.total;
    p.finished = finished;
    (*report.report)(p);
    reported = true;
  };
  for (;;) {
    RunLimits slice = limits;
    slice.max_events = std::min(limits.max_events, scheduler.events_executed() + kSlice);
    RunResult r{};
    try {
      r = scheduler.run(slice);
    } catch (...) {
      if (reported) send(true);
      throw;
    }
    const bool sliced = r.reason == StopReason::event_limit && r.events < limits.max_events;
    if (!sliced) {
      if (reported) send(true);
      return r;
    }
    const auto now = Clock::now();
    if (now - last >= report.interval) {
      last = now;
      send(false);
    }
  }
}

}  // namespace cubesim::emu
