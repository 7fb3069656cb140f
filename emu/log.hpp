#pragma once
// Logging through spdlog. Every line carries the simulated time of the simulation running on
// the calling thread ("-" outside a run). Quiet by default: warnings and errors only.

#include <spdlog/spdlog.h>

#include "emu/time.hpp"

namespace cubesim::emu {

// The "cubesim" logger (stderr, colour when a terminal), created on first use.
spdlog::logger& log();

// Accepts trace, debug, info, warn, error, critical, off; throws std::invalid_argument otherwise.
void set_log_level(std::string_view level);

// While alive, log lines on this thread show *clock. Nests; the scheduler holds one during run().
class LogClockScope {
 public:
  explicit LogClockScope(const Tick* clock);
  ~LogClockScope();
  LogClockScope(const LogClockScope&) = delete;
  LogClockScope& operator=(const LogClockScope&) = delete;

 private:
  const Tick* previous_;
};

// The clock the innermost LogClockScope of this thread shows (nullptr outside a run).
const Tick* log_clock();

// The pattern every cubesim sink uses; "%*" is the simulated time. Exposed for tests.
std::unique_ptr<spdlog::formatter> make_log_formatter();

}  // namespace cubesim::emu
