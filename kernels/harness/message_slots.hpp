#pragma once
// Fitting a launch's message channels to a PE's SRAM: how many slots per channel fit beside a
// kernel's data, and a launch that limits its channels to them (Simulation::limit_message_slots).

#include <cstdint>
#include <cubesim/cubesim.hpp>

namespace cubesim::kernels {

// The most slots per channel in [2, most] for which `fits(slots)` holds, `fits` growing false
// with the slots (the SRAM needed grows with them); 2 when none does (the caller's SRAM check
// then refuses the run).
template <typename Fits>
std::uint32_t most_slots_that_fit(std::uint32_t most, Fits&& fits) {
  std::uint32_t lo = 2, hi = most < 2 ? 2 : most;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Channels made while it lives take at most `most` slots (0: their class's window); lifted when
// it goes, also when the launch throws.
class MessageSlotLimit {
 public:
  MessageSlotLimit(Simulation& sim, std::uint32_t most) : sim_(sim) {
    sim_.limit_message_slots(most);
  }
  ~MessageSlotLimit() { sim_.limit_message_slots(0); }
  MessageSlotLimit(const MessageSlotLimit&) = delete;
  MessageSlotLimit& operator=(const MessageSlotLimit&) = delete;

 private:
  Simulation& sim_;
};

}  // namespace cubesim::kernels
