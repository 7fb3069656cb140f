#pragma once
// Simulated time. Every duration and instant in cubesim is an integer count of picoseconds;
// spec values in ns, GHz and GB/s are converted here, once, and rounded once.

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cubesim::emu {

using Tick = std::uint64_t;  // picoseconds

inline constexpr Tick kTickMax = UINT64_MAX;
inline constexpr std::uint64_t kPsPerNs = 1'000;
inline constexpr std::uint64_t kPsPerUs = 1'000'000;
inline constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000;

// A conversion or sum that has no representable Tick (negative, NaN, past 2^64 ps ~ 213 days).
class TimeError : public std::domain_error {
 public:
  using std::domain_error::domain_error;
};

// A time past kTickMax (2^64 ps, about 213 days): thrown where the arithmetic happens, never
// wrapped or clamped. A layer that knows which spec field the operands came from throws it with
// that field's name (components/network/fabric.cpp names the link and its bandwidth).
class TimeOverflow : public TimeError {
 public:
  using TimeError::TimeError;
};

namespace detail {
[[noreturn]] void throw_unit_overflow(std::uint64_t n, const char* unit);
[[noreturn]] void throw_add_overflow(Tick a, Tick b, const char* what);
[[noreturn]] void throw_mul_overflow(std::uint64_t n, Tick t, const char* what);
}  // namespace detail

// Whole-unit constructors. They throw TimeOverflow instead of wrapping around. Inline: they sit on
// the hot path of every timed wait.
inline Tick ns(std::uint64_t n) {
  if (n > kTickMax / kPsPerNs) detail::throw_unit_overflow(n, "ns");
  return n * kPsPerNs;
}
inline Tick us(std::uint64_t n) {
  if (n > kTickMax / kPsPerUs) detail::throw_unit_overflow(n, "us");
  return n * kPsPerUs;
}

// Fractional spec values ("latency_ns": 0.5), rounded to the nearest picosecond; TimeError when
// negative, NaN or past kTickMax.
Tick from_ns(double n);
Tick from_us(double n);

// a + b, or TimeOverflow naming `what` when the sum would not fit in a Tick.
inline Tick checked_add(Tick a, Tick b, const char* what = "time") {
  if (b > kTickMax - a) detail::throw_add_overflow(a, b, what);
  return a + b;
}

// n * t, or TimeOverflow naming `what` when the product would not fit in a Tick.
inline Tick checked_mul(std::uint64_t n, Tick t, const char* what = "time") {
  Tick product;
  if (__builtin_mul_overflow(n, t, &product)) detail::throw_mul_overflow(n, t, what);
  return product;
}

// "12.345 ns", "3 us", "1.000001 ms": exact (no float), for messages and logs.
std::string format_time(Tick t);

// A number of clock cycles; cannot be mixed up with Ticks by accident.
struct Cycles {
  std::uint64_t count = 0;
  constexpr auto operator<=>(const Cycles&) const = default;
  constexpr Cycles operator+(Cycles o) const { return {count + o.count}; }
};

// A clock, held as an integer number of Hz. Cycles convert to Ticks exactly (rounded up once
// per conversion), so N cycles never accumulate the rounding of a rounded period.
class Frequency {
 public:
  static Frequency from_hz(std::uint64_t hz);
  static Frequency from_GHz(double ghz);  // rounded to the nearest Hz

  std::uint64_t hz() const { return hz_; }
  Tick period() const;                   // rounded to the nearest ps, for display
  Tick cycles_to_ticks(Cycles c) const;  // ceil(c * 1e12 / hz); TimeOverflow past kTickMax
  Cycles ticks_to_cycles(Tick t) const;  // floor(t * hz / 1e12): whole cycles elapsed

 private:
  explicit Frequency(std::uint64_t hz) : hz_(hz) {}
  std::uint64_t hz_;
};

// Clock period of a frequency given in GHz, rounded to the nearest ps (1.5 GHz -> 667 ps).
Tick period_from_GHz(double ghz);

// A bandwidth, held as an integer number of bytes per second (1 GB/s = 1e9 B/s).
class Bandwidth {
 public:
  static Bandwidth from_bytes_per_s(std::uint64_t bytes_per_s);
  static Bandwidth from_GBps(double gbps);  // rounded to the nearest B/s

  std::uint64_t bytes_per_s() const { return bytes_per_s_; }
  // ceil(bytes * 1e12 / bytes_per_s), exact; TimeOverflow past kTickMax. Up to 18 MB the product
  // fits 64 bits (the hot case: a 128-bit division is a slow library call).
  Tick transfer_time(std::uint64_t bytes) const {
    if (bytes <= kMaxBytes64) {
      const std::uint64_t num = bytes * kPsPerSecond;
      return num / bytes_per_s_ + (num % bytes_per_s_ != 0);
    }
    return transfer_time_wide(bytes);
  }

 private:
  static constexpr std::uint64_t kMaxBytes64 = UINT64_MAX / kPsPerSecond;
  Tick transfer_time_wide(std::uint64_t bytes) const;
  explicit Bandwidth(std::uint64_t b) : bytes_per_s_(b) {}
  std::uint64_t bytes_per_s_;
};

}  // namespace cubesim::emu
