#pragma once
// The pending-event set: a 4-ary min-heap ordered by (time, priority, insertion sequence), so
// ties are broken deterministically.
//
// Layout for the cache and the branch predictor, which dominate a DES event loop:
//  - keys and payloads live in separate arrays; a key is (time << 64 | order) in one 128-bit
//    integer, so comparing two events is one wide compare, and the four children of a node
//    (4 x 16 bytes) fill exactly one 64-byte cache line (the key array is offset by 3 slots
//    and 64-byte aligned so that every sibling group starts on a line);
//  - the smallest of four children is picked with conditional moves, not branches: event
//    times are random, so a branchy compare mispredicts about half the time;
//  - pop() walks the hole from the root to a leaf and then sifts the last element up, which
//    nearly always belongs near the bottom (Floyd's / Wegener's bottom-up heapsort trick).

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
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
    if (size_ == capacity_) grow();
    payloads_.push_back(payload);
    sift_up(size_++, make_key(time, order), payload);
  }

  // The (priority, sequence) part of the next event's key; consumes a sequence number.
  std::uint64_t next_order(Priority priority) {
    return (static_cast<std::uint64_t>(static_cast<std::uint8_t>(priority + 128)) << 56) |
           (sequence_++ & kSequenceMask);
  }
  // Whether an event (time, order) would come before everything queued.
  bool would_be_first(Tick time, std::uint64_t order) const {
    return size_ == 0 || make_key(time, order) < key(0);
  }
  // pop() then push() of (time, order) in one walk down the heap. Requires !empty().
  void replace_top(Tick time, std::uint64_t order, void* payload) {
    fill_root(size_, make_key(time, order), payload);
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  Entry top() const {
    const Key k = key(0);
    return Entry{static_cast<Tick>(k >> 64), static_cast<std::uint64_t>(k), payloads_[0]};
  }
  Tick top_time() const { return static_cast<Tick>(key(0) >> 64); }
  void* top_payload() const { return payloads_[0]; }

  void pop() {
    --size_;
    const Key last_key = key(size_);
    void* const last_payload = payloads_.back();
    payloads_.pop_back();
    key(size_) = kSentinel;
    if (size_ > 0) fill_root(size_, last_key, last_payload);
  }

 private:
  __extension__ typedef unsigned __int128 Key;  // GCC/Clang; time in the high 64 bits
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << 56) - 1;
  static constexpr std::size_t kPad = 3;  // keys_[kPad + 4i + 1 ...] start cache lines
  // Fills the (up to 3) slots after the last entry, which never win a comparison. No real key
  // is all ones: that would need priority 127 and the 2^56-th insertion at the end of time.
  static constexpr Key kSentinel = ~Key{0};

  struct FreeDeleter {
    void operator()(Key* p) const { std::free(p); }
  };

  static Key make_key(Tick time, std::uint64_t order) {
    return (static_cast<Key>(time) << 64) | order;
  }
  Key& key(std::size_t i) { return keys_[kPad + i]; }
  const Key& key(std::size_t i) const { return keys_[kPad + i]; }

  // Index (0..3) of the smallest of four adjacent keys, without branches.
  static std::size_t min_of_four(const Key* k) {
    const bool b10 = k[1] < k[0];
    const Key lo01 = b10 ? k[1] : k[0];
    const std::size_t i01 = b10;
    const bool b32 = k[3] < k[2];
    const Key lo23 = b32 ? k[3] : k[2];
    const std::size_t i23 = 2 + b32;
    // Arithmetic, not ?:, so the compiler cannot turn the last pick back into a branch.
    const std::size_t pick = lo23 < lo01;
    return i01 + pick * (i23 - i01);
  }

  // Moves the hole at the root down to a leaf along the smallest children (of the first n
  // entries), then sifts (k, payload) up from there.
  void fill_root(std::size_t n, Key k, void* payload) {
    std::size_t hole = 0;
    for (std::size_t first = 1; first < n; first = 4 * hole + 1) {
      // Slots past the end hold kSentinel, so a partial sibling group needs no special case.
      const std::size_t best = first + min_of_four(&key(first));
      key(hole) = key(best);
      payloads_[hole] = payloads_[best];
      hole = best;
    }
    sift_up(hole, k, payload);
  }

  void sift_up(std::size_t i, Key k, void* payload) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(k < key(parent))) break;
      key(i) = key(parent);
      payloads_[i] = payloads_[parent];
      i = parent;
    }
    key(i) = k;
    payloads_[i] = payload;
  }

  void grow() {
    const std::size_t cap = capacity_ ? capacity_ * 2 : 256;
    const std::size_t bytes = (cap + kPad + 5) * sizeof(Key);  // + room for the sentinels
    auto* fresh = static_cast<Key*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    if (fresh == nullptr) throw std::bad_alloc();
    for (std::size_t i = 0; i < cap + kPad + 5; ++i) fresh[i] = kSentinel;
    if (size_ > 0) std::memcpy(fresh + kPad, keys_.get() + kPad, size_ * sizeof(Key));
    keys_.reset(fresh);
    capacity_ = cap;
    payloads_.reserve(cap);
  }

  std::unique_ptr<Key[], FreeDeleter> keys_;
  std::vector<void*> payloads_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::uint64_t sequence_ = 0;  // 2^56 insertions before it wraps: years of wall time
};

}  // namespace cubesim::emu
