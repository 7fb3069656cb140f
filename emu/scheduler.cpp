#include "emu/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "emu/errors.hpp"
#include "emu/log.hpp"
#include "emu/stack_overflow.hpp"

namespace cubesim::emu {
namespace {

// Prefetch distances, in wake-ups: the Process of the wake-up due kProcessAhead from now, and
// the stack lines of the one due kStackAhead from now (its Process line, fetched two wake-ups
// earlier, says where its stack pointer is; reading it earlier would stall on that miss).
// Measured with 4096 processes (interleaved runs): 4/2 is 1.6x no prefetch; 4/3 equal within
// noise; 6/3 and 8/4 slower (lines evicted before use); one-stage 2/2 gains only ~20 %.
constexpr std::size_t kProcessAhead = 4;
constexpr std::size_t kStackAhead = 2;

// The stack a callback may use on a waiting process's stack (run_callback_here); with less
// left below the wait, callbacks wait for the scheduler's own stack. The deepest callback
// measured used 3.4 KiB (stack painting; every kernel on tiny and default, both network
// models, traces on; docs/simulation-core.md).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::uintptr_t kCallbackStack = 32 * 1024;  // sanitizer frames are larger
#else
constexpr std::uintptr_t kCallbackStack = 16 * 1024;
#endif

// Queue payloads are either a CallbackNode* or a Process* with the low bit set.
constexpr std::uintptr_t kWakeTag = 1;

void* wake_payload(Process* p) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) | kWakeTag);
}
bool is_wake(const void* payload) {
  return (reinterpret_cast<std::uintptr_t>(payload) & kWakeTag) != 0;
}
Process* wake_process(void* payload) {
  return reinterpret_cast<Process*>(reinterpret_cast<std::uintptr_t>(payload) & ~kWakeTag);
}

// Thrown out of a wait to finish a process when a run ends early. Not a std::exception, so a
// process's `catch (const std::exception&)` does not swallow it.
struct Killed {};

}  // namespace

Scheduler::Scheduler(SchedulerOptions options) : stacks_(options.stack_size) {}

Scheduler::~Scheduler() {
  if (current_ != nullptr) {
    log().critical("a Scheduler was destroyed from inside its own process '{}'", current_->name());
    std::terminate();
  }
  end_run();
}

void Scheduler::check_schedulable(Tick time, const char* call) const {
  if (time < now_) {
    throw TimeError(fmt::format("{} at {} lies in the past: the simulated time is already {}", call,
                                format_time(time), format_time(now_)));
  }
}

Scheduler::CallbackNode* Scheduler::new_node(const char* label) {
  CallbackNode* n = free_nodes_;
  if (n != nullptr) {
    free_nodes_ = n->next_free;
  } else {
    n = &nodes_.emplace_back();
  }
  n->label = label;
  return n;
}

void Scheduler::free_node(CallbackNode* n) {
  if (n->fn) n->fn = nullptr;  // inline callables are trivially destructible
  n->next_free = free_nodes_;
  free_nodes_ = n;
}

void Scheduler::empty_callback(const char* label) {
  throw std::invalid_argument(fmt::format("schedule_at: callback '{}' is empty", label));
}

Process& Scheduler::spawn(std::string name, std::function<void()> body) {
  if (!body) throw std::invalid_argument(fmt::format("spawn: process '{}' has no body", name));
  auto owned = std::unique_ptr<Process>(new Process(*this, std::move(name), std::move(body)));
  Process& p = *owned;
  p.stack_slot_ = p.fiber_.start(stacks_, &Scheduler::process_main, &p);
  p.guarded_ = stacks_.guarded(p.stack_slot_);
  stacks_.set_owner(p.stack_slot_, p.name_.c_str());
  p.live_index_ = static_cast<std::uint32_t>(live_.size());
  live_.push_back(&p);
  processes_.push_back(std::move(owned));
  push_wake(p, now_);
  return p;
}

Process& Scheduler::require_process(const char* call) const {
  if (current_ == nullptr) {
    throw std::logic_error(fmt::format(
        "{} was called outside a process: only a body started with spawn() can wait", call));
  }
  return *current_;
}

void Scheduler::push_wake(Process& p, Tick time) {
  queue_.push(time, 0, wake_payload(&p));
}

void Scheduler::wait_for(Tick delay) {
  Process& self = require_process("wait_for");
  sleep_until(self, checked_add(now_, delay, "wait_for"));
}

void Scheduler::wait_until(Tick time) {
  Process& self = require_process("wait_until");
  check_schedulable(time, "wait_until");
  sleep_until(self, time);
}

void Scheduler::sleep_until(Process& self, Tick time) {
  check_canary(self);  // before its wake-up is queued: an overflow error leaves nothing behind
  // Fast paths, equivalent to push_wake() + suspend() but with at most one heap walk: the
  // timed wake-up is the hot loop of every simulation.
  if (!stopping_ && time <= limits_.until && events_ < limits_.max_events) {
    const std::uint64_t order = queue_.next_order(0);
    if (queue_.would_be_first(time, order)) {
      // Nothing is due before this wake-up: it happens at once, with no switch.
      now_ = time;
      ++events_;
      if (self.killed_) throw Killed{};
      return;
    }
    if (is_wake(queue_.top_payload())) {
      // Hand over directly to the process due next; its slot in the heap becomes ours.
      Process* next = wake_process(queue_.top_payload());
      now_ = queue_.top_time();
      ++events_;
      queue_.replace_top(time, order, wake_payload(&self));
      prefetch_next();
      self.state_ = Process::State::waiting;
      Fiber::switch_to(self.fiber_, next->fiber_);
      resumed(self);
      return;
    }
    queue_.push_with_order(time, order, wake_payload(&self));
  } else {
    push_wake(self, time);
  }
  suspend(self);
}

Process* Scheduler::pop_due_wake() {
  if (stopping_ || queue_.empty()) return nullptr;
  void* payload = queue_.top_payload();
  const Tick time = queue_.top_time();
  if (!is_wake(payload) || time > limits_.until || events_ >= limits_.max_events) return nullptr;
  now_ = time;
  ++events_;
  queue_.pop();
  prefetch_next();
  return wake_process(payload);
}

void Scheduler::prefetch_next() const {
  // The queue knows the next few wake-ups: the bucket being consumed is sorted. Each wake-up
  // issues one prefetch of each kind, so the nearer ones are already in flight.
  if (void* later = queue_.peek(kProcessAhead); later != nullptr && is_wake(later)) {
    prefetch(wake_process(later));
  }
  if (void* soon = queue_.peek(kStackAhead); soon != nullptr && is_wake(soon)) {
    wake_process(soon)->fiber_.prefetch();
  }
}

void Scheduler::check_canary(const Process& p) const {
  // On the process's own stack: its frames are whole (what overflowed has returned), so the
  // error unwinds it like any other.
  if (!p.guarded_ && !stacks_.canary_intact(p.stack_slot_)) [[unlikely]]
    throw StackOverflowError(stacks_.stack_size(),
                             "its unguarded stack's canary word was overwritten");
}

void Scheduler::suspend(Process& self) {
  self.state_ = Process::State::waiting;
  check_canary(self);
  Process* next = pop_due_wake();
  while (next == nullptr && run_callback_here(self)) next = pop_due_wake();
  if (next != &self) Fiber::switch_to(self.fiber_, next ? next->fiber_ : main_fiber_);
  resumed(self);
}

bool Scheduler::run_callback_here(Process& self) {
  if (stopping_ || queue_.empty()) return false;
  const EventQueue::Entry& e = queue_.top();
  if (is_wake(e.payload) || e.time > limits_.until || events_ >= limits_.max_events) return false;
  const auto frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const auto bottom = reinterpret_cast<std::uintptr_t>(self.fiber_.stack_bottom());
  if (frame - bottom < kCallbackStack) return false;
  auto* node = static_cast<CallbackNode*>(e.payload);
  now_ = e.time;
  ++events_;
  queue_.pop();
  current_ = nullptr;
  // A callback that throws ends the run as it would on the scheduler's stack: the loop there
  // finds error_ once this process has switched to it.
  return invoke(node);
}

bool Scheduler::invoke(CallbackNode* node) {
  try {
    node->invoke(*node);
  } catch (...) {
    error_ = std::make_exception_ptr(CallbackError(node->label, now_, std::current_exception()));
    stopping_ = true;
    free_node(node);
    return false;
  }
  free_node(node);
  return true;
}

void Scheduler::resumed(Process& self) {
  current_ = &self;
  self.state_ = Process::State::running;
  if (self.killed_) throw Killed{};
}

Fiber& Scheduler::process_main(void* arg) {
  Process& p = *static_cast<Process*>(arg);
  Scheduler& s = p.scheduler_;
  s.current_ = &p;
  p.state_ = Process::State::running;
  if (!p.killed_) {
    try {
      p.body_();
    } catch (const Killed&) {
      // The run is ending; nothing to report.
    } catch (...) {
      if (!s.error_) {
        s.error_ = std::make_exception_ptr(ProcessError(p.name_, s.now_, std::current_exception()));
      }
      s.stopping_ = true;
    }
  }
  s.finish(p);
  Process* next = s.pop_due_wake();
  return next ? next->fiber_ : s.main_fiber_;
}

void Scheduler::finish(Process& p) {
  if (!p.guarded_ && !stacks_.canary_intact(p.stack_slot_) && !error_) {
    error_ = std::make_exception_ptr(ProcessError(
        p.name_, now_,
        std::make_exception_ptr(StackOverflowError(
            stacks_.stack_size(), "its unguarded stack's canary word was overwritten"))));
    stopping_ = true;
  }
  p.body_ = nullptr;
  p.state_ = Process::State::finished;
  p.finish_time_ = now_;
  Process* moved = live_.back();
  live_[p.live_index_] = moved;
  moved->live_index_ = p.live_index_;
  live_.pop_back();
}

void Scheduler::end_run() {
  stopping_ = true;
  for (auto& owned : processes_) {
    Process& p = *owned;
    if (p.state_ == Process::State::finished) continue;
    p.killed_ = true;
    Fiber::switch_to(main_fiber_, p.fiber_);
    current_ = nullptr;
  }
  while (!queue_.empty()) {
    void* payload = queue_.top_payload();
    queue_.pop();
    if (!is_wake(payload)) free_node(static_cast<CallbackNode*>(payload));
  }
  stopping_ = false;
}

void Scheduler::fail(std::exception_ptr error) {
  error_ = nullptr;
  end_run();
  std::rethrow_exception(error);
}

RunResult Scheduler::run(RunLimits limits) {
  if (current_ != nullptr) {
    throw std::logic_error(
        fmt::format("run() was called from inside process '{}'", current_->name()));
  }
  limits_ = limits;
  LogClockScope clock(&now_);
  // A process whose stack overflows comes back here from the signal handler (siglongjmp): its
  // fiber is abandoned, the others are finished as for any error. Armed once per run() call;
  // sigsetjmp saves the signal mask, which the handler's return would otherwise leave blocking
  // SIGSEGV.
  detail::OverflowRecovery recovery;
  detail::RecoveryScope armed(&recovery);
  if (sigsetjmp(recovery.env, 1) != 0) {
    detail::back_on_thread_stack(__builtin_frame_address(0));
    abandon_overflowed(recovery.fault);
  }
  return run_loop(limits);
}

void Scheduler::abandon_overflowed(const detail::FaultAttribution& fault) {
  // The thread's own context was left inside a switch that will never return.
  main_fiber_.forget();
  Process* victim = nullptr;
  for (const auto& p : processes_)
    if (p->state_ != Process::State::finished && p->fiber_.stack_bottom() == fault.stack_bottom)
      victim = p.get();
  current_ = nullptr;
  const std::string name = victim ? victim->name_ : std::string(fault.label ? fault.label : "?");
  if (victim) {
    // Finished without unwinding: its stack stays taken (never reused) until the scheduler goes.
    victim->body_ = nullptr;
    victim->state_ = Process::State::finished;
    victim->finish_time_ = now_;
    Process* moved = live_.back();
    live_[victim->live_index_] = moved;
    moved->live_index_ = victim->live_index_;
    live_.pop_back();
    ++abandoned_;
  }
  const char* how = fault.guard_hit ? "it touched the guard page below the stack"
                                    : "it ran past the end of its unguarded stack";
  fail(std::make_exception_ptr(ProcessError(
      name, now_, std::make_exception_ptr(StackOverflowError(fault.stack_size, how)))));
}

RunResult Scheduler::run_loop(RunLimits limits) {
  for (;;) {
    if (Process* p = pop_due_wake()) {
      Fiber::switch_to(main_fiber_, p->fiber_);
      current_ = nullptr;
      if (error_) fail(error_);
      continue;
    }
    if (limits.stop_when_processes_finish && live_.empty()) {
      return {StopReason::processes_finished, now_, events_};
    }
    if (queue_.empty()) {
      if (live_.empty()) return {StopReason::idle, now_, events_};
      std::vector<DeadlockError::Blocked> blocked;
      for (const auto& p : processes_) {
        if (p->state_ == Process::State::finished) continue;
        blocked.push_back({p->name_, p->waiting_on_ ? p->waiting_on_->describe()
                                                    : std::string("nothing it can be woken from")});
      }
      fail(std::make_exception_ptr(DeadlockError(now_, std::move(blocked))));
    }
    const EventQueue::Entry e = queue_.top();
    if (e.time > limits.until) {
      now_ = std::max(now_, limits.until);
      return {StopReason::time_limit, now_, events_};
    }
    if (events_ >= limits.max_events) return {StopReason::event_limit, now_, events_};
    queue_.pop();
    now_ = e.time;
    ++events_;
    if (!invoke(static_cast<CallbackNode*>(e.payload))) fail(error_);
  }
}

// Waitable ----------------------------------------------------------------------------------

void Waitable::block() {
  Process& self = scheduler_.require_process("wait");
  if (self.killed_) throw Killed{};
  self.next_waiter_ = nullptr;
  if (tail_) {
    tail_->next_waiter_ = &self;
  } else {
    head_ = &self;
  }
  tail_ = &self;
  ++waiter_count_;
  self.waiting_on_ = this;
  try {
    scheduler_.suspend(self);
  } catch (...) {  // killed, or its canary found an overflow before it could park
    if (self.waiting_on_ == this) remove(self);
    self.waiting_on_ = nullptr;
    throw;
  }
}

bool Waitable::wake_one() {
  Process* p = head_;
  if (p == nullptr) return false;
  head_ = p->next_waiter_;
  if (head_ == nullptr) tail_ = nullptr;
  p->next_waiter_ = nullptr;
  p->waiting_on_ = nullptr;
  --waiter_count_;
  scheduler_.push_wake(*p, scheduler_.now_);
  return true;
}

void Waitable::wake_all() {
  while (wake_one()) {
  }
}

void Waitable::remove(Process& p) {
  Process* prev = nullptr;
  for (Process* q = head_; q != nullptr; prev = q, q = q->next_waiter_) {
    if (q != &p) continue;
    (prev ? prev->next_waiter_ : head_) = q->next_waiter_;
    if (tail_ == q) tail_ = prev;
    --waiter_count_;
    return;
  }
}

}  // namespace cubesim::emu
