#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "emu/event_queue.hpp"

using namespace cubesim::emu;

namespace {
void* id(std::uintptr_t i) {
  return reinterpret_cast<void*>(i);
}
std::uintptr_t id_of(const EventQueue::Entry& e) {
  return reinterpret_cast<std::uintptr_t>(e.payload);
}
}  // namespace

TEST(EventQueue, PopsInTimeOrder) {
  EventQueue q;
  q.push(30, 0, id(3));
  q.push(10, 0, id(1));
  q.push(20, 0, id(2));
  std::vector<std::uintptr_t> order;
  while (!q.empty()) {
    order.push_back(id_of(q.top()));
    q.pop();
  }
  EXPECT_EQ(order, (std::vector<std::uintptr_t>{1, 2, 3}));
}

TEST(EventQueue, SameTimeOrdersByPriorityThenInsertion) {
  EventQueue q;
  q.push(5, 0, id(1));
  q.push(5, -1, id(2));
  q.push(5, 0, id(3));
  q.push(5, 127, id(4));
  q.push(5, -128, id(5));
  std::vector<std::uintptr_t> order;
  while (!q.empty()) {
    order.push_back(id_of(q.top()));
    q.pop();
  }
  EXPECT_EQ(order, (std::vector<std::uintptr_t>{5, 2, 1, 3, 4}));
}

TEST(EventQueue, InterleavedPushAndPopMatchesAnOrderedSet) {
  // Pushes and pops interleave as in a simulation (never pushing before the last popped time);
  // every pop must return the smallest (time, priority, insertion) present, as a std::set does.
  std::mt19937_64 rng(42);
  EventQueue q;
  std::set<std::tuple<Tick, int, std::uintptr_t>> ref;
  std::uintptr_t next = 0;
  Tick now = 0;
  for (int step = 0; step < 20000; ++step) {
    if (q.empty() || rng() % 3 != 0) {
      const Tick t = now + rng() % 50;
      const int prio = static_cast<int>(rng() % 5) - 2;
      q.push(t, static_cast<Priority>(prio), id(next));
      ref.emplace(t, prio, next++);
    } else {
      const auto [t, prio, i] = *ref.begin();
      ref.erase(ref.begin());
      ASSERT_EQ(q.top().time, t);
      ASSERT_EQ(id_of(q.top()), i);
      now = t;
      q.pop();
    }
  }
  EXPECT_EQ(q.size(), ref.size());
}

TEST(EventQueue, DrainsInLexicographicOrderOfTimePriorityInsertion) {
  std::mt19937_64 rng(7);
  EventQueue q;
  std::vector<std::tuple<Tick, int, std::uintptr_t>> all;
  for (std::uintptr_t i = 0; i < 5000; ++i) {
    const Tick t = rng() % 300;
    const int prio = static_cast<int>(rng() % 7) - 3;
    q.push(t, static_cast<Priority>(prio), id(i));
    all.emplace_back(t, prio, i);
  }
  std::sort(all.begin(), all.end());
  for (const auto& [t, prio, i] : all) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.top().time, t);
    ASSERT_EQ(id_of(q.top()), i);
    q.pop();
  }
  EXPECT_TRUE(q.empty());
}

// The ladder's tiers (far list, rungs fitted to the pending events, split buckets, the sorted
// bucket being consumed) only decide where an event waits. Whatever the distribution of
// delays, every pop must return exactly what an ordered set returns.
namespace {

struct Workload {
  const char* name;
  // A delay after `now` for the next event (the generator may use the step number).
  Tick (*delay)(std::mt19937_64& rng, int step);
  int max_pending;
};

void expect_matches_ordered_set(const Workload& w, Tick start) {
  SCOPED_TRACE(w.name);
  std::mt19937_64 rng(2024);
  EventQueue q;
  std::set<std::tuple<Tick, int, std::uintptr_t>> ref;
  std::uintptr_t next = 0;
  Tick now = start;
  for (int step = 0; step < 60000; ++step) {
    const bool push = ref.empty() || (static_cast<int>(ref.size()) < w.max_pending && rng() % 2);
    if (push) {
      const Tick d = w.delay(rng, step);
      const Tick t = d > kTickMax - now ? kTickMax : now + d;
      const int prio = rng() % 8 == 0 ? static_cast<int>(rng() % 5) - 2 : 0;
      q.push(t, static_cast<Priority>(prio), id(next));
      ref.emplace(t, prio, next++);
    } else {
      const auto [t, prio, i] = *ref.begin();
      ref.erase(ref.begin());
      ASSERT_FALSE(q.empty());
      ASSERT_EQ(q.top().time, t) << "step " << step;
      ASSERT_EQ(id_of(q.top()), i) << "step " << step;
      now = t;
      q.pop();
    }
    ASSERT_EQ(q.size(), ref.size());
  }
  while (!ref.empty()) {
    ASSERT_EQ(id_of(q.top()), std::get<2>(*ref.begin()));
    ref.erase(ref.begin());
    q.pop();
  }
  EXPECT_TRUE(q.empty());
}

const Workload kWorkloads[] = {
    {"small random delays (the hold model)",
     [](std::mt19937_64& rng, int) -> Tick { return 1000 * (1 + rng() % 100); }, 4096},
    {"delays on a coarse grid: many events share a time",
     [](std::mt19937_64& rng, int) -> Tick { return 1000 * (rng() % 3); }, 3000},
    {"zero delays only", [](std::mt19937_64&, int) -> Tick { return 0; }, 500},
    {"mostly near, a few very far (outliers widen a fitted rung)",
     [](std::mt19937_64& rng, int) -> Tick {
       return rng() % 50 == 0 ? Tick{1} << 50 : rng() % 1000;
     },
     2000},
    {"clusters: bursts at one time far apart",
     [](std::mt19937_64& rng, int step) -> Tick {
       return (step / 500 % 2) ? Tick{1'000'000'000} + rng() % 4 : rng() % 2;
     },
     3000},
    {"log-uniform delays over 40 binary orders",
     [](std::mt19937_64& rng, int) -> Tick { return (Tick{1} << (rng() % 40)) + rng() % 7; }, 2000},
    {"interleaved streams of later and later events (buckets of several sorted runs)",
     [](std::mt19937_64& rng, int step) -> Tick { return 997 * (step % 5) + rng() % 3; }, 3000},
    {"a queue that keeps draining to empty",
     [](std::mt19937_64& rng, int) -> Tick { return rng() % 100000; }, 3},
};

}  // namespace

TEST(EventQueue, LadderMatchesAnOrderedSetForEveryDelayDistribution) {
  for (const Workload& w : kWorkloads) expect_matches_ordered_set(w, 0);
}

TEST(EventQueue, TimesAtTheEndOfTickRangeDoNotOverflowBucketNumbers) {
  for (const Workload& w : kWorkloads) expect_matches_ordered_set(w, kTickMax - (Tick{1} << 52));
  EventQueue q;
  q.push(kTickMax, 0, id(2));
  q.push(kTickMax - 1, 0, id(1));
  q.push(kTickMax, -1, id(3));
  EXPECT_EQ(id_of(q.top()), 1u);
  q.pop();
  EXPECT_EQ(id_of(q.top()), 3u);
  q.pop();
  EXPECT_EQ(id_of(q.top()), 2u);
}

TEST(EventQueue, AnEventPushedIntoTheBucketBeingConsumedComesOutInOrder) {
  // Events at the time being consumed, with a lower priority, must overtake those queued.
  EventQueue q;
  for (std::uintptr_t i = 0; i < 10; ++i) q.push(100 + i, 0, id(i));
  EXPECT_EQ(id_of(q.top()), 0u);
  q.pop();  // now = 100
  q.push(101, -1, id(20));
  q.push(100, 0, id(21));
  std::vector<std::uintptr_t> order;
  while (!q.empty()) {
    order.push_back(id_of(q.top()));
    q.pop();
  }
  EXPECT_EQ(order, (std::vector<std::uintptr_t>{21, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(EventQueue, PeekShowsTheEventsThatFollowTheTop) {
  EventQueue q;
  for (std::uintptr_t i = 1; i <= 3; ++i) q.push(7, 0, id(i));
  EXPECT_EQ(id_of(q.top()), 1u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q.peek(1)), 2u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q.peek(2)), 3u);
  EXPECT_EQ(q.peek(3), nullptr);
}

// The queue's storage follows what is pending, not how long it has run: storage passed from a
// burst to the buckets it moves through is not kept by each of them (a 2048-program run once
// grew it by hundreds of MB).
TEST(EventQueue, StorageStaysBoundedOverALongRunOfBursts) {
  std::mt19937_64 rng(11);
  EventQueue q;
  Tick now = 0;
  std::uintptr_t next = 0;
  const auto run = [&](int steps) {
    for (int step = 0; step < steps; ++step) {
      // About 4000 pending, spread over some microseconds, and every 2000 steps a burst of 600
      // events crowded into one nanosecond, spread over its picoseconds.
      if (step % 2000 == 0) {
        const Tick at = now + 1000 * (1 + rng() % 3000);
        for (int i = 0; i < 600; ++i) q.push(at + rng() % 1000, 0, id(next++));
      }
      while (q.size() < 4000) q.push(now + 1 + rng() % 3'000'000, 0, id(next++));
      now = q.top().time;
      q.pop();
    }
  };
  // The buckets' own storage approaches its bound slowly (the tail of how full a bucket gets):
  // by 1 M steps it is within a quarter of it.
  run(1'000'000);
  const std::size_t early = q.storage_bytes();
  run(7'000'000);
  EXPECT_LE(q.storage_bytes(), early * 3 / 2)
      << "after 1 M steps " << early << " bytes, after 8 M " << q.storage_bytes();
}
