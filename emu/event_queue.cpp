#include "emu/event_queue.hpp"

#include <algorithm>
#include <bit>

namespace cubesim::emu {
namespace {

// Events per bucket a rung aims for: few enough that sorting a bucket is a short insertion
// sort, enough that near_ usually shows the scheduler the next few events.
constexpr std::uint64_t kPerBucket = 2;
// A bucket with more events than this is split into a finer rung instead of being sorted.
constexpr std::size_t kSplitAbove = 48;
// Rung 0 covers twice the spread of the events it is built from, so that most events pushed
// while it is consumed land in a bucket directly instead of in far_.
constexpr std::uint64_t kTopRungSpan = 2;
// Up to this many pending events, the queue is just a sorted array (a ladder's fixed costs
// would dominate).
constexpr std::size_t kSmallQueue = 16;
// The most storage (in events) a bucket is left with once consumed or split (refill,
// split_bucket); what it grows to while it fills is its own.
constexpr std::size_t kKeptPerBucket = 64;
constexpr std::uint64_t kMaxBuckets = std::uint64_t{1} << 20;

// The smallest shift in [1, 62] with 2^shift >= width (62: `time >> shift` stays defined and
// a rung's bucket numbers small).
unsigned shift_for(std::uint64_t width) {
  const auto bits = static_cast<unsigned>(std::bit_width(width > 0 ? width - 1 : 0));
  return std::clamp(bits, 1u, 62u);
}

// Whether splitting can separate these events: not when they all share one time.
bool spread_out(const std::vector<EventQueue::Entry>& events) {
  for (const auto& e : events) {
    if (e.time != events.front().time) return true;
  }
  return false;
}

}  // namespace

void EventQueue::push_early(Tick time, std::uint64_t order, void* payload) {
  if (rungs_used_ == 0) {
    // No ladder: a few events are simply kept sorted in near_. Past kSmallQueue they move to
    // far_ and a rung is fitted to them.
    if (near_.size() - head_ < kSmallQueue) {
      if (head_ >= kSmallQueue) {  // drop the consumed prefix now and then
        near_.erase(near_.begin(), near_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
      insert_near(time, order, payload);
      return;
    }
    far_.insert(far_.end(), near_.begin() + static_cast<std::ptrdiff_t>(head_), near_.end());
    far_.emplace_back(time, order, payload);
    refill();
    return;
  }
  for (unsigned r = 1; r < rungs_used_; ++r) {
    Rung& rung = rungs_[r];
    const std::uint64_t b = time >> rung.shift;
    if (b >= rung.cur) {  // b < end: rung r covers the bucket of rung r-1 that e falls before
      rung.bucket(b).emplace_back(time, order, payload);
      ++rung.count;
      return;
    }
  }
  insert_near(time, order, payload);  // within the bucket being consumed
}

void EventQueue::insert_near(Tick time, std::uint64_t order, void* payload) {
  const Key k = key(time, order);
  if (near_.size() == head_ || key(near_.back()) < k) {  // last: events at one time, in order
    near_.emplace_back(time, order, payload);
    return;
  }
  // Most other events pushed here are due soon (a wake-up now, a packet's next hop) and belong
  // near the front, ahead of a bucket's worth of later ones. The slots before head_ are free
  // (popped), so the events ahead of the new one move back one place instead of all those
  // behind it moving on.
  const auto first = near_.begin() + static_cast<std::ptrdiff_t>(head_);
  const auto at = k < key(*first)
                      ? first
                      : std::upper_bound(first + 1, near_.end(), k,
                                         [](Key x, const Entry& e) { return x < key(e); });
  if (head_ > 0 && at - first < near_.end() - at) {
    std::move(first, at, first - 1);
    Entry& e = *(at - 1);
    e.time = time;
    e.order = order;
    e.payload = payload;
    --head_;
    return;
  }
  near_.emplace(at, time, order, payload);
}

std::size_t EventQueue::storage_bytes() const {
  std::size_t entries = near_.capacity() + far_.capacity() + merged_.capacity();
  std::size_t bytes = runs_.capacity() * sizeof(std::size_t);
  for (const Rung& r : rungs_) {
    bytes += r.buckets.capacity() * sizeof(std::vector<Entry>);
    for (const auto& b : r.buckets) entries += b.capacity();
  }
  return bytes + entries * sizeof(Entry);
}

void EventQueue::refill() {
  near_.clear();
  head_ = 0;
  for (;;) {
    while (rungs_used_ > 0 && rungs_[rungs_used_ - 1].count == 0) --rungs_used_;
    if (rungs_used_ == 0) {
      if (far_.size() <= kSmallQueue) {  // few enough to keep sorted without a ladder
        near_.swap(far_);
        break;
      }
      build_top_rung();
    }
    Rung& rung = rungs_[rungs_used_ - 1];
    while (rung.bucket(rung.cur).empty()) ++rung.cur;  // count > 0: ends within the rung
    std::vector<Entry>& bucket = rung.bucket(rung.cur++);
    rung.count -= bucket.size();
    if (bucket.size() > kSplitAbove && rung.shift > 1 && rungs_used_ < kMaxRungs &&
        spread_out(bucket)) {
      split_bucket(bucket, rung.cur - 1, rung.shift);
      continue;
    }
    // Swapped, unless near_'s storage is larger than a bucket keeps: then copied, and near_
    // keeps it. Storage handed on without a bound (from near_ here, from a split bucket in
    // split_bucket) would end up, bucket by bucket, as the largest that ever went through each:
    // hundreds of MB on a long run of thousands of processes.
    if (near_.capacity() <= kKeptPerBucket) {
      near_.swap(bucket);
    } else {
      near_.assign(bucket.begin(), bucket.end());
      bucket.clear();
    }
    break;
  }
  sort_near();
}

void EventQueue::sort_near() {
  const std::size_t n = near_.size();
  // Buckets are often in order already: their events were appended as they were pushed.
  std::size_t sorted = 1;
  while (sorted < n && !(key(near_[sorted]) < key(near_[sorted - 1]))) ++sorted;
  if (sorted >= n) return;
  if (n <= kRankSortMax) {
    // Small buckets out of order have random times: insertion sort would mispredict about once
    // per element. Ranking by counting is branch-free (keys are unique: the sequence differs).
    // The copy is a member, not a local array: this runs on process stacks, which may be as
    // small as 16 KiB (and sanitizer builds pad every local array with redzones).
    Entry* copy = scratch_;
    for (std::size_t i = 0; i < n; ++i) copy[i] = near_[i];
    for (std::size_t i = 0; i < n; ++i) {
      const Key k = key(copy[i]);
      std::size_t rank = 0;
      for (std::size_t j = 0; j < n; ++j) rank += key(copy[j]) < k;
      near_[rank] = copy[i];
    }
    return;
  }
  // Larger buckets are a few runs already in order (events appended as they were pushed, events
  // of one time in sequence): merged pairwise, bottom-up, in about n * log2(runs) steps. No
  // recursion: this runs on process stacks (16 KiB at the least), and introsort's recursion
  // overflowed one in a sanitizer build.
  runs_.clear();
  runs_.push_back(0);
  runs_.push_back(sorted);
  for (std::size_t i = sorted + 1; i < n; ++i)
    if (key(near_[i]) < key(near_[i - 1])) runs_.push_back(i);
  runs_.push_back(n);
  merged_.resize(n);
  const auto less = [](const Entry& a, const Entry& b) { return key(a) < key(b); };
  while (runs_.size() > 2) {  // runs_: the boundaries of the runs, from 0 to n
    std::size_t kept = 0;
    for (std::size_t r = 0; r + 1 < runs_.size(); r += 2) {
      const auto begin = near_.begin() + static_cast<std::ptrdiff_t>(runs_[r]);
      const auto mid = near_.begin() + static_cast<std::ptrdiff_t>(runs_[r + 1]);
      const auto end =
          r + 2 < runs_.size() ? near_.begin() + static_cast<std::ptrdiff_t>(runs_[r + 2]) : mid;
      std::merge(begin, mid, mid, end, merged_.begin() + static_cast<std::ptrdiff_t>(runs_[r]),
                 less);
      runs_[kept++] = runs_[r];
    }
    runs_[kept++] = n;
    runs_.resize(kept);
    near_.swap(merged_);
  }
}

void EventQueue::build_top_rung() {
  Tick lo = far_.front().time;
  Tick hi = lo;
  for (const Entry& e : far_) {
    lo = std::min(lo, e.time);
    hi = std::max(hi, e.time);
  }
  Rung& rung = rungs_[0];
  rung.shift = shift_for((hi - lo) / std::max<std::uint64_t>(1, far_.size() / kPerBucket));
  const std::uint64_t first = lo >> rung.shift;
  const std::uint64_t spread = (hi >> rung.shift) - first + 1;
  rung.nb = std::bit_ceil(std::min(kMaxBuckets, spread * kTopRungSpan));
  rung.cur = first;
  rung.end = first + rung.nb;  // first < 2^63 (shift >= 1): no overflow
  rung.count = 0;
  if (rung.buckets.size() < rung.nb) rung.buckets.resize(rung.nb);
  std::size_t kept = 0;
  for (const Entry& e : far_) {
    const std::uint64_t b = e.time >> rung.shift;
    if (b < rung.end) {
      rung.bucket(b).push_back(e);
      ++rung.count;
    } else {
      far_[kept++] = e;  // only when the spread needed more than kMaxBuckets
    }
  }
  far_.resize(kept);
  rungs_used_ = 1;
}

void EventQueue::split_bucket(std::vector<Entry>& events, std::uint64_t parent_bucket,
                              unsigned parent_shift) {
  Rung& rung = rungs_[rungs_used_++];
  const std::uint64_t wanted = std::bit_ceil(events.size() / kPerBucket);
  const unsigned levels =
      std::min<unsigned>(parent_shift - 1, static_cast<unsigned>(std::bit_width(wanted) - 1));
  rung.shift = parent_shift - levels;
  rung.nb = std::uint64_t{1} << levels;
  rung.cur = parent_bucket << levels;
  rung.end = rung.cur + rung.nb;
  rung.count = events.size();
  if (rung.buckets.size() < rung.nb) rung.buckets.resize(rung.nb);
  for (const Entry& e : events) rung.bucket(e.time >> rung.shift).push_back(e);
  events.clear();
  // It was split because it was crowded: its storage is more than it will need again.
  if (events.capacity() > kKeptPerBucket) std::vector<Entry>().swap(events);
}

}  // namespace cubesim::emu
