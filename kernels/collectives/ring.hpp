#pragma once
// Ring collectives over tl.send / tl.recv: reduce-scatter, all-gather, and all-reduce as the
// two in turn (the bandwidth-optimal algorithm NCCL calls "ring"), in one direction around the
// ring or in both at once (each half of the data one way: "bidirectional ring").
//
// The P programs of the launch sit on a ring in the order `order` gives (ring position ->
// global program id; collective.hpp makes one whose neighbours are mesh neighbours where it
// can). Each program's data is cut into P blocks, block b belonging to program b; on the ring,
// chunk c (position c's chunk) is block order[c]. With s = +1 (send to the next position) or
// -1 (to the previous), position p in step k = 0 .. P-2:
//   reduce-scatter  sends chunk p - s(k+1) (its own input at k = 0, else the partial sum it
//                   received the step before) and receives chunk p - s(k+2), adding its own
//                   input to it: after P-1 steps it holds the full sum of chunk p, its block;
//   all-gather      sends chunk p - s k (its own block at k = 0, else the one it received)
//                   and receives chunk p - s(k+1): after P-1 steps it has every block.
// A chunk larger than a slot travels as several messages ("pieces"), with up to `slots`
// messages per channel sent ahead of the receives, so the pieces of a chunk pipeline.

#include <cstdint>
#include <vector>

#include "emu/time.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/ptr.hpp"

namespace cubesim::kernels::collectives {

enum class Collective : std::uint8_t { all_reduce, reduce_scatter, all_gather };

// Where the data is while the collective runs: in the PE's SRAM (loaded before, stored after,
// neither timed) or in HBM (each step loads the input it adds and stores what is final).
enum class Buffer : std::uint8_t { sram, hbm };

// When each program began and ended the collective proper (its timed part).
struct Clock {
  std::vector<emu::Tick> begin, end;  // per global program id
  emu::Tick elapsed() const;          // max(end) - min(begin)
};

struct RingArgs {
  Collective collective = Collective::all_reduce;
  Buffer buffer = Buffer::sram;
  int directions = 1;  // 1: ring, 2: bidirectional ring
  // Program g's input at in[g] (all-reduce, reduce-scatter: its P blocks of `block` f32;
  // all-gather: its one block) and its output at out[g] (all-reduce, all-gather: P blocks;
  // reduce-scatter: one).
  std::vector<Ptr> in, out;
  std::int64_t block = 0;    // elements of a block; a multiple of `directions`
  std::int64_t piece = 0;    // elements per message at most
  std::uint32_t window = 1;  // messages per channel sent ahead of the receives
  const std::vector<std::int64_t>* order = nullptr;  // ring position -> global program id
  Clock* clock = nullptr;
};

// One program's part.
void ring(tl::Context& tl, const RingArgs& args);

}  // namespace cubesim::kernels::collectives
