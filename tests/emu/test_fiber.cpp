#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "emu/errors.hpp"
#include "emu/fiber.hpp"
#include "emu/scheduler.hpp"
#include "emu/stack_overflow.hpp"
#include "emu/stack_pool.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

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

// Frames that never return (a context switch's entry frame, an abandoned fiber's) leave their
// redzones poisoned in a sanitizer build; a recycled stack, and memory the pool gave back, must
// be as clean as a fresh one, or the next user's first write is reported.
TEST(StackPool, HandsOutStacksWithoutTheLastUsersPoison) {
#if defined(__SANITIZE_ADDRESS__)
  const auto usable = [](const StackPool::Stack& st) {
    return static_cast<char*>(st.top) - st.size;
  };
  char* low = nullptr;
  std::size_t bytes = 0;
  {
    StackPool pool(64 * 1024);
    const auto first = pool.acquire();
    __asan_poison_memory_region(usable(first), first.size);
    pool.release(first.top);
    const auto again = pool.acquire();
    ASSERT_EQ(again.slot, first.slot);
    EXPECT_EQ(__asan_region_is_poisoned(usable(again), again.size), nullptr);
    __asan_poison_memory_region(usable(again), again.size);  // abandoned: never released
    low = usable(again);
    bytes = again.size;
  }
  EXPECT_EQ(__asan_region_is_poisoned(low, bytes), nullptr);
#else
  GTEST_SKIP() << "only a sanitizer build keeps shadow poison";
#endif
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

template <typename E>
const E* cause_as(const ProcessError& e, std::string& what) {
  try {
    std::rethrow_exception(e.cause());
  } catch (const E& c) {
    what = c.what();
    return &c;  // the exception object outlives this frame: e holds it
  } catch (...) {
  }
  return nullptr;
}

TEST(StackOverflow, EndsTheRunWithAnErrorNamingTheProcessAndTheProgramLivesOn) {
  Scheduler s(SchedulerOptions{.stack_size = 32 * 1024});
  bool waiter_finished = false;
  s.spawn("pe[0,1,2]", [] { deep(0); });
  s.spawn("waiter", [&] {
    s.wait_for(ns(1000));
    waiter_finished = true;
  });
  try {
    s.run();
    FAIL() << "no error";
  } catch (const ProcessError& e) {
    EXPECT_EQ(e.process(), "pe[0,1,2]");
    std::string what;
    const auto* so = cause_as<StackOverflowError>(e, what);
    ASSERT_NE(so, nullptr) << e.what();
    EXPECT_EQ(so->stack_size(), 32u * 1024);
    EXPECT_NE(what.find("32 KiB fiber stack"), std::string::npos) << what;
    EXPECT_NE(what.find("guard page"), std::string::npos) << what;
    EXPECT_NE(what.find("raise the stack size"), std::string::npos) << what;
  }
  EXPECT_FALSE(waiter_finished);  // finished (unwound) when the run stopped
  EXPECT_EQ(s.abandoned_processes(), 1u);
  EXPECT_EQ(s.live_processes(), 0u);
  // The scheduler goes on with new processes.
  bool ran = false;
  s.spawn("after", [&] {
    s.wait_for(ns(5));
    ran = true;
  });
  s.run();
  EXPECT_TRUE(ran);
}

TEST(StackOverflow, AProcessHandedControlDirectlyOverflowsAndTheOneBeforeItIsUnwound) {
  // "q" hands over straight to "p" (no switch through the scheduler's own stack), so when p
  // overflows the scheduler's context is one that will never be resumed.
  Scheduler s(SchedulerOptions{.stack_size = 32 * 1024});
  int unwound = 0;
  struct Count {
    int& n;
    ~Count() { ++n; }
  };
  s.spawn("p", [&] {
    s.wait_for(ns(10));
    deep(0);
  });
  s.spawn("q", [&] {
    Count c{unwound};
    s.wait_for(ns(5));
    s.wait_for(ns(20));
  });
  EXPECT_THROW(s.run(), ProcessError);
  EXPECT_EQ(unwound, 1);
  EXPECT_EQ(s.abandoned_processes(), 1u);
}

TEST(StackOverflow, TheHandlerNamesTheRunningFiberNeverTheStackItRanInto) {
  StackPool pool(64 * 1024);
  const auto below = pool.acquire(), above = pool.acquire();  // adjacent slots of one slab
  pool.set_owner(below.slot, "below");
  pool.set_owner(above.slot, "above");
  const auto bottom = [](const StackPool::Stack& st) {
    return reinterpret_cast<std::uintptr_t>(st.top) - st.size;
  };
  const std::uintptr_t b_below = bottom(below), b_above = bottom(above);
  ASSERT_LT(b_below, b_above);
  auto as_ptr = [](std::uintptr_t a) { return reinterpret_cast<const void*>(a); };
  // "above" runs past its bottom into its own guard page.
  auto f = detail::attribute_fault(b_above - 128, b_above - 96, as_ptr(b_above));
  EXPECT_TRUE(f.overflow);
  EXPECT_STREQ(f.label, "above");
  EXPECT_TRUE(f.guard_hit);
  EXPECT_EQ(f.stack_size, pool.stack_size());
  // "above" ran all the way through "below"'s stack (as on unguarded slabs) and hit its guard:
  // still "above", the fiber that was running.
  f = detail::attribute_fault(b_below - 128, b_below - 64, as_ptr(b_above));
  EXPECT_TRUE(f.overflow);
  EXPECT_STREQ(f.label, "above");
  EXPECT_FALSE(f.guard_hit);
  // A wild pointer into a guard page while the stack is fine: not an overflow at all.
  f = detail::attribute_fault(b_above - 128, b_below + 8192, as_ptr(b_below));
  EXPECT_FALSE(f.overflow);
  // The thread's own stack, or memory that is no fiber's stack: nobody is named.
  EXPECT_FALSE(detail::attribute_fault(b_above - 128, b_above - 96, nullptr).overflow);
  EXPECT_FALSE(
      detail::attribute_fault(64, 32, as_ptr(reinterpret_cast<std::uintptr_t>(&f))).overflow);
  pool.release(below.top);
  pool.release(above.top);
}
