#include "emu/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

using namespace cubesim::emu;

namespace {
void* id(std::uintptr_t i) { return reinterpret_cast<void*>(i); }
std::uintptr_t id_of(const EventQueue::Entry& e) { return reinterpret_cast<std::uintptr_t>(e.payload); }
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
