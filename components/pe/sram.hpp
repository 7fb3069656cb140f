#pragma once
// A PE's local SRAM as an account of bytes: its capacity, the bytes held now, and the most held
// at once since the last reset_peak(). Allocation never fails silently: allocate() says whether
// the bytes fit, and the caller, who knows what wanted them, reports the overflow.

#include <algorithm>
#include <cstdint>

namespace cubesim::components {

class Sram {
 public:
  explicit Sram(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t used() const { return used_; }
  std::uint64_t available() const { return capacity_ - used_; }
  std::uint64_t peak() const { return peak_; }

  // Takes `bytes` if that many are available; false, taking nothing, if not.
  bool allocate(std::uint64_t bytes) {
    if (bytes > available()) return false;
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    return true;
  }
  // Gives back `bytes` taken by allocate().
  void free(std::uint64_t bytes) { used_ -= bytes; }
  // The peak measures from here (a new launch): what is held now.
  void reset_peak() { peak_ = used_; }

 private:
  std::uint64_t capacity_;
  std::uint64_t used_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace cubesim::components
