#pragma once
// The seam between cubesim and Boost.Context: an execution context that can be started on a
// pooled stack and switched to. Nothing outside emu/fiber.* uses Boost.Context; its header is
// included here only so that switch_to() inlines into the scheduler (a switch is the hot path:
// an out-of-line call costs an extra mispredicted return per switch).
//
// Contract:
//  - A default-constructed Fiber is empty. The thread's original context is an empty Fiber
//    that fills in the first time it switches away.
//  - start() prepares a context; its body runs at the first switch_to() into it. The body
//    returns the Fiber to continue with; its stack then goes back to the pool.
//  - switch_to(self, to) suspends the running context into `self` and resumes `to`; it returns
//    when some context switches back to `self`. Contexts switch to each other directly.
//  - Destroying a Fiber that holds a suspended, started context unwinds that context's stack
//    (an exception through its frames); callers should let bodies finish instead.

#include <boost/context/fiber.hpp>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "emu/prefetch.hpp"

namespace cubesim::emu {

class StackPool;

class Fiber {
 public:
  using Body = Fiber& (*)(void* arg);

  Fiber() noexcept = default;
  ~Fiber() = default;
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Returns the pool slot of the new stack (for StackPool::set_owner and canary checks).
  std::uint32_t start(StackPool& pool, Body body, void* arg);
  bool holds_context() const noexcept { return static_cast<bool>(context_); }
  // The lowest usable address of the stack start() gave this fiber.
  const void* stack_bottom() const noexcept { return stack_bottom_; }

  // Asks the CPU to start loading the stack lines a suspended fiber touches first when it
  // resumes (its saved registers and innermost frames). With thousands of fibers those lines
  // live in L3 or DRAM; a scheduler that knows who runs next hides that latency.
  void prefetch() const noexcept {
    if (const auto* sp = static_cast<const char*>(stack_hint_)) {
      for (int line = -4; line < 4; ++line) emu::prefetch(sp + 64 * line);
    }
  }

  // The lowest usable stack address of the fiber running on this thread (nullptr: the thread's
  // own stack). Read by the stack-overflow handler, so it can only ever name the fiber whose
  // stack ran out.
  static const void* running_stack_bottom() noexcept { return running_stack_bottom_; }
  // Drops the held context without unwinding it: for a context that can never be resumed (its
  // stack was abandoned, or it was continued another way).
  void forget() noexcept;

  static void switch_to(Fiber& self, Fiber& to) {
    self.stack_hint_ = __builtin_frame_address(0);
    switched_from_ = &self;
    running_stack_bottom_ = to.stack_bottom_;
    boost::context::fiber from = std::move(to.context_).resume();
    running_stack_bottom_ = self.stack_bottom_;
    if (switched_from_) switched_from_->context_ = std::move(from);
  }

 private:
  // The context that most recently switched away; the context being resumed stores the
  // continuation Boost hands it there. Null when the switching context has finished.
  static inline thread_local Fiber* switched_from_ = nullptr;
  static inline thread_local const void* running_stack_bottom_ = nullptr;
  boost::context::fiber context_;
  void* stack_hint_ = nullptr;  // a frame address near where this fiber was suspended
  const void* stack_bottom_ = nullptr;
};

}  // namespace cubesim::emu
