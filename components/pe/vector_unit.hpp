#pragma once
// A PE's vector unit, which costs element-wise tile math: `lanes` element operations per cycle,
// plus the pipeline latency once per operation (system.pe.vector):
//
//   cycles(n) = ceil(n / lanes) + latency_cycles,   time(n) = cycles(n) at the PE clock
//
// Every PE's unit is alike, so the system holds one. The caller decides what an operation is
// (triton_emu charges one per TL call on a tile, n = its elements).

#include <cstdint>

#include "components/system_config.hpp"

namespace cubesim::components {

class VectorUnit {
 public:
  // std::invalid_argument when lanes is 0.
  VectorUnit(const VectorConfig& config, Frequency clock);

  emu::Cycles cycles(std::uint64_t element_ops) const {
    return {element_ops / lanes_ + (element_ops % lanes_ != 0) + latency_cycles_};
  }
  // TimeOverflow when the time does not fit a Tick.
  Tick time(std::uint64_t element_ops) const { return clock_.cycles_to_ticks(cycles(element_ops)); }

  std::uint64_t lanes() const { return lanes_; }
  std::uint64_t latency_cycles() const { return latency_cycles_; }
  Frequency clock() const { return clock_; }

 private:
  std::uint64_t lanes_;
  std::uint64_t latency_cycles_;
  Frequency clock_;
};

}  // namespace cubesim::components
