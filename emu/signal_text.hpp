#pragma once
// Text a signal handler writes: built in a fixed buffer, without allocation or stdio (neither is
// async-signal-safe), and written to stderr with one write(2). Text past the buffer is dropped.

#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "emu/time.hpp"

namespace cubesim::emu::detail {

struct SignalText {
  char text[2048];
  std::size_t len = 0;

  void add(const char* s) {
    while (s != nullptr && *s != '\0' && len + 1 < sizeof text) text[len++] = *s++;
  }
  void add(std::uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && len + 1 < sizeof text) text[len++] = digits[--n];
  }
  void add_hex(std::uintptr_t v) {
    add("0x");
    char digits[2 * sizeof v];
    int n = 0;
    do digits[n++] = "0123456789abcdef"[v % 16];
    while ((v /= 16) != 0);
    while (n > 0 && len + 1 < sizeof text) text[len++] = digits[--n];
  }
  // Simulated time in the largest unit it reaches (ps, ns, us, ms, s), three decimals.
  void add_time(Tick ps) {
    static constexpr const char* units[] = {" ps", " ns", " us", " ms", " s"};
    Tick scale = 1;
    int unit = 0;
    while (unit < 4 && ps / scale >= 1000) scale *= 1000, ++unit;
    add(ps / scale);
    if (unit > 0) {
      const Tick millis = ps % scale / (scale / 1000);
      add(".");
      if (millis < 100) add("0");
      if (millis < 10) add("0");
      add(millis);
    }
    add(units[unit]);
  }
  void write_to_stderr() const {
    std::size_t done = 0;
    while (done < len) {
      const ssize_t n = ::write(STDERR_FILENO, text + done, len - done);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }
};

}  // namespace cubesim::emu::detail
