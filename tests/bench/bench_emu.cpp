// Micro-benchmarks of the simulation core (docs/performance.md records the figures):
//  - a fiber switch round trip through emu::Fiber, beside a raw boost::context::fiber one;
//  - timed wake-ups per second: N processes each looping on wait_for(random 1..100 ns), and
//    the same workload on a straightforward loop (a binary heap of wake-ups and a
//    boost::context::fiber per process, each wake-up a switch in and out of the loop): the
//    baseline issue 18's emu target is stated against, measured in the same run;
//  - plain callback events per second;
//  - resident memory of N blocked processes.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <vector>

#include "emu/event_queue.hpp"
#include "emu/fiber.hpp"
#include "emu/scheduler.hpp"
#include "emu/stack_pool.hpp"

using namespace cubesim::emu;

namespace {

std::uint64_t lcg(std::uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE))) /
         (1024.0 * 1024.0);
}

void BM_RawBoostFiberRoundTrip(benchmark::State& state) {
  namespace bctx = boost::context;
  bool stop = false;
  bctx::fiber f{[&stop](bctx::fiber&& caller) {
    while (!stop) caller = std::move(caller).resume();
    return std::move(caller);
  }};
  for (auto _ : state) f = std::move(f).resume();
  stop = true;
  f = std::move(f).resume();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawBoostFiberRoundTrip);

struct PingPong {
  Fiber main, worker;
  bool stop = false;
};

Fiber& ping_pong_body(void* arg) {
  auto& pp = *static_cast<PingPong*>(arg);
  while (!pp.stop) Fiber::switch_to(pp.worker, pp.main);
  return pp.main;
}

void BM_EmuFiberRoundTrip(benchmark::State& state) {
  StackPool pool;
  PingPong pp;
  pp.worker.start(pool, ping_pong_body, &pp);
  for (auto _ : state) Fiber::switch_to(pp.main, pp.worker);
  pp.stop = true;
  Fiber::switch_to(pp.main, pp.worker);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EmuFiberRoundTrip);

// N processes, each looping on wait_for(1..100 ns drawn from its own LCG). One item = one
// timed wake-up (one event). RSS is measured once all processes are blocked.
void BM_TimedWakeups(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const double rss_before = rss_mib();
  Scheduler s;
  bool stop = false;
  for (int i = 0; i < n; ++i) {
    s.spawn("p" + std::to_string(i), [&s, &stop, i] {
      std::uint64_t seed = static_cast<std::uint64_t>(i) + 1;
      while (!stop) s.wait_for(ns(1 + lcg(seed) % 100));
    });
  }
  s.run({.max_events = static_cast<std::uint64_t>(n) * 4});  // all started and blocked
  state.counters["rss_MiB_blocked"] = rss_mib() - rss_before;
  constexpr std::uint64_t kBatch = 100'000;
  std::uint64_t wakeups = 0;
  for (auto _ : state) {
    const std::uint64_t before = s.events_executed();
    s.run({.max_events = before + kBatch});
    wakeups += s.events_executed() - before;
  }
  stop = true;
  s.run();
  state.SetItemsProcessed(static_cast<std::int64_t>(wakeups));
}
BENCHMARK(BM_TimedWakeups)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

// The baseline: the same processes and delays on the straightforward event loop one would
// write first. The loop pops the earliest (time, push order, process) off a binary heap and
// resumes that process's fiber; the process pushes its next wake-up and switches back.
void BM_HeapFiberTimedWakeups(benchmark::State& state) {
  namespace bctx = boost::context;
  const auto n = static_cast<int>(state.range(0));
  using Wakeup = std::tuple<Tick, std::uint64_t, int>;
  std::priority_queue<Wakeup, std::vector<Wakeup>, std::greater<>> heap;
  std::vector<bctx::fiber> fibers(static_cast<std::size_t>(n));
  Tick now = 0;
  std::uint64_t order = 0;
  bool stop = false;
  for (int i = 0; i < n; ++i) {
    fibers[static_cast<std::size_t>(i)] = bctx::fiber{[&, i](bctx::fiber&& loop) {
      std::uint64_t seed = static_cast<std::uint64_t>(i) + 1;
      while (!stop) {
        heap.emplace(now + ns(1 + lcg(seed) % 100), order++, i);
        loop = std::move(loop).resume();
      }
      return std::move(loop);
    }};
    fibers[static_cast<std::size_t>(i)] = std::move(fibers[static_cast<std::size_t>(i)]).resume();
  }
  constexpr std::uint64_t kBatch = 100'000;
  std::uint64_t wakeups = 0;
  for (auto _ : state) {
    for (std::uint64_t k = 0; k < kBatch; ++k) {
      const auto [t, o, i] = heap.top();
      heap.pop();
      now = t;
      auto& f = fibers[static_cast<std::size_t>(i)];
      f = std::move(f).resume();
    }
    wakeups += kBatch;
  }
  stop = true;
  for (auto& f : fibers) f = std::move(f).resume();  // each returns and ends
  state.SetItemsProcessed(static_cast<std::int64_t>(wakeups));
}
BENCHMARK(BM_HeapFiberTimedWakeups)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

// How many processes can exist at once, and their memory: spawn, block them all, tear down.
void BM_ManyBlockedProcesses(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const double rss_before = rss_mib();
    Scheduler s;
    for (int i = 0; i < n; ++i) s.spawn("p", [&s] { s.wait_for(ns(1'000'000)); });
    s.run({.until = ns(1)});
    state.counters["rss_MiB_blocked"] = rss_mib() - rss_before;
    state.counters["processes"] = static_cast<double>(s.live_processes());
    s.run();
  }
}
BENCHMARK(BM_ManyBlockedProcesses)
    ->Arg(4096)
    ->Arg(65536)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The classic "hold" model of a pending-event set: pop the earliest event, push one 1..100 ns
// later. One item = one hold (replace_top, as a timed wait does).
void BM_EventQueueHold(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  EventQueue q;
  std::uint64_t seed = 1;
  for (std::uint64_t i = 0; i < n; ++i) q.push(ns(1 + lcg(seed) % 100), 0, nullptr);
  for (auto _ : state) {
    const Tick t = q.top_time() + ns(1 + lcg(seed) % 100);
    q.replace_top(t, q.next_order(0), nullptr);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->Arg(64)->Arg(4096);

// 64 self-rescheduling callbacks with random 1..100 ns delays. One item = one callback event.
void BM_CallbackEvents(benchmark::State& state) {
  Scheduler s;
  struct Ticker {
    Scheduler* s;
    std::uint64_t seed;
    bool* stop;
    void operator()() {
      if (!*stop) s->schedule_in(ns(1 + lcg(seed) % 100), *this);
    }
  };
  bool stop = false;
  for (int i = 0; i < 64; ++i) {
    s.schedule_at(0, Ticker{&s, static_cast<std::uint64_t>(i) + 1, &stop});
  }
  constexpr std::uint64_t kBatch = 100'000;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const std::uint64_t before = s.events_executed();
    s.run({.max_events = before + kBatch});
    events += s.events_executed() - before;
  }
  stop = true;
  s.run();
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK(BM_CallbackEvents)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
