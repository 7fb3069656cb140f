#pragma once
// The pending-event set: a 4-ary min-heap of 24-byte entries ordered by
// (time, priority, insertion sequence), so ties are broken deterministically.
//
// Why not std::priority_queue of callbacks: entries here are plain data (the payload is an
// opaque pointer the scheduler interprets), a 4-ary heap is half as deep as a binary one and
// its four children sit in two adjacent cache lines, and pop() moves the hole to a leaf before
// sifting the last element up (it nearly always belongs near the bottom), which saves a
// comparison per level.

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

  void push(Tick time, Priority priority, void* payload) {
    const std::uint64_t order =
        (static_cast<std::uint64_t>(static_cast<std::uint8_t>(priority + 128)) << 56) |
        (sequence_++ & kSequenceMask);
    heap_.push_back(Entry{time, order, payload});
    sift_up(heap_.size() - 1);
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }

  void pop() {
    const Entry last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return;
    // Walk the hole from the root down along the smallest children, then place `last`.
    const std::size_t n = heap_.size();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = 4 * hole + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    sift_up(hole);
  }

  void clear() { heap_.clear(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }

 private:
  static constexpr std::uint64_t kSequenceMask = (std::uint64_t{1} << 56) - 1;

  void sift_up(std::size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  std::vector<Entry> heap_;
  std::uint64_t sequence_ = 0;  // 2^56 insertions before it wraps: years of wall time
};

}  // namespace cubesim::emu
