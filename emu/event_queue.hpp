#pragma once
// The pending-event set, ordered by (time, priority, insertion sequence), so ties are broken
// deterministically.
//
// A ladder queue (Tang, Goh and Thng, 2005; after Brown's calendar queue), because a
// simulation's pending events are nearly all "now + a small delay" and a heap pays O(log n)
// cache-missing levels for every one of them:
//  - `far_` ("top"): events past the ladder, unsorted; a push is an append.
//  - rungs: rung 0 is a ring of buckets fitted to far_'s events when the ladder runs dry
//    (width ~ spread / count); buckets are unsorted vectors, so a push is an append. A bucket
//    with too many events to sort cheaply is split into a finer rung covering just that
//    bucket, recursively: the width adapts to clusters and outliers without tuning.
//  - `near_` ("bottom"): the events of the bucket being consumed, sorted; pop() takes the
//    front. A push into this window is inserted in order (a short scan from the back).
//    While only a few events are pending there is no ladder at all: near_ holds them all.
// Every event is appended O(1) times and sorted within a small bucket: O(1) amortised per
// event for the usual distributions. The tiers only decide where an event waits; the order
// popped is exactly (time, priority, sequence), as with any exact priority queue.
//
// Because near_ is sorted, the next few events are known (peek), and the scheduler uses that
// to prefetch the processes it will resume soon.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "emu/time.hpp"

namespace cubesim::emu {

// Lower runs first among events at the same time. Default 0.
using Priority = std::int8_t;

class EventQueue {
 public:
  struct Entry {
    Tick time;
    std::uint64_t order;  // (priority + 128) << 56 | insertion sequence
    void* payload;
  };

  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  void push(Tick time, Priority priority, void* payload) {
    push_with_order(time, next_order(priority), payload);
  }

  // push() with an order taken earlier from next_order().
  void push_with_order(Tick time, std::uint64_t order, void* payload) {
    ++size_;
    if (rungs_used_ > 0) [[likely]] {
      Rung& rung = rungs_[0];
      const std::uint64_t b = time >> rung.shift;
      if (b >= rung.cur) {
        if (b < rung.end) {
          // Fields, not an Entry built on the stack: a 16-byte reload of two 8-byte stores
          // misses store forwarding, which cost more than the rest of the push.
          rung.bucket(b).emplace_back(time, order, payload);
          ++rung.count;
        } else {
          far_.emplace_back(time, order, payload);
        }
        return;
      }
    }
    push_early(time, order, payload);
  }

  // The (priority, sequence) part of the next event's key; consumes a sequence number.
  std::uint64_t next_order(Priority priority) {
    return (static_cast<std::uint64_t>(static_cast<std::uint8_t>(priority + 128)) << 56) |
           (sequence_++ & kSequenceMask);
  }
  // Whether an event (time, order) would come before everything queued.
  bool would_be_first(Tick time, std::uint64_t order) const {
    return size_ == 0 || key(time, order) < key(near_[head_]);
  }
  // pop() then push() of (time, order). Requires !empty().
  void replace_top(Tick time, std::uint64_t order, void* payload) {
    pop();
    push_with_order(time, order, payload);
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Bytes of storage the queue holds (its vectors' capacities), for tests of its bound.
  std::size_t storage_bytes() const;
  // Require !empty().
  const Entry& top() const { return near_[head_]; }
  Tick top_time() const { return near_[head_].time; }
  void* top_payload() const { return near_[head_].payload; }
  // The payload of the k-th event after top(), when it is already known (sorted); else null.
  // Later pushes may still come before it.
  void* peek(std::size_t k) const {
    return head_ + k < near_.size() ? near_[head_ + k].payload : nullptr;
  }

  void pop() {
    if (++head_ == near_.size()) {
      if (--size_ == 0) {  // nothing left anywhere: drop the (empty) ladder too
        near_.clear();
        head_ = 0;
        rungs_used_ = 0;
      } else {
        refill();
      }
      return;
    }
    --size_;
  }

 private:
  __extension__ typedef unsigned __int128 Key;  // GCC/Clang; time in the high 64 bits
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << 56) - 1;

  static Key key(Tick time, std::uint64_t order) { return (static_cast<Key>(time) << 64) | order; }
  static Key key(const Entry& e) { return key(e.time, e.order); }

  // push() when there is no ladder (few events pending) or the event falls before rung 0's
  // unconsumed buckets.
  // (Fields, not an Entry: see push_with_order.)
  void push_early(Tick time, std::uint64_t order, void* payload);
  void insert_near(Tick time, std::uint64_t order, void* payload);

  // Buckets are numbered absolutely: bucket b of a rung holds times [b << shift, (b+1) << shift).
  // Rung r+1 covers exactly the bucket of rung r consumed last (cur - 1); near_ holds every
  // event before the finest rung's `cur`; far_ every event from rung 0's `end` on.
  struct Rung {
    std::vector<std::vector<Entry>> buckets;  // nb used; each keeps its capacity between uses
    std::uint64_t nb = 0;                     // a power of two
    unsigned shift = 1;                       // >= 1, so `end` cannot overflow
    std::uint64_t cur = 0;                    // next bucket to consume
    std::uint64_t end = 0;                    // one past the last bucket
    std::size_t count = 0;                    // events in the buckets
    std::vector<Entry>& bucket(std::uint64_t b) { return buckets[b & (nb - 1)]; }
  };
  static constexpr unsigned kMaxRungs = 8;
  // Buckets up to this size are sorted by ranking (branch-free), larger ones by merging runs.
  static constexpr std::size_t kRankSortMax = 8;

  // near_ is used up: load the next non-empty bucket, fitting a new rung 0 to far_ or
  // splitting a crowded bucket first as needed. Leaves near_ empty only when the queue is.
  void refill();
  void sort_near();
  void build_top_rung();
  void split_bucket(std::vector<Entry>& events, std::uint64_t parent_bucket, unsigned parent_shift);

  std::vector<Entry> near_;
  std::size_t head_ = 0;  // near_[head_] is the first event
  Rung rungs_[kMaxRungs];
  unsigned rungs_used_ = 0;
  std::vector<Entry> far_;
  Entry scratch_[kRankSortMax]{};  // sort_near's copy
  std::vector<std::size_t> runs_;  // sort_near's runs
  std::vector<Entry> merged_;      // sort_near's merge target (swapped with near_)
  std::size_t size_ = 0;
  std::uint64_t sequence_ = 0;  // 2^56 insertions before it wraps: years of wall time
};

}  // namespace cubesim::emu
