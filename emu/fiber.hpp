#pragma once
// The seam between cubesim and Boost.Context: an execution context that can be started on a
// pooled stack and switched to. Nothing outside fiber.cpp sees Boost.Context.
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

#include <cstddef>
#include <cstdint>

namespace cubesim::emu {

class StackPool;

class Fiber {
 public:
  using Body = Fiber& (*)(void* arg);

  Fiber() noexcept;
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Returns the pool slot of the new stack (for StackPool::set_owner and canary checks).
  std::uint32_t start(StackPool& pool, Body body, void* arg);
  bool holds_context() const noexcept;

  static void switch_to(Fiber& self, Fiber& to);

 private:
  // A boost::context::fiber is one pointer; it lives here without its header leaking out.
  alignas(void*) unsigned char storage_[sizeof(void*)];
};

}  // namespace cubesim::emu
