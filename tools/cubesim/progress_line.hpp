#pragma once
// The progress line on stderr: what a long run, traffic run or sweep is doing, redrawn in place
// on a terminal. Off when stderr is not a terminal, or with --quiet; --progress draws it anyway
// (one line per report, for logs).

#include <chrono>
#include <string>

#include "emu/progress.hpp"

namespace cubesim::cli {

enum class ProgressMode { automatic, always, never };
void set_progress_mode(ProgressMode mode);  // from the global --quiet / --progress
ProgressMode progress_mode();

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Draws `text` unless the last drawing was less than a refresh ago (or `force`).
  void show(const std::string& text, bool force = false);
  void clear();                       // removes a line drawn in place
  void log(const std::string& text);  // a line of its own, above the progress line
  double elapsed_s() const;

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false, in_place_ = false, shown_ = false;
  Clock::time_point start_, last_{};
};

// The CLI asks for a report after every slice of events (emu/progress.hpp) and lets the line
// decide what to draw: a run long enough to report draws its first line at once with
// --progress, whatever the host's speed.
inline constexpr std::chrono::milliseconds kEveryReport{0};

// Draws a run's reports on `line`: "vector_add: simulated 1.2 ms, 35.1M events at 4.2M/s,
// 12 of 64 programs, 3.1 s". A run shorter than a second shows nothing on a terminal.
emu::ProgressFn draw_progress(ProgressLine& line, std::string prefix = "");

// One report as text (the same words, without the prefix), for sweeps' running points.
std::string describe_progress(const emu::Progress& p);

}  // namespace cubesim::cli
