#pragma once
// A PE's vector unit, which costs tile math: `lanes` element slots per cycle, an operation of
// class c taking op_cycles[c] slots per element, plus the pipeline latency once per operation
// (system.pe.vector):
//
//   cycles(n, c) = ceil(n * op_cycles[c] / lanes) + latency_cycles,
//   time(n, c)   = cycles(n, c) at the PE clock
//
// Simple operations cost 1 slot per element, so cycles(n) = ceil(n / lanes) + latency_cycles.
//
// A reduction (class reduce, r = op_cycles[reduce]) of `outer` x `inner` runs of `len`
// elements, along an axis whose runs are `inner` elements apart, is costed as a tree:
//   elements combined lane by lane: ceil(outer * len * inner * r / lanes)
//   along the contiguous axis (inner = 1) the lanes then combine across, ceil(log2 w) levels
//   of r cycles (w = min(len, lanes)) for every vector of lanes / w runs packed side by side;
//   a scan (cumsum) instead makes ceil(log2 w) passes over all its elements
//   across runs (inner > 1) each lane keeps its own output: no levels
// plus latency_cycles once.
// A data movement (trans, permute, broadcast_to, cat) gathers: output k is source element
// src[k]. It reads through the SRAM's banks (sram_banks of sram_bank_bytes words, linear or
// skewed): in each cycle's group of `lanes` outputs, a bank asked for k different words takes
// k cycles, so a group costs max(its lane slots, the most words one bank gives), plus
// latency_cycles once. A contiguous gather costs what cycles(n) does.
// Every PE's unit is alike, so the system holds one. The caller decides what an operation is
// (triton_emu charges one per TL call on a tile, n = its elements, c = its class).

#include <cstdint>
#include <span>

#include "components/system_config.hpp"

namespace cubesim::components {

class VectorUnit {
 public:
  // std::invalid_argument when lanes or an op's cycles is 0.
  VectorUnit(const VectorConfig& config, Frequency clock);

  emu::Cycles cycles(std::uint64_t elements, VectorOp op = VectorOp::simple) const {
    __extension__ using u128 = unsigned __int128;
    const u128 slots = u128{elements} * op_cycles_[static_cast<int>(op)];
    const u128 issue = slots / lanes_ + (slots % lanes_ != 0);
    // Past 2^64 cycles no time fits a Tick either: saturate, and time() reports the overflow.
    const u128 total = issue + latency_cycles_;
    return {total > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(total)};
  }
  // TimeOverflow when the time does not fit a Tick.
  Tick time(std::uint64_t elements, VectorOp op = VectorOp::simple) const {
    return clock_.cycles_to_ticks(cycles(elements, op));
  }
  // A reduction (or, `scan`, a cumulative one) of outer x inner runs of `len` elements, as a
  // tree (above).
  emu::Cycles reduce_cycles(std::uint64_t outer, std::uint64_t len, std::uint64_t inner,
                            bool scan) const;
  Tick reduce_time(std::uint64_t outer, std::uint64_t len, std::uint64_t inner, bool scan) const {
    return clock_.cycles_to_ticks(reduce_cycles(outer, len, inner, scan));
  }

  // A gather of elements of `element_bytes` (above); indices from `second` on are a second
  // source's (cat's), which starts at the first bank after the first source's last word.
  emu::Cycles gather_cycles(std::span<const std::int64_t> src, std::uint32_t element_bytes,
                            std::int64_t second) const;
  Tick gather_time(std::span<const std::int64_t> src, std::uint32_t element_bytes,
                   std::int64_t second) const {
    return clock_.cycles_to_ticks(gather_cycles(src, element_bytes, second));
  }
  // The bank that holds SRAM word `word`.
  std::uint64_t bank(std::uint64_t word) const {
    return (mapping_ == BankMapping::skewed ? word + word / banks_ : word) % banks_;
  }
  std::uint64_t banks() const { return banks_; }

  std::uint64_t lanes() const { return lanes_; }
  std::uint64_t latency_cycles() const { return latency_cycles_; }
  std::uint64_t op_cycles(VectorOp op) const { return op_cycles_[static_cast<int>(op)]; }
  Frequency clock() const { return clock_; }

 private:
  std::uint64_t lanes_;
  std::uint64_t latency_cycles_;
  std::array<std::uint64_t, kVectorOpCount> op_cycles_{};
  Frequency clock_;
  std::uint64_t banks_, bank_bytes_;
  BankMapping mapping_;
};

}  // namespace cubesim::components
