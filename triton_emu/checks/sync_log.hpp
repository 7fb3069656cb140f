#pragma once
// Each program's communication and synchronisation during a launch, in program order: sends,
// recvs posted, recvs completed and barriers. The race check orders accesses by it
// (happens_before.hpp) and the message check replays it with fewer slots (message_hazards.hpp).
//
// An operation is recorded when its program calls it, before it may block, so a launch that
// stopped in a deadlock still shows what each program was waiting for. Sends, recv completions
// (tl.recv, or tl.wait on a RecvHandle) and barriers cut a program's history into segments:
// segment s is what the program did after its s-th such operation and before the next (segment
// 0 before the first). A program makes no memory access while it is blocked in one of them, so
// recording at the call puts every access in the right segment.

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace cubesim {

struct SyncOp {
  static constexpr std::uint32_t kNotYet = UINT32_MAX;
  enum class Kind : std::uint8_t { send, recv_posted, recv_done, barrier };
  Kind kind;
  // send: the receiver; recv_posted, recv_done: the sender; barrier: the instance (an index
  // into SyncLog::barriers()).
  std::uint32_t peer;
  std::uint32_t seq;  // recv_done: which message of its channel it waited for (0 first)
  // When what follows it began, on a launch-wide count of operations: a send's when it was
  // called, a recv completion's or barrier's when it returned (kNotYet if it never did). It
  // grows along every chain of messages and barriers (a recv returns after its send was
  // called, a barrier after every member arrived), so what begins later than an access cannot
  // be ordered before it (happens_before.hpp prunes its searches with that).
  std::uint32_t after = kNotYet;
  // Whether the operation orders what comes before it with what other programs do after it.
  bool ends_segment() const { return kind != Kind::recv_posted; }
};

struct BarrierInstance {
  int scope;                 // 0 cube, 1 SIP, 2 all
  std::int64_t group;        // the cube or SIP it synchronises, 0 for all
  std::uint32_t generation;  // barriers of that scope the group had passed before this one
  std::uint32_t members;     // programs that must arrive
};

class SyncLog {
 public:
  // A launch of `programs` programs whose channels have `slots` slots each (the spec's).
  void begin(std::size_t programs, std::uint32_t slots);
  void send(std::uint32_t program, std::uint32_t to) {
    add(program, {SyncOp::Kind::send, to, 0});
    messages_ = true;
  }
  void recv_posted(std::uint32_t program, std::uint32_t from) {
    add(program, {SyncOp::Kind::recv_posted, from, 0});
    messages_ = true;
  }
  void recv_done(std::uint32_t program, std::uint32_t from, std::uint64_t seq) {
    add(program, {SyncOp::Kind::recv_done, from, static_cast<std::uint32_t>(seq)});
  }
  void barrier(std::uint32_t program, int scope, std::int64_t group, std::uint32_t generation,
               std::uint32_t members);
  // The recv completion or barrier `program` was blocked in returned.
  void returned(std::uint32_t program) { ops_[program].back().after = tick(); }
  // Every program ran to its end: the record holds all they did.
  void set_finished() { finished_ = true; }

  std::size_t programs() const { return ops_.size(); }
  std::uint32_t slots() const { return slots_; }
  bool finished() const { return finished_; }
  bool has_messages() const { return messages_; }
  // The segment `program` is in now.
  std::uint32_t segment(std::uint32_t program) const { return segment_[program]; }
  const std::vector<SyncOp>& ops(std::uint32_t program) const { return ops_[program]; }
  const std::vector<BarrierInstance>& barriers() const { return barriers_; }

 private:
  void add(std::uint32_t program, SyncOp op) {
    if (op.kind == SyncOp::Kind::send || op.kind == SyncOp::Kind::recv_posted) op.after = tick();
    ops_[program].push_back(op);
    segment_[program] += op.ends_segment();
  }
  // Stays put at the top rather than wrap: equal counts keep the order the pruning relies on.
  std::uint32_t tick() { return clock_ < SyncOp::kNotYet - 1 ? ++clock_ : clock_; }

  std::vector<std::vector<SyncOp>> ops_;  // per program
  std::vector<std::uint32_t> segment_;    // per program
  std::vector<BarrierInstance> barriers_;
  std::map<std::tuple<int, std::int64_t, std::uint32_t>, std::uint32_t> barrier_index_;
  std::uint32_t slots_ = 0;
  std::uint32_t clock_ = 0;
  bool finished_ = false;
  bool messages_ = false;
};

}  // namespace cubesim
