#pragma once
// Atomic read-modify-writes on HBM words (tl.atomic_add / max / min / xchg / cas), done by the
// memory controller of the word's channel, not by the PE.
//
// Time of one request (a run of words on one cube and channel, at most a packet):
//   1. the operands travel to the controller as a write's data does (links, HBM channel, then
//      the access latency): the network's write_posted() (the reply below is their response);
//   2. the channel's atomic unit serves requests one at a time in order of arrival, each for
//      system.cube.hbm.atomic_ns + bytes / channel bandwidth (reading the old words; their new
//      values are written as step 1 counted);
//   3. the old values go back to the PE as a packet of their own from the controller's router
//      (Network::reply), over the route a read's data takes, occupying its links: the request
//      completes when they arrive.
// So requests to one channel from many PEs queue at its unit, which is what makes a contended
// counter slow; requests to different channels proceed in parallel.
//
// Values: each word's new value is computed and stored when its request reaches the unit, so
// the order of arrival is the order of the read-modify-writes. Timing-only runs have no
// memory values; there the words atomics touch keep their values in a shadow (starting from
// zero, like memory never written), so a counter built on atomics still counts.

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "components/system/system.hpp"
#include "triton_emu/api/vocabulary.hpp"

namespace cubesim::detail {

class FunctionalMemory;

using tl::AtomicOp;
enum class AtomicType : std::uint8_t { f32, i32, i64 };
const char* atomic_op_name(AtomicOp op);     // "atomic_add"
const char* atomic_type_name(AtomicType t);  // "f32"
constexpr std::uint32_t atomic_size(AtomicType t) {
  return t == AtomicType::i64 ? 8 : 4;
}

class Atomics {
 public:
  explicit Atomics(components::System& sys);

  // A launch starts: every atomic unit is idle.
  void begin_launch();

  // One request: `bytes / atomic_size(type)` words at `addr`; `operand` (and, for cas, `compare`)
  // hold their values, `old` receives the values before the operation. The buffers must stay
  // valid until `done` runs (when the old values are back at `pe`). `memory` is nullptr in
  // timing-only runs (values come from the shadow). The range must be mapped and aligned.
  void issue(std::uint32_t pe, AtomicOp op, AtomicType type, std::uint64_t addr,
             std::uint64_t bytes, const std::byte* operand, const std::byte* compare,
             std::byte* old, FunctionalMemory* memory, std::function<void()> done);

 private:
  void apply(AtomicOp op, AtomicType type, std::uint64_t addr, std::uint64_t bytes,
             const std::byte* operand, const std::byte* compare, std::byte* old,
             FunctionalMemory* memory);

  components::System& sys_;
  emu::Tick unit_time_;                                      // atomic_ns
  std::vector<emu::Tick> unit_free_;                         // per (global cube, channel)
  std::unordered_map<std::uint64_t, std::uint32_t> shadow_;  // timing-only: 4-byte words
};

}  // namespace cubesim::detail
