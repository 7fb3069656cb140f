#pragma once
// A collective as a schedule of messages, one executor that runs any schedule over tl.send /
// tl.recv, and one alpha-beta model that times any schedule from the spec.
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
// pieces of its sends, and of its receives, piece index first and op second, with the sends
// running at most `window` messages per peer ahead of the receives. Both ends of a channel
// list its messages in the same order, and no program needs more slots than a channel has
// before it receives, so a schedule whose every send has its receive in the same step never
// deadlocks.

#include <cstdint>
#include <vector>

#include "emu/time.hpp"
#include "kernels/harness/grid.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/ptr.hpp"

namespace cubesim::kernels::collectives {

// Where the data is while the collective runs: in the PE's SRAM (loaded before, stored after,
// neither timed) or in HBM (loaded when first needed, stored once final, both timed).
enum class Buffer : std::uint8_t { sram, hbm };

// When each program began and ended the collective proper (its timed part).
struct Clock {
  std::vector<emu::Tick> begin, end;  // per global program id
  emu::Tick elapsed() const;          // max(end) - min(begin)
};

struct Segment {
  std::int64_t elems = 0;
  std::int64_t in_at = -1;   // elements into the program's input where it starts; -1: no value
  std::int64_t out_at = -1;  // elements into its output where it ends; -1: not an output
};

enum class OpKind : std::uint8_t { send, recv, recv_add };
struct Op {
  OpKind kind = OpKind::send;
  std::int64_t peer = 0;  // global program id
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
};

struct ScheduleArgs {
  const Schedule* schedule = nullptr;
  Buffer buffer = Buffer::sram;
  std::vector<Ptr> in, out;  // per global program id
  std::int64_t piece = 0;    // elements per message at most
  std::uint32_t window = 1;  // messages per peer sent ahead of the receives (the slots)
  Clock* clock = nullptr;
};

// One program's part.
void run_schedule(tl::Context& tl, const ScheduleArgs& args);

// The order in which a program performs one step's messages.
struct Action {
  bool send = false;
  std::uint32_t op = 0;    // index into the step
  std::int64_t piece = 0;  // which piece of the op's segment
};
std::int64_t pieces_of(std::int64_t elems, std::int64_t piece);
void step_actions(const std::vector<Segment>& segments, const Step& step, std::int64_t piece,
                  std::uint32_t window, std::vector<Action>& out);

// The alpha-beta time of a schedule on an idle system, from the spec, program by program in
// time order. A message of b bytes leaves its sender once its credit is back and the sender's
// injection port is free (the port carries its messages and the credits it returns, one after
// another); its head crosses the route's hops (alpha: the hop latencies) and it queues for the
// receiver's ejection port behind what else arrives there; it takes b / the slowest link of
// its route (beta) and, behind the messages before it on the same route, arrives; then the
// slot's write latency. The receiver reads it out (slot latency + b / slot bandwidth) once it
// is there and the recv is posted, returns the slot's credit, and adds (recv_add) on the
// vector unit. With buffer=hbm it also loads and stores as the executor does (a value when
// first needed, a result once final): each packet of an access over its own path, the HBM
// channel's link serialising reads from it and writes to it. Exact when messages are single
// packets in SRAM slots, routes of different pairs share no link but their end ports, no PE
// has more packets in flight than its DMA window, and buffer=sram; with buffer=hbm the
// accesses' packets interleave with messages on the links they share, which the model serves
// whole (within 5 % on an idle cube for one-packet pieces; tests/kernels/test_collectives).
// With message slots in HBM (system.messages.memory=hbm) a message is a write of b bytes into
// its slot's HBM address and its read-out a read of them back to the receiver, each timed as
// the accesses above (the write's landing is the message's arrival).
emu::Tick model_time(Simulation& sim, GridShape grid, const ScheduleArgs& args);

}  // namespace cubesim::kernels::collectives
