#include "tools/cubesim/format.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

namespace cubesim::cli {

namespace {

// Three significant digits for a value in [1, 1000).
std::string three_digits(double v) {
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 100 || a == 0)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Scales `value` down by `base` until it is under `base` (or the prefixes run out).
std::string scaled(double value, double base, const std::array<const char*, 7>& prefixes,
                   std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  std::size_t i = 0;
  // Round first so 999.7 shows as "1.00 k" rather than "1000".
  while (i + 1 < prefixes.size() && std::fabs(value) >= base * 0.9995) {
    value /= base;
    ++i;
  }
  return three_digits(value) + " " + prefixes[i] + std::string(unit);
}

}  // namespace

std::string format_duration_ps(std::uint64_t ps) {
  if (ps < 1000) return std::to_string(ps) + " ps";
  static constexpr std::array<const char*, 4> units = {"ns", "us", "ms", "s"};
  double v = static_cast<double>(ps) / 1000.0;
  std::size_t i = 0;
  while (i + 1 < units.size() && v >= 999.9995) {
    v /= 1000.0;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f %s", v, units[i]);
  return buf;
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "n/a";
  if (seconds >= 1.0 || seconds == 0) return three_digits(seconds) + " s";
  if (seconds >= 1e-3) return three_digits(seconds * 1e3) + " ms";
  return three_digits(seconds * 1e6) + " us";
}

std::string format_si(double value, std::string_view unit) {
  return scaled(value, 1000.0, {"", "k", "M", "G", "T", "P", "E"}, unit);
}

std::string format_si_small(double value, std::string_view unit) {
  if (value == 0 || std::abs(value) >= 1.0) return format_si(value, unit);
  static constexpr std::pair<double, const char*> kSmall[] = {
      {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}, {1e-12, "p"}};
  for (const auto& [scale, prefix] : kSmall)
    if (std::abs(value) >= scale || scale == 1e-12)
      return format_si(value / scale, std::string(prefix) + std::string(unit));
  return format_si(value, unit);
}

std::string format_count(double value) {
  if (value >= 0 && value < 1000 && std::floor(value) == value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  std::string s = scaled(value, 1000.0, {"", "k", "M", "G", "T", "P", "E"}, "");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string format_bytes(double bytes) {
  if (bytes < 1024 && bytes >= 0 && std::floor(bytes) == bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
  }
  return scaled(bytes, 1024.0, {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}, "B");
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  // Two significant digits below 0.1%, so a small fraction does not read as nothing.
  const double pct = fraction * 100.0;
  char buf[32];
  if (pct == 0 || std::fabs(pct) >= 0.1)
    std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  else
    std::snprintf(buf, sizeof buf, "%.2g%%", pct);
  return buf;
}

std::string format_number(double x) {
  if (!std::isfinite(x)) return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace cubesim::cli
