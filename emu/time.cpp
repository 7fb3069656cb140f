#include "emu/time.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace cubesim::emu {
namespace {

__extension__ typedef unsigned __int128 u128;  // GCC/Clang: exact 64x64-bit products

// Rounds a non-negative finite real to the nearest integer, refusing what does not fit.
std::uint64_t round_to_u64(double x, const char* what) {
  if (std::isnan(x) || x < 0) {
    throw TimeError(fmt::format("{} must be a non-negative number, got {}", what, x));
  }
  // 2^64 is exactly representable as a double; anything at or above it cannot fit.
  if (x >= 18446744073709551616.0) {
    throw TimeError(fmt::format("{} = {} is too large to represent", what, x));
  }
  const double r = std::nearbyint(x);
  if (r >= 18446744073709551616.0) {
    throw TimeError(fmt::format("{} = {} is too large to represent", what, x));
  }
  return static_cast<std::uint64_t>(r);
}

}  // namespace

namespace detail {

void throw_unit_overflow(std::uint64_t n, const char* unit) {
  throw TimeOverflow(fmt::format("{} {} does not fit in simulated time (max {} ps, about 213 days)",
                                 n, unit, kTickMax));
}

void throw_add_overflow(Tick a, Tick b, const char* what) {
  throw TimeOverflow(fmt::format("{}: {} + {} overflows simulated time (max {} ps)", what,
                                 format_time(a), format_time(b), kTickMax));
}

void throw_mul_overflow(std::uint64_t n, Tick t, const char* what) {
  throw TimeOverflow(fmt::format("{}: {} x {} overflows simulated time (max {} ps)", what, n,
                                 format_time(t), kTickMax));
}

}  // namespace detail

Tick from_ns(double n) {
  return round_to_u64(n * 1e3, "a time in ns");
}
Tick from_us(double n) {
  return round_to_u64(n * 1e6, "a time in us");
}

std::string format_time(Tick t) {
  struct Unit {
    std::uint64_t ps;
    const char* name;
    int digits;
  };
  static constexpr Unit units[] = {
      {kPsPerSecond, "s", 12}, {1'000'000'000, "ms", 9}, {kPsPerUs, "us", 6}, {kPsPerNs, "ns", 3}};
  for (const Unit& u : units) {
    if (t >= u.ps) {
      const std::uint64_t whole = t / u.ps, frac = t % u.ps;
      if (frac == 0) return fmt::format("{} {}", whole, u.name);
      std::string f = fmt::format("{:0{}}", frac, u.digits);
      f.erase(f.find_last_not_of('0') + 1);
      return fmt::format("{}.{} {}", whole, f, u.name);
    }
  }
  return fmt::format("{} ps", t);
}

Frequency Frequency::from_hz(std::uint64_t hz) {
  if (hz == 0) throw TimeError("a clock frequency must be greater than 0 Hz");
  return Frequency(hz);
}

Frequency Frequency::from_GHz(double ghz) {
  return from_hz(round_to_u64(ghz * 1e9, "a clock frequency in GHz"));
}

Tick Frequency::period() const {
  return (kPsPerSecond + hz_ / 2) / hz_;
}

Tick Frequency::cycles_to_ticks(Cycles c) const {
  const u128 num = static_cast<u128>(c.count) * kPsPerSecond;
  const u128 ticks = (num + hz_ - 1) / hz_;
  if (ticks > kTickMax) {
    throw TimeOverflow(
        fmt::format("{} cycles at {} Hz take longer than simulated time can "
                    "represent (max {} ps, about 213 days)",
                    c.count, hz_, kTickMax));
  }
  return static_cast<Tick>(ticks);
}

Cycles Frequency::ticks_to_cycles(Tick t) const {
  return {static_cast<std::uint64_t>(static_cast<u128>(t) * hz_ / kPsPerSecond)};
}

Tick period_from_GHz(double ghz) {
  return Frequency::from_GHz(ghz).period();
}

Bandwidth Bandwidth::from_bytes_per_s(std::uint64_t bytes_per_s) {
  if (bytes_per_s == 0) throw TimeError("a bandwidth must be greater than 0 B/s");
  return Bandwidth(bytes_per_s);
}

Bandwidth Bandwidth::from_GBps(double gbps) {
  return from_bytes_per_s(round_to_u64(gbps * 1e9, "a bandwidth in GB/s"));
}

Tick Bandwidth::transfer_time_wide(std::uint64_t bytes) const {
  const u128 num = static_cast<u128>(bytes) * kPsPerSecond;
  const u128 ticks = (num + bytes_per_s_ - 1) / bytes_per_s_;
  if (ticks > kTickMax) {
    throw TimeOverflow(
        fmt::format("moving {} bytes at {} B/s takes longer than simulated time can "
                    "represent (max {} ps, about 213 days)",
                    bytes, bytes_per_s_, kTickMax));
  }
  return static_cast<Tick>(ticks);
}

}  // namespace cubesim::emu
