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
  enum class Kind : std::uint8_t { send, recv_posted, recv_done, barrier };
  Kind kind;
  // send: the receiver; recv_posted, recv_done: the sender; barrier: the instance (an index
  // into SyncLog::barriers()).
  std::uint32_t peer;
  std::uint32_t seq;  // recv_done: which message of its channel it waited for (0 first)
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
    ops_[program].push_back(op);
    segment_[program] += op.ends_segment();
  }

  std::vector<std::vector<SyncOp>> ops_;  // per program
  std::vector<std::uint32_t> segment_;    // per program
  std::vector<BarrierInstance> barriers_;
  std::map<std::tuple<int, std::int64_t, std::uint32_t>, std::uint32_t> barrier_index_;
  std::uint32_t slots_ = 0;
  bool finished_ = false;
  bool messages_ = false;
};

}  // namespace cubesim
