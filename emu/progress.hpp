#pragma once
// Progress of a long run, for whoever shows it (the CLI draws a line on a terminal). A run
// reports through a callback while it goes and once more when it ends; the simulation itself
// never writes to the terminal.
//
//   sim_options.progress = [](const emu::Progress& p) { draw(p); };
//
// run_reporting() runs a scheduler to its end in slices of events and calls the callback at
// most every `interval` of wall-clock time (and at the end, with `finished` set, when it
// reported before), so a run without a callback costs nothing more.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>

#include "emu/scheduler.hpp"

namespace cubesim::emu {

struct Progress {
  std::string_view what;     // what runs: a kernel's name, "traffic"
  Tick simulated = 0;        // simulated time since the run began
  std::uint64_t events = 0;  // events run since the run began
  double elapsed_s = 0;      // wall-clock seconds since the run began
  std::uint64_t done = 0;    // units finished (programs, messages), of
  std::uint64_t total = 0;   // this many (0: no count)
  std::string_view unit;     // "programs", "messages"
  bool finished = false;     // the run ended (the last report)
  double events_per_s() const {
    return elapsed_s > 0 ? static_cast<double>(events) / elapsed_s : 0;
  }
};

using ProgressFn = std::function<void(const Progress&)>;

struct ProgressReport {
  const ProgressFn* report = nullptr;  // null or empty: run without reporting
  std::string_view what{}, unit{};
  std::uint64_t total = 0;
  std::function<std::uint64_t()> done{};  // units finished so far (may be empty)
  std::chrono::milliseconds interval{200};
};

// Runs `scheduler` until it stops for any reason other than its event slices (see RunLimits),
// reporting as above; throws what Scheduler::run throws.
RunResult run_reporting(Scheduler& scheduler, const ProgressReport& report, RunLimits limits = {});

}  // namespace cubesim::emu
