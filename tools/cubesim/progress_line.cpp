#include "tools/cubesim/progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "emu/time.hpp"

namespace cubesim::cli {

namespace {

ProgressMode g_mode = ProgressMode::automatic;

// Counts as "35.1M": a progress line is read at a glance.
std::string count_text(double v) {
  if (v >= 1e9) return fmt::format("{:.1f}G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// Simulated time to four figures ("142.6 us").
std::string time_text(emu::Tick ps) {
  const double t = static_cast<double>(ps);
  if (t >= 1e12) return fmt::format("{:.4g} s", t / 1e12);
  if (t >= 1e9) return fmt::format("{:.4g} ms", t / 1e9);
  if (t >= 1e6) return fmt::format("{:.4g} us", t / 1e6);
  if (t >= 1e3) return fmt::format("{:.4g} ns", t / 1e3);
  return fmt::format("{} ps", ps);
}

}  // namespace

void set_progress_mode(ProgressMode mode) {
  g_mode = mode;
}
ProgressMode progress_mode() {
  return g_mode;
}

ProgressLine::ProgressLine() : start_(Clock::now()) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  enabled_ = g_mode == ProgressMode::always || (g_mode == ProgressMode::automatic && tty);
  in_place_ = tty;
}

double ProgressLine::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void ProgressLine::show(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = Clock::now();
  // A terminal is redrawn a few times a second; a log gets a line a second.
  const auto refresh = in_place_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000);
  if (!force && shown_ && now - last_ < refresh) return;
  last_ = now;
  std::fputs((in_place_ ? "\r" + text + "\033[K" : text + "\n").c_str(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  if (in_place_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
  shown_ = false;
}

void ProgressLine::log(const std::string& text) {
  const bool was = shown_;
  clear();
  std::fputs((text + "\n").c_str(), stderr);
  std::fflush(stderr);
  if (was) last_ = {};  // redraw at the next report
}

std::string describe_progress(const emu::Progress& p) {
  std::string s = "simulated " + time_text(p.simulated) + ", " +
                  count_text(static_cast<double>(p.events)) + " events at " +
                  count_text(p.events_per_s()) + "/s";
  if (p.total != 0)
    s += fmt::format(", {} of {} {}", p.done, p.total, p.unit);
  else if (!p.unit.empty())
    s += fmt::format(", {} {}", p.done, p.unit);
  return s;
}

emu::ProgressFn draw_progress(ProgressLine& line, std::string prefix) {
  if (!line.enabled()) return {};
  return [&line, prefix = std::move(prefix)](const emu::Progress& p) {
    if (p.finished) {
      line.clear();
      return;
    }
    // On a terminal a short run stays quiet rather than flash a line.
    if (progress_mode() == ProgressMode::automatic && p.elapsed_s < 1.0) return;
    line.show(prefix + std::string(p.what) + ": " + describe_progress(p) +
              fmt::format(", {:.1f} s", p.elapsed_s));
  };
}

}  // namespace cubesim::cli
