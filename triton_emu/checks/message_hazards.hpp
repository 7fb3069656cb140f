#pragma once
// The message check of the sharding tests: how many slots per channel a launch's messages need,
// the deadlock they hit with fewer, and the messages sent but never received or received but
// never sent, with program coordinates.
//
// It replays each program's recorded operations (sync_log.hpp) without timing. Message k of a
// channel can be sent once k < (recvs posted on the channel) + slots: a posted recv frees its
// slot as soon as its message is there. A recv completes once its message was sent, a barrier
// once every member has arrived. Channels are FIFO per ordered pair and a recv names its sender
// (there is no wildcard receive), so the programs form a Kahn process network: whether a step
// can be taken depends only on which steps the others have taken, never on when, and taking
// one never disables another. With a fixed slot count the outcome is therefore the same for
// every timing of messages and credits, and a greedy replay finds it. The arrivals that can
// deadlock a kernel are those where a sender finds its credits not yet back; fewer slots are
// exactly that, so the counts below the spec's show what the kernel relies on. The replay takes
// each program's operations as recorded, so it holds for kernels whose communication does not
// depend on timing (no spinning on atomics, no branching on racy data).

#include <cstdint>
#include <string>
#include <vector>

#include "triton_emu/checks/access_log.hpp"
#include "triton_emu/checks/sync_log.hpp"

namespace cubesim {

struct MessageChannel {
  std::uint32_t from, to;  // programs
};

struct MessageHazards {
  struct Blocked {
    enum class On : std::uint8_t { send, recv, barrier };
    std::uint32_t program;
    On on;
    MessageChannel channel{};   // send: no free slot on it; recv: its message was never sent
    std::uint64_t message = 0;  // send, recv: the message's number on the channel, 1 first
    BarrierInstance barrier{};  // barrier: the one it waits at
    // The program it waits on: the receiver (to post a recv), the sender (to send), a member
    // that has not arrived at the barrier.
    std::uint32_t waits_for = 0;
  };
  struct Deadlock {
    std::uint32_t slots;  // per channel
    std::vector<Blocked> blocked;
    // Programs each waiting on the next, the last on the first; empty when the waits end at a
    // program that ran to its end.
    std::vector<std::uint32_t> cycle;
  };
  struct Unmatched {
    MessageChannel channel;
    std::uint64_t messages;
  };

  std::uint32_t spec_slots = 0;
  // Every program ran to its end, so what follows covers all it did. Otherwise (the launch
  // stopped) only the deadlock with the spec's slots is known, of the operations made so far.
  bool complete = true;
  // The fewest slots per channel with which every program gets to its end; 0 when no count
  // does (a recv waits for a message nobody sends, or a cycle of recvs) or `complete` is false.
  std::uint32_t min_slots = 1;
  // With each count below min_slots, from min_slots - 1 down to 1; with the spec's count when
  // no count suffices.
  std::vector<Deadlock> deadlocks;
  std::vector<Unmatched> never_received;  // sent, but no recv was posted for them
  std::vector<Unmatched> never_sent;      // recv posted, but never sent
  bool clean() const {
    return complete && min_slots == 1 && never_received.empty() && never_sent.empty();
  }
};

MessageHazards message_hazards(const SyncLog& log, const std::vector<ProgramCoord>& coords);
std::string describe(const MessageHazards& h, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items = 10);

}  // namespace cubesim
