#pragma once
// Turns a fiber's stack overflow into an error naming the process, instead of a bare segfault.
// Internal to emu/: StackPool registers its slabs here, Scheduler::run() arms a recovery point,
// and the fatal-signal handler (emu/fatal_signal.hpp) asks attribute_fault about each SIGSEGV,
// so an overflow ends the run with an exception and the program lives on.
//
// Attribution: an overflow can only happen on the stack of the fiber that is running, so the
// handler names that fiber (Fiber::running_stack_bottom()), and only when the faulting stack
// pointer has run down to its stack's bottom. A fault that merely lands in some stack's guard
// page, or in an unguarded slab, names nobody: with more stacks than the kernel allows guard
// pages, one fiber's overflow can run into another's stack.

#include <setjmp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cubesim::emu::detail {

inline constexpr int kStackOverflowExitCode = 3;  // a kernel fault, as DESIGN.md's exit codes

struct GuardedRegion {
  std::atomic<std::uintptr_t> base{0};  // 0: unused record
  std::size_t stride = 0;               // bytes per slot; the guard is the first `guard` bytes
  std::size_t guard = 0;                // a page; its protection is PROT_NONE when `guarded`
  bool guarded = false;
  std::size_t stack_size = 0;
  std::uint32_t slots = 0;
  std::atomic<const char*>* owners = nullptr;  // one label per slot
};

GuardedRegion* register_region(std::uintptr_t base, std::size_t stride, std::size_t guard,
                               bool guarded, std::size_t stack_size, std::uint32_t slots,
                               std::atomic<const char*>* owners);
void unregister_region(GuardedRegion* region);

// What a fault means, from its address, the stack pointer at the fault and the running fiber's
// stack bottom (nullptr: the thread's own stack). Pure: the handler's decision, testable.
struct FaultAttribution {
  bool overflow = false;        // the running fiber's stack ran out
  const char* label = nullptr;  // its owner (the process name)
  std::size_t stack_size = 0;   // its usable bytes
  const void* stack_bottom = nullptr;
  bool guard_hit = false;  // the fault hit its guard page (else an unguarded stack's end)
};
FaultAttribution attribute_fault(std::uintptr_t fault_addr, std::uintptr_t stack_pointer,
                                 const void* running_stack_bottom);

// Where Scheduler::run() resumes after an overflow on this thread (siglongjmp from the handler).
struct OverflowRecovery {
  sigjmp_buf env;
  FaultAttribution fault;  // written by the handler before it jumps
};
// Arms `r` for the calling thread while alive (nests: the previous one is restored).
class RecoveryScope {
 public:
  explicit RecoveryScope(OverflowRecovery* r);
  ~RecoveryScope();
  RecoveryScope(const RecoveryScope&) = delete;
  RecoveryScope& operator=(const RecoveryScope&) = delete;

 private:
  OverflowRecovery* previous_;
};

// First thing after the jump back into Scheduler::run(): tells a sanitizer runtime the thread is
// on its own stack again and that the stack below `live_frame` (run()'s frame) is dead; nothing
// to do in other builds.
void back_on_thread_stack(const void* live_frame);

// Writes the overflow report for `label` and ends the program: for an overflow outside any run
// (no recovery point armed).
[[noreturn]] void report_stack_overflow(const char* label, std::size_t stack_size, const char* how);

// For the fatal-signal handler (emu/fatal_signal.cpp), which catches the SIGSEGV: an overflow
// jumps to the recovery point armed on this thread, or is reported and ends the program.
[[noreturn]] void on_stack_overflow(const FaultAttribution& fault);
// The label of the stack whose lowest usable address is `bottom` (its process's name), or
// nullptr for a stack no pool registered.
const char* stack_owner(const void* bottom);

}  // namespace cubesim::emu::detail
