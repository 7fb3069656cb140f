#pragma once
// A PE's local SRAM as an account of bytes: its capacity, the bytes held now, and the most held
// at once since the last reset_peak(). Allocation never fails silently: allocate() says whether
// the bytes fit, and the caller, who knows what wanted them, reports the overflow.
//
// Whatever holds bytes of a PE's SRAM (a tile) holds the account too, by a plain (not atomic)
// reference count: only the simulation thread takes and drops references. So bytes given back
// after the PE's owner is gone (a tile kept past its Simulation) land in a live account.

#include <algorithm>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <cstdint>

namespace cubesim::components {

class Sram : public boost::intrusive_ref_counter<Sram, boost::thread_unsafe_counter> {
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

  // Who uses the SRAM now, as its user numbers them (0: nobody). Something that holds bytes is
  // stamped with it when it takes them, so one kept past its user's end is told apart from a
  // live one (triton_emu stamps its launches).
  std::uint64_t tenant = 0;

 private:
  std::uint64_t capacity_;
  std::uint64_t used_ = 0;
  std::uint64_t peak_ = 0;
};

}  // namespace cubesim::components
