#pragma once
// A software prefetch the compiler cannot drop.
//
// GCC treats __builtin_prefetch as having no side effects, so a function that only prefetches
// is inferred `pure` and a call to it whose result is unused is deleted as dead code. That is
// what happened to the scheduler's prefetch of the next processes: it compiled to nothing. An
// `asm volatile` prefetch is never removed, wherever it is inlined or called from.

namespace cubesim::emu {

inline void prefetch(const void* address) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
  asm volatile("" : : "r"(address));  // keeps the function from being inferred pure
#endif
}

}  // namespace cubesim::emu
