#pragma once
// A collective as a schedule of messages: the vocabulary the executor that runs a schedule over
// tl.send / tl.recv (kernels/collectives/executor.hpp) and the alpha-beta model that times one
// from the spec (alpha_beta_model.hpp) share, and the order both give a step's messages.
//
// Each program has a working vector cut into segments (f32 ranges); a segment may start from
// the program's input and may end in its output. The program goes through steps; in a step it
// sends some segments to peers and receives some segments from peers, either replacing the
// segment or adding to it. A send sends the segment's value at the start of the step, unless
// the step also receives into that segment: then it forwards what it received (after every
// receive of the step into it), piece by piece, which pipelines chains and trees. Segments
// larger than a message travel as pieces of at most `piece` elements.
//
// Within a step a program issues its sends and receives in one fixed order (step_actions): the
// pieces of its sends, and of its receives, piece index first, then the peers in turn (each
// peer's ops in op order), with the sends running at most `window` messages per peer ahead of
// the receives. Both ends of a channel
// list its messages in the same order, and no program needs more slots than a channel has
// before it receives, so a schedule whose every send has its receive in the same step never
// deadlocks.
//
// Segments smaller than a message go together: consecutive ops of a step of one kind with one
// peer (or switch), each a single piece, share one message of at most `message` elements (a
// gather on the sender, a scatter on the receiver; one reduction in the switch), as a library
// packs a chunk of many blocks into one transfer instead of a transfer per block. A step that
// forwards groups nothing. Both ends group alike as long as each lists a channel's ops of a step in
// the same order and consecutively, which every schedule here does.

#include <cstdint>
#include <utility>
#include <vector>

namespace cubesim::components::collectives {
// Where the data is while the collective runs: in the PE's SRAM (loaded before, stored after,
// neither timed) or in HBM (loaded when first needed, stored once final, both timed).
enum class Buffer : std::uint8_t { sram, hbm };

struct Segment {
  std::int64_t elems = 0;
  std::int64_t in_at = -1;   // elements into the program's input where it starts; -1: no value
  std::int64_t out_at = -1;  // elements into its output where it ends; -1: not an output
};

// switch_reduce: in-network reduction (tl.switch_reduce): the segment's value goes up to the
// switch of level `peer` (components::SwitchLevel: 0 UCIe, 1 inter-SIP) and the sum over the
// programs at the program's place in every cube (SIP) comes back into it. It reads and writes
// the segment, as a recv_add does, and uses no channel.
enum class OpKind : std::uint8_t { send, recv, recv_add, switch_reduce };
struct Op {
  OpKind kind = OpKind::send;
  std::int64_t peer = 0;  // global program id (switch_reduce: the switch's level)
  std::int32_t segment = 0;
};
using Step = std::vector<Op>;

// An algorithm: what each program (by global program id) holds and does, step by step.
// Computed on demand, so a schedule of thousands of steps for thousands of programs costs no
// memory.
class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual std::int64_t programs() const = 0;
  virtual std::vector<Segment> segments(std::int64_t g) const = 0;
  virtual std::int64_t steps(std::int64_t g) const = 0;
  virtual void step(std::int64_t g, std::int64_t k, Step& out) const = 0;
  // Where each of program g's steps lies in a row's run through the pipeline (pipeline.hpp), in
  // waves after the row's first step, non-decreasing, one per step; empty: step k at k x the
  // pipeline's spacing. Both ends of a channel must list its messages in the same order, so
  // offsets may differ between programs only where each channel carries the messages of one
  // step; and a sender may run ahead of its receiver by no more than the channel's slots, or
  // it blocks before receiving what its receiver waits to send: `channel_rows` is how many
  // rows of messages a channel's slots hold.
  virtual std::vector<std::int64_t> wave_offsets(std::int64_t /*g*/,
                                                 std::int64_t /*channel_rows*/) const {
    return {};
  }
  // Whether the pipeline may lay its rows across the segments (pipeline.hpp): every program's
  // segments are of one length L and each starts at p x L of its input and output (the same p
  // in both, or none), so that the program's element order is any permutation that every
  // program shares, as an all-reduce's is (NCCL's ring lays a loop's chunks so).
  virtual bool rows_across_segments() const { return false; }
};

// The order in which a program performs one step's messages: each action one message.
struct Action {
  bool send = false;
  std::uint32_t op = 0;     // index into the step
  std::int64_t piece = 0;   // which piece of the op's segment
  std::uint32_t count = 1;  // ops op .. op + count - 1, each its segment's only piece (piece 0)
};
std::int64_t pieces_of(std::int64_t elems, std::int64_t piece);
// `message`: the most elements a message carries when it groups several ops (at most `piece`:
// none grouped).
void step_actions(const std::vector<Segment>& segments, const Step& step, std::int64_t piece,
                  std::uint32_t window, std::vector<Action>& out, std::int64_t message = 0);

// The step in which each of program g's segments is last written (received into, or reduced
// in a switch): -1 when never. 32 bits: every program of a 2048-program ring holds one per
// segment, and no schedule has 2^31 steps.
struct LastUses {
  std::vector<std::int32_t> write;
  LastUses() = default;
  LastUses(const Schedule& schedule, std::int64_t g, std::int64_t steps, std::size_t segments);
};

// The writes into each (segment, piece) still to come in a step's actions: the last one stores
// its final value (buffer=hbm). Steps write few pieces: a vector, searched.
class PieceWrites {
 public:
  void count(const Step& step, const std::vector<Action>& actions);  // every op of each
  // One write into `piece` is done: whether it was the step's last.
  bool done(std::int32_t segment, std::int64_t piece) { return --at({segment, piece}) == 0; }

 private:
  int& at(std::pair<std::int32_t, std::int64_t> piece);
  std::vector<std::pair<std::pair<std::int32_t, std::int64_t>, int>> counts_;
};

}  // namespace cubesim::components::collectives
