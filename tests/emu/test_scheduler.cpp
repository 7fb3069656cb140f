#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emu/errors.hpp"
#include "emu/scheduler.hpp"
#include "emu/waitable.hpp"

using namespace cubesim::emu;
using testing::HasSubstr;

namespace {

// Checks that `statement` throws E whose what() contains every given fragment.
#define EXPECT_THROW_WITH(statement, E, ...)                                         \
  do {                                                                               \
    try {                                                                            \
      statement;                                                                     \
      ADD_FAILURE() << "expected " #E;                                               \
    } catch (const E& e) {                                                           \
      for (const char* part : {__VA_ARGS__}) EXPECT_THAT(e.what(), HasSubstr(part)); \
    }                                                                                \
  } while (0)

}  // namespace

TEST(Scheduler, CallbacksRunInTimeThenPriorityThenInsertionOrder) {
  Scheduler s;
  std::vector<std::string> order;
  s.schedule_at(20, [&] { order.push_back("t20"); });
  s.schedule_at(10, [&] { order.push_back("t10-first"); });
  s.schedule_at(10, [&] { order.push_back("t10-second"); });
  s.schedule_at(
      10, [&] { order.push_back("t10-urgent"); }, -1);
  const RunResult r = s.run();
  EXPECT_EQ(order, (std::vector<std::string>{"t10-urgent", "t10-first", "t10-second", "t20"}));
  EXPECT_EQ(r.reason, StopReason::idle);
  EXPECT_EQ(r.time, 20u);
  EXPECT_EQ(r.events, 4u);
}

TEST(Scheduler, WaitForAdvancesTheProcessBySimulatedTime) {
  Scheduler s;
  std::vector<Tick> seen;
  s.spawn("p", [&] {
    seen.push_back(s.now());
    s.wait_for(ns(5));
    seen.push_back(s.now());
    s.wait_for(0);  // a zero wait yields to events due now, then continues
    seen.push_back(s.now());
  });
  s.run();
  EXPECT_EQ(seen, (std::vector<Tick>{0, 5'000, 5'000}));
}

TEST(Scheduler, WaitUntilResumesAtTheAbsoluteTime) {
  Scheduler s;
  Tick woke = 0;
  Process& p = s.spawn("p", [&] {
    s.wait_for(3);
    s.wait_until(ns(2));
    woke = s.now();
  });
  s.run();
  EXPECT_EQ(woke, 2'000u);
  EXPECT_EQ(p.state(), Process::State::finished);
  EXPECT_EQ(p.finish_time(), 2'000u);
}

TEST(Scheduler, ProcessesInterleaveDeterministically) {
  auto trace_of_run = [] {
    Scheduler s;
    std::vector<std::string> events;
    std::uint64_t lcg = 12345;
    for (int i = 0; i < 8; ++i) {
      s.spawn("p" + std::to_string(i), [&, i] {
        for (int k = 0; k < 50; ++k) {
          lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
          s.wait_for(1 + (lcg >> 33) % 7);
          events.push_back(fmt::format("{}@{}", i, s.now()));
        }
      });
    }
    s.schedule_at(100, [&] { events.push_back("cb@100"); });
    s.run();
    return events;
  };
  const auto first = trace_of_run();
  EXPECT_EQ(first.size(), 401u);
  EXPECT_EQ(first, trace_of_run());
}

TEST(Scheduler, SpawnedProcessesStartInSpawnOrderAtTheSameTime) {
  Scheduler s;
  std::string order;
  for (char c : std::string("abcd")) s.spawn(std::string(1, c), [&, c] { order += c; });
  s.run();
  EXPECT_EQ(order, "abcd");
}

TEST(Scheduler, CallbacksAndProcessesShareOneTimeline) {
  Scheduler s;
  std::vector<std::string> order;
  s.spawn("p", [&] {
    s.wait_for(10);
    order.push_back("p@10");
    s.schedule_in(5, [&] { order.push_back("cb@15"); });
    s.wait_for(10);
    order.push_back("p@20");
  });
  // Scheduled before p (running at t=0) asks to wake at 10, so it runs first at t=10.
  s.schedule_at(10, [&] { order.push_back("cb@10"); });
  s.run();
  EXPECT_EQ(order, (std::vector<std::string>{"cb@10", "p@10", "cb@15", "p@20"}));
}

TEST(Scheduler, TimeLimitStopsBeforeLaterEventsAndRunCanContinue) {
  Scheduler s;
  int ticks = 0;
  s.spawn("clock", [&] {
    for (int i = 0; i < 10; ++i) {
      s.wait_for(100);
      ++ticks;
    }
  });
  RunResult r = s.run({.until = 450});
  EXPECT_EQ(r.reason, StopReason::time_limit);
  EXPECT_EQ(r.time, 450u);
  EXPECT_EQ(ticks, 4);
  r = s.run();
  EXPECT_EQ(r.reason, StopReason::idle);
  EXPECT_EQ(ticks, 10);
  EXPECT_EQ(r.time, 1'000u);
}

TEST(Scheduler, EventLimitStopsAfterThatManyEvents) {
  Scheduler s;
  int fired = 0;
  for (int i = 0; i < 10; ++i) s.schedule_at(i, [&] { ++fired; });
  const RunResult r = s.run({.max_events = 3});
  EXPECT_EQ(r.reason, StopReason::event_limit);
  EXPECT_EQ(fired, 3);
  EXPECT_EQ(r.events, 3u);
}

TEST(Scheduler, StopsWhenAllProcessesFinishDespitePendingCallbacks) {
  Scheduler s;
  s.schedule_at(ns(1'000), [] {});
  s.spawn("short", [&] { s.wait_for(ns(1)); });
  const RunResult r = s.run({.stop_when_processes_finish = true});
  EXPECT_EQ(r.reason, StopReason::processes_finished);
  EXPECT_EQ(r.time, ns(1));
  EXPECT_EQ(s.pending_events(), 1u);
}

TEST(Scheduler, WaitingIntoThePastEndsTheRunNamingProcessAndTime) {
  Scheduler s;
  s.spawn("pe[0,0,3]", [&] {
    s.wait_for(ns(10));
    s.wait_until(ns(5));
  });
  EXPECT_THROW_WITH(s.run(), ProcessError, "process 'pe[0,0,3]' failed at simulated time 10 ns",
                    "wait_until at 5 ns lies in the past", "already 10 ns");
}

TEST(Scheduler, SchedulingPastTheEndOfTimeIsAnError) {
  Scheduler s;
  s.spawn("overflow", [&] {
    s.wait_for(ns(1));
    s.wait_for(kTickMax);
  });
  EXPECT_THROW_WITH(s.run(), ProcessError, "process 'overflow'", "overflows simulated time");
  EXPECT_THROW(s.schedule_in(kTickMax, [] {}), TimeOverflow);
}

TEST(Scheduler, AThrowingCallbackEndsTheRunNamingItAndTheTime) {
  Scheduler s;
  Completion never(s, "never");
  bool cleaned_up = false;
  s.spawn("bystander", [&] {
    struct Guard {
      bool& flag;
      ~Guard() { flag = true; }
    } guard{cleaned_up};
    never.wait();
  });
  s.schedule_at(
      ns(7), [] { throw std::runtime_error("link table corrupt"); }, 0, "noc-arbiter");
  EXPECT_THROW_WITH(s.run(), CallbackError,
                    "event callback 'noc-arbiter' failed at simulated time 7 ns",
                    "link table corrupt");
  EXPECT_TRUE(cleaned_up);  // blocked processes are unwound, not leaked
  EXPECT_EQ(s.live_processes(), 0u);
  EXPECT_EQ(never.waiters(), 0u);
}

TEST(Scheduler, AThrowingProcessEndsTheRunAndOthersAreUnwound) {
  Scheduler s;
  int finished_normally = 0;
  s.spawn("worker", [&] {
    s.wait_for(ns(100));
    ++finished_normally;
  });
  s.spawn("faulty", [&] {
    s.wait_for(ns(3));
    throw std::out_of_range("address 0xdead is outside every HBM range");
  });
  try {
    s.run();
    FAIL() << "expected ProcessError";
  } catch (const ProcessError& e) {
    EXPECT_EQ(e.process(), "faulty");
    EXPECT_EQ(e.time(), ns(3));
    EXPECT_THAT(e.what(), HasSubstr("address 0xdead is outside every HBM range"));
  }
  EXPECT_EQ(finished_normally, 0);
  EXPECT_EQ(s.live_processes(), 0u);
  EXPECT_EQ(s.pending_events(), 0u);
}

TEST(Scheduler, DeadlockReportNamesEveryBlockedProcessAndWhatItWaitsOn) {
  Scheduler s;
  Completion gemm(s, "gemm-done", 2);
  Semaphore credits(s, "noc-credits");
  s.spawn("pe0", [&] { gemm.wait(); });
  s.spawn("pe1", [&] {
    gemm.arrive();
    credits.acquire();
  });
  s.spawn("pe2", [&] { s.wait_for(ns(4)); });
  try {
    s.run();
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.time(), ns(4));
    ASSERT_EQ(e.blocked().size(), 2u);
    EXPECT_EQ(e.blocked()[0].process, "pe0");
    EXPECT_EQ(e.blocked()[1].process, "pe1");
    EXPECT_EQ(std::string(e.what()),
              "deadlock at simulated time 4 ns: no event is left to run, but 2 processes are "
              "still blocked:\n"
              "  - 'pe0' waits on completion 'gemm-done' (1 of 2 arrivals)\n"
              "  - 'pe1' waits on semaphore 'noc-credits' (0 tokens available)\n"
              "Nothing can fire what they wait on: check that every wait has a matching "
              "fire/post.");
  }
  EXPECT_EQ(s.live_processes(), 0u);
}

TEST(Scheduler, WaitingOutsideAProcessIsAUsageError) {
  Scheduler s;
  EXPECT_THROW_WITH(s.wait_for(1), std::logic_error, "wait_for was called outside a process");
}

TEST(Scheduler, DestroyingASchedulerWithSuspendedProcessesUnwindsThem) {
  int destroyed = 0;
  {
    Scheduler s;
    for (int i = 0; i < 3; ++i) {
      s.spawn("sleeper", [&] {
        struct Guard {
          int& n;
          ~Guard() { ++n; }
        } g{destroyed};
        s.wait_for(ns(1'000));
      });
    }
    s.run({.until = ns(1)});
    EXPECT_EQ(s.live_processes(), 3u);
  }
  EXPECT_EQ(destroyed, 3);
}

TEST(Scheduler, ManyProcessesCanExistAtOnce) {
  Scheduler s(SchedulerOptions{.stack_size = 16 * 1024});
  constexpr int kCount = 4096;
  std::uint64_t sum = 0;
  for (int i = 0; i < kCount; ++i) {
    s.spawn("p", [&, i] {
      s.wait_for(static_cast<Tick>(i % 17));
      sum += static_cast<std::uint64_t>(i);
    });
  }
  s.run();
  EXPECT_EQ(sum, std::uint64_t{kCount} * (kCount - 1) / 2);
}

// ---- Callbacks on a waiting process's stack --------------------------------------------------

namespace {
// Whether two frame addresses lie within one fiber stack of `size` bytes.
bool same_stack(const void* a, const void* b, std::size_t size) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return (x > y ? x - y : y - x) < size;
}
}  // namespace

TEST(Scheduler, CallbacksDueWhileAProcessWaitsRunOnItsStackAsNoProcess) {
  Scheduler s;  // 64 KiB stacks: room for callbacks below a shallow wait
  Completion done(s, "done");
  const void* process_frame = nullptr;
  std::vector<const void*> callback_frames;
  std::vector<const Process*> seen_as_current;
  const auto record = [&] {
    callback_frames.push_back(__builtin_frame_address(0));
    seen_as_current.push_back(s.current_process());
  };
  s.spawn("waiter", [&] {
    process_frame = __builtin_frame_address(0);
    s.schedule_in(ns(5), [&] {
      record();
      s.schedule_in(ns(1), [&] {
        record();
        done.fire();
      });
    });
    done.wait();
    EXPECT_EQ(s.now(), ns(6));
  });
  s.run();
  ASSERT_EQ(callback_frames.size(), 2u);
  for (const void* f : callback_frames) EXPECT_TRUE(same_stack(f, process_frame, 64 * 1024));
  EXPECT_EQ(seen_as_current, (std::vector<const Process*>{nullptr, nullptr}));
}

namespace {
// Recurses until the frame lies `depth` bytes below `top`, then waits on `c`. Measured, not
// counted in frames: sanitizer builds have larger frames.
[[gnu::noinline]] void wait_deep(Completion& c, const char* top, std::size_t depth) {
  const auto used =
      static_cast<std::size_t>(top - static_cast<const char*>(__builtin_frame_address(0)));
  if (used < depth) {
    volatile char pad[256];
    pad[0] = 1;
    wait_deep(c, top, depth);
    pad[1] = pad[0];
  } else {
    c.wait();
  }
}
}  // namespace

TEST(Scheduler, ACallbackRunsOnTheSchedulersStackWhenTheWaitingProcessHasLittleLeft) {
  Scheduler s(SchedulerOptions{.stack_size = 32 * 1024});
  Completion done(s, "done");
  const void* process_frame = nullptr;
  const void* callback_frame = nullptr;
  s.spawn("deep", [&] {
    process_frame = __builtin_frame_address(0);
    // About 20 KiB used, ~12 KiB left: less than a callback may take (16 KiB; 32 with ASan),
    // and room for what a first wait may initialise lazily (sanitizer runtimes do).
    wait_deep(done, static_cast<const char*>(process_frame), 20 * 1024);
  });
  // 48 KiB of locals: on the 32 KiB fiber stack this would hit the guard page.
  s.schedule_at(ns(3), [&] {
    volatile char big[48 * 1024];
    for (std::size_t i = 0; i < sizeof big; i += 512) big[i] = static_cast<char>(i);
    callback_frame = __builtin_frame_address(0);
    done.fire();
  });
  s.run();
  EXPECT_FALSE(same_stack(callback_frame, process_frame, 32 * 1024));
  EXPECT_EQ(s.now(), ns(3));
}

TEST(Scheduler, LimitsHoldForCallbacksDueWhileAProcessWaits) {
  Scheduler s;
  Completion done(s, "done");
  int early = 0;
  s.spawn("waiter", [&] { done.wait(); });
  s.schedule_at(ns(5), [&] { ++early; });
  s.schedule_at(ns(10), [&] { done.fire(); });
  RunResult r = s.run({.until = ns(7)});
  EXPECT_EQ(r.reason, StopReason::time_limit);
  EXPECT_EQ(r.time, ns(7));
  EXPECT_EQ(early, 1);
  EXPECT_FALSE(done.done());
  r = s.run({.max_events = r.events});  // no further event may run
  EXPECT_EQ(r.reason, StopReason::event_limit);
  EXPECT_FALSE(done.done());
  r = s.run();
  EXPECT_EQ(r.reason, StopReason::idle);
  EXPECT_TRUE(done.done());
  EXPECT_EQ(r.time, ns(10));
  EXPECT_EQ(s.live_processes(), 0u);
}
