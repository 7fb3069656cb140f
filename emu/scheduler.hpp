#pragma once
// The discrete-event scheduler: simulated time, the event loop, and processes (fibers) that
// wait in simulated time.
//
// A process is a body running on its own fiber. When it waits, it schedules its own wake-up
// (or parks on a Waitable) and switches *directly* to the next process due, if the next event
// is a wake-up. So a wake-up costs one context switch, not two.
//
// Callbacks due before the next wake-up run on the waiting process's own stack when it has
// kCallbackStack bytes left below the wait (with the default 64 KiB stacks and kernels that
// do not recurse, always); else, and for stop conditions, on the scheduler's stack. A small
// tl.load is three callbacks and a wake-up of the same process: it now switches no context,
// where it switched twice (and every return after a switch mispredicts, ~15 % of the call).
// Callbacks see no current process either way (current_process() is null).
//
// Contract:
//  - Events run in (time, priority, insertion sequence) order: a run is deterministic.
//  - run() returns when a stop condition holds (RunResult says which); it throws ProcessError,
//    CallbackError or DeadlockError when a run cannot go on, after finishing every process.
//    A process whose stack overflows ends the run with a ProcessError whose cause is a
//    StackOverflowError; its fiber is abandoned, not unwound (abandoned_processes() counts
//    them), so what lived on its stack is never destroyed.
//  - A run stopped by a limit can be continued by calling run() again.
//  - Process objects stay valid until the scheduler is destroyed.

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "emu/event_queue.hpp"
#include "emu/fiber.hpp"
#include "emu/stack_overflow.hpp"
#include "emu/stack_pool.hpp"
#include "emu/time.hpp"

namespace cubesim::emu {

class Scheduler;
class Waitable;

class alignas(64) Process {
 public:
  enum class State : std::uint8_t { ready, running, waiting, finished };

  const std::string& name() const { return name_; }
  State state() const { return state_; }
  Tick finish_time() const { return finish_time_; }  // valid once finished
  // What a waiting process is parked on (nullptr while it waits for a time).
  const Waitable* waiting_on() const { return waiting_on_; }

 private:
  friend class Scheduler;
  friend class Waitable;
  Process(Scheduler& s, std::string name, std::function<void()> body)
      : scheduler_(s), name_(std::move(name)), body_(std::move(body)) {}

  // What a wake-up touches comes first, in the first cache line (the scheduler prefetches it
  // for the processes due next); names and bodies are only read at start and in reports.
  Fiber fiber_;
  State state_ = State::ready;
  bool killed_ = false;
  bool guarded_ = true;
  std::uint32_t stack_slot_ = 0;
  std::uint32_t live_index_ = 0;
  Scheduler& scheduler_;
  const Waitable* waiting_on_ = nullptr;
  Process* next_waiter_ = nullptr;
  Tick finish_time_ = 0;
  std::string name_;
  std::function<void()> body_;
};

struct SchedulerOptions {
  std::size_t stack_size = kDefaultStackSize;  // bytes per process stack (fiber)
};

struct RunLimits {
  Tick until = kTickMax;                    // run events at times <= until
  std::uint64_t max_events = UINT64_MAX;    // counted over the scheduler's lifetime
  bool stop_when_processes_finish = false;  // ignore callbacks left once no process lives
};

enum class StopReason {
  idle,                // no event left and no process alive
  processes_finished,  // stop_when_processes_finish and none is alive
  time_limit,          // next event lies after `until` (now() == until)
  event_limit,         // max_events reached
};

struct RunResult {
  StopReason reason;
  Tick time;
  std::uint64_t events;
};

class Scheduler {
 public:
  using Callback = std::function<void()>;

  explicit Scheduler(SchedulerOptions options = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Tick now() const { return now_; }
  std::uint64_t events_executed() const { return events_; }
  std::size_t live_processes() const { return live_.size(); }
  std::size_t pending_events() const { return queue_.size(); }
  std::size_t abandoned_processes() const { return abandoned_; }

  // Callbacks run as no process (see above for on which stack). `label` names the callback in
  // error reports; it is kept as a pointer, so pass a string literal (or text that outlives
  // the event). `cb` is any callable. One that is trivially copyable and at most two pointers
  // big (a lambda capturing `this` and a reference: every event of a packet's hops) is kept in
  // the event's node as it is, not in a std::function: no moves, no manager calls.
  template <class F>
  void schedule_at(Tick time, F&& cb, Priority priority = 0, const char* label = "callback");
  template <class F>
  void schedule_in(Tick delay, F&& cb, Priority priority = 0, const char* label = "callback") {
    schedule_at(checked_add(now_, delay, "schedule_in"), std::forward<F>(cb), priority, label);
  }

  // Starts `body` as a process at the current time (after events already due now).
  Process& spawn(std::string name, std::function<void()> body);

  // From inside a process only.
  void wait_for(Tick delay);
  void wait_until(Tick time);  // time >= now(); waiting into the past is an error
  Process* current_process() const { return current_; }

  RunResult run(RunLimits limits = {});

 private:
  friend class Waitable;
  struct CallbackNode {
    static constexpr std::size_t kInlineBytes = 2 * sizeof(void*);
    void (*invoke)(CallbackNode&) = nullptr;  // calls the inline callable or `fn`
    alignas(void*) unsigned char inline_fn[kInlineBytes];
    Callback fn;  // callables that are not stored inline
    const char* label = nullptr;
    CallbackNode* next_free = nullptr;
  };
  template <class F>
  static constexpr bool kStoredInline = std::is_trivially_copyable_v<F> &&
                                        sizeof(F) <= CallbackNode::kInlineBytes &&
                                        alignof(F) <= alignof(void*);

  static Fiber& process_main(void* arg);
  Process& require_process(const char* call) const;
  void check_schedulable(Tick time, const char* call) const;
  void push_wake(Process& p, Tick time);
  void sleep_until(Process& self, Tick time);  // a timed wait of the running process
  void suspend(Process& self);                 // park the running process; returns when it is woken
  // Runs the next event on `self`'s stack if it is a callback that may run now and the stack
  // has room; false when the scheduler's loop must take over.
  bool run_callback_here(Process& self);
  void resumed(Process& self);  // bookkeeping once a parked process runs again
  void check_canary(const Process& p) const;
  // Runs a callback popped at now() and frees its node; false when it threw (error_ says why,
  // and the run is stopping).
  bool invoke(CallbackNode* node);
  void prefetch_next() const;  // warm the caches for the processes due in a few wake-ups
  Process* pop_due_wake();     // the next event, if it is a wake-up allowed to run now
  void finish(Process& p);
  void end_run();  // finish every process and drop every event
  RunResult run_loop(RunLimits limits);
  [[noreturn]] void abandon_overflowed(const detail::FaultAttribution& fault);
  [[noreturn]] void fail(std::exception_ptr error);
  CallbackNode* new_node(const char* label);
  void free_node(CallbackNode* n);
  [[noreturn]] static void empty_callback(const char* label);

  Tick now_ = 0;
  std::uint64_t events_ = 0;
  RunLimits limits_{};
  EventQueue queue_;
  StackPool stacks_;
  Fiber main_fiber_;
  Process* current_ = nullptr;
  bool stopping_ = false;  // an error is pending or processes are being finished
  std::exception_ptr error_;
  std::size_t abandoned_ = 0;
  std::vector<std::unique_ptr<Process>> processes_;  // in spawn order
  std::vector<Process*> live_;
  std::deque<CallbackNode> nodes_;
  CallbackNode* free_nodes_ = nullptr;
};

template <class F>
void Scheduler::schedule_at(Tick time, F&& cb, Priority priority, const char* label) {
  using Fn = std::decay_t<F>;
  if (time < now_) [[unlikely]]
    check_schedulable(time, "schedule_at");  // throws
  if constexpr (std::is_same_v<Fn, Callback> || std::is_pointer_v<Fn>) {
    if (!cb) empty_callback(label);
  }
  CallbackNode* n = new_node(label);
  if constexpr (kStoredInline<Fn>) {
    ::new (static_cast<void*>(n->inline_fn)) Fn(std::forward<F>(cb));
    n->invoke = [](CallbackNode& node) {
      (*std::launder(reinterpret_cast<Fn*>(node.inline_fn)))();
    };
  } else {
    n->fn = std::forward<F>(cb);
    n->invoke = [](CallbackNode& node) { node.fn(); };
  }
  queue_.push(time, priority, n);
}

// Something a process can block on until a callback or another process fires it.
class Waitable {
 public:
  Waitable(Scheduler& scheduler, std::string name)
      : scheduler_(scheduler), name_(std::move(name)) {}
  virtual ~Waitable() = default;
  Waitable(const Waitable&) = delete;
  Waitable& operator=(const Waitable&) = delete;

  const std::string& name() const { return name_; }
  // For deadlock reports: "completion 'gemm-done' (1 of 2 arrivals)".
  virtual std::string describe() const = 0;
  std::size_t waiters() const { return waiter_count_; }

 protected:
  // Parks the calling process on this waitable until wake_*() picks it.
  void block();
  // Schedules the first waiter to resume at the current time. False when nobody waits.
  bool wake_one();
  void wake_all();
  Scheduler& scheduler() const { return scheduler_; }

 private:
  void remove(Process& p);

  Scheduler& scheduler_;
  std::string name_;
  Process* head_ = nullptr;
  Process* tail_ = nullptr;
  std::size_t waiter_count_ = 0;
};

}  // namespace cubesim::emu
