#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "emu/fiber.hpp"
#include "emu/scheduler.hpp"
#include "emu/stack_pool.hpp"

using namespace cubesim::emu;

namespace {

// Two fibers that switch to each other directly, recording the interleaving.
struct PingPong {
  Fiber main, a, b;
  std::vector<std::string> log;
};

Fiber& body_a(void* arg) {
  auto& pp = *static_cast<PingPong*>(arg);
  pp.log.push_back("a1");
  Fiber::switch_to(pp.a, pp.b);
  pp.log.push_back("a2");
  Fiber::switch_to(pp.a, pp.b);
  pp.log.push_back("a3");
  return pp.b;  // a finishes; b continues
}

Fiber& body_b(void* arg) {
  auto& pp = *static_cast<PingPong*>(arg);
  pp.log.push_back("b1");
  Fiber::switch_to(pp.b, pp.a);
  pp.log.push_back("b2");
  Fiber::switch_to(pp.b, pp.a);
  pp.log.push_back("b3");
  return pp.main;
}

}  // namespace

TEST(Fiber, ContextsSwitchDirectlyAndFinishIntoTheNextOne) {
  StackPool pool;
  PingPong pp;
  pp.a.start(pool, body_a, &pp);
  pp.b.start(pool, body_b, &pp);
  EXPECT_EQ(pool.in_use(), 2u);
  Fiber::switch_to(pp.main, pp.a);
  EXPECT_EQ(pp.log, (std::vector<std::string>{"a1", "b1", "a2", "b2", "a3", "b3"}));
  EXPECT_FALSE(pp.a.holds_context());
  EXPECT_FALSE(pp.b.holds_context());
  EXPECT_EQ(pool.in_use(), 0u);  // finished fibers gave their stacks back
}

TEST(StackPool, ReusesTheMostRecentlyReleasedStack) {
  StackPool pool(64 * 1024);
  const auto s1 = pool.acquire();
  const auto s2 = pool.acquire();
  EXPECT_NE(s1.slot, s2.slot);
  EXPECT_GE(s1.size, 60u * 1024);
  pool.release(s2.top);
  const auto s3 = pool.acquire();
  EXPECT_EQ(s3.slot, s2.slot);
  EXPECT_TRUE(pool.guarded(s1.slot));
  EXPECT_TRUE(pool.canary_intact(s1.slot));
  pool.release(s1.top);
  pool.release(s3.top);
}

TEST(StackPool, StackTopsAreColouredAcrossCacheSets) {
  StackPool pool;
  std::vector<StackPool::Stack> stacks;
  std::set<std::uintptr_t> page_offsets;
  for (int i = 0; i < 32; ++i) {
    stacks.push_back(pool.acquire());
    page_offsets.insert(reinterpret_cast<std::uintptr_t>(stacks.back().top) % 4096);
  }
  EXPECT_GE(page_offsets.size(), 8u);
  for (const auto& s : stacks) pool.release(s.top);
}

TEST(StackPool, SmallRequestsAreRaisedToTheMinimum) {
  StackPool pool(100);
  EXPECT_EQ(pool.stack_size(), 16u * 1024);
}

namespace {
// Recursion the optimiser cannot flatten: each frame keeps 1 KiB alive across the call.
int deep(int n) {
  if (n > 100'000'000) return n;  // never reached: 64 KiB run out first
  volatile char frame[1024];
  frame[0] = static_cast<char>(n);
  return deep(n + 1) + frame[0];
}
}  // namespace

TEST(FiberDeathTest, StackOverflowNamesTheProcessAndTheStackSetting) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Scheduler s(SchedulerOptions{.stack_size = 32 * 1024});
        s.spawn("pe[0,1,2]", [] { deep(0); });
        s.run();
      },
      testing::ExitedWithCode(3),
      "stack overflow in process 'pe\\[0,1,2\\]'.*32 KiB fiber stack.*raise the stack size");
}
