#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emu/errors.hpp"
#include "emu/waitable.hpp"

using namespace cubesim::emu;

TEST(Completion, WakesEveryWaiterAtTheFiringTimeInBlockingOrder) {
  Scheduler s;
  Completion done(s, "dma");
  std::vector<std::string> woke;
  for (const char* name : {"a", "b", "c"}) {
    s.spawn(name, [&, name] {
      done.wait();
      woke.push_back(std::string(name) + "@" + std::to_string(s.now()));
    });
  }
  s.schedule_at(ns(8), [&] { done.fire(); });
  s.run();
  EXPECT_EQ(woke, (std::vector<std::string>{"a@8000", "b@8000", "c@8000"}));
  EXPECT_TRUE(done.done());
}

TEST(Completion, WaitAfterFiringReturnsAtOnce) {
  Scheduler s;
  Completion done(s, "ready");
  Tick when = 1;
  s.spawn("late", [&] {
    s.wait_for(ns(5));
    done.wait();
    when = s.now();
  });
  s.spawn("early", [&] { done.fire(); });
  s.run();
  EXPECT_EQ(when, ns(5));
}

TEST(Completion, CountingCompletionFiresOnTheLastArrival) {
  Scheduler s;
  Completion all(s, "all-pes", 3);
  Tick fired_at = 0;
  s.spawn("joiner", [&] {
    all.wait();
    fired_at = s.now();
  });
  for (int i = 1; i <= 3; ++i) {
    s.spawn("pe" + std::to_string(i), [&, i] {
      s.wait_for(ns(static_cast<std::uint64_t>(10 * i)));
      all.arrive();
    });
  }
  s.run();
  EXPECT_EQ(fired_at, ns(30));
  EXPECT_EQ(all.arrived(), 3u);
}

TEST(Completion, FiringMoreOftenThanExpectedIsAnError) {
  Scheduler s;
  Completion once(s, "once");
  s.spawn("twice", [&] {
    once.fire();
    once.fire();
  });
  try {
    s.run();
    FAIL();
  } catch (const ProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("completion 'once' expects 1 arrival(s) but got 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(Completion, ZeroExpectedArrivalsIsRejected) {
  Scheduler s;
  EXPECT_THROW(Completion(s, "nothing", 0), std::invalid_argument);
}

TEST(Completion, ProcessCanFireAnotherProcessAwake) {
  Scheduler s;
  Completion ping(s, "ping"), pong(s, "pong");
  std::vector<std::string> log;
  s.spawn("server", [&] {
    ping.wait();
    log.push_back("ping@" + std::to_string(s.now()));
    s.wait_for(3);
    pong.fire();
  });
  s.spawn("client", [&] {
    s.wait_for(2);
    ping.fire();
    pong.wait();
    log.push_back("pong@" + std::to_string(s.now()));
  });
  s.run();
  EXPECT_EQ(log, (std::vector<std::string>{"ping@2", "pong@5"}));
}

TEST(Semaphore, HandsTokensToWaitersInFifoOrder) {
  Scheduler s;
  Semaphore credits(s, "credits");
  std::vector<std::string> got;
  for (const char* name : {"first", "second", "third"}) {
    s.spawn(name, [&, name] {
      credits.acquire();
      got.push_back(std::string(name) + "@" + std::to_string(s.now()));
    });
  }
  s.schedule_at(10, [&] { credits.post(2); });
  s.schedule_at(20, [&] { credits.post(); });
  s.run();
  EXPECT_EQ(got, (std::vector<std::string>{"first@10", "second@10", "third@20"}));
  EXPECT_EQ(credits.available(), 0u);
}

TEST(Semaphore, TokensPostedWithNoWaiterAreKept) {
  Scheduler s;
  Semaphore sem(s, "sem", 1);
  sem.post(2);
  EXPECT_EQ(sem.available(), 3u);
  EXPECT_TRUE(sem.try_acquire());
  int acquired = 0;
  s.spawn("taker", [&] {
    sem.acquire();
    sem.acquire();
    ++acquired;
  });
  s.run();
  EXPECT_EQ(acquired, 1);
  EXPECT_EQ(sem.available(), 0u);
}

TEST(Semaphore, ALateAcquireCannotOvertakeAWokenWaiter) {
  Scheduler s;
  Semaphore sem(s, "sem");
  std::vector<std::string> order;
  s.spawn("waiter", [&] {
    sem.acquire();
    order.push_back("waiter");
  });
  s.spawn("poster", [&] {
    s.wait_for(1);
    sem.post();
    // The token went to "waiter"; this one must block rather than take it.
    EXPECT_FALSE(sem.try_acquire());
    order.push_back("poster");
  });
  s.run();
  EXPECT_EQ(order, (std::vector<std::string>{"poster", "waiter"}));
}
