#pragma once
// tl.atomic_add, _max, _min, _xchg and _cas on f32, i32 and i64 words of HBM: one request per
// run of words on one cube and channel, at most a packet, done by the memory controller's
// atomic unit (ops/atomic_unit.hpp has its timing); each returns the old values.

#include <cstdint>

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::ops {

// One per element of `values`, at `ptr` laid out as `options` says (cas: where the word equals
// `compare`'s element); the old values as a tile of the values' shape and dtype.
tl::Tile atomic_tile(detail::Program& program, tl::AtomicOp op, Ptr ptr, const tl::Tile* compare,
                     const tl::Tile& values, const tl::AtomicOptions& options);
// One word of type 0 f32, 1 i32, 2 i64, its bits in the low bytes; the old bits.
std::uint64_t atomic_bits(detail::Program& program, tl::AtomicOp op, Ptr ptr, int type,
                          std::uint64_t compare, std::uint64_t value);

}  // namespace cubesim::ops
