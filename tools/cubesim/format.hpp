#pragma once
// Numbers for people: simulated time, rates and byte counts with a unit picked so the value
// reads at a glance (3 significant digits). Reports keep the exact integers.

#include <cstdint>
#include <string>
#include <string_view>

namespace cubesim::cli {

// 12345 -> "12.345 ns"; picks ps, ns, us, ms or s.
std::string format_duration_ps(std::uint64_t ps);
// Wall-clock seconds: "0.84 s", "12.3 ms".
std::string format_seconds(double seconds);
// 8.7e13, "FLOP/s" -> "87.0 TFLOP/s"; decimal prefixes k M G T P E.
std::string format_si(double value, std::string_view unit);
// The same with the prefixes below 1 too (m, u, n, p): "1.23 mJ", "4.56 uJ".
std::string format_si_small(double value, std::string_view unit);
// 4.5e6 -> "4.50 M", 512 -> "512": a count with a decimal prefix.
std::string format_count(double value);
// 13107200 -> "12.5 MiB"; binary prefixes. Exact below 1 KiB ("512 B").
std::string format_bytes(double bytes);
// 0.923 -> "92.3%".
std::string format_percent(double fraction);
// A real number for messages, 3 significant digits: 1.2e-04, 0.01, 3.5.
std::string format_number(double x);

}  // namespace cubesim::cli
