#pragma once
// Turns a hit on a fiber stack's guard page into a report naming the process, instead of a bare
// segfault. Internal to emu/: StackPool registers its slabs here.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cubesim::emu::detail {

inline constexpr int kStackOverflowExitCode = 3;  // a kernel fault, as DESIGN.md's exit codes

struct GuardedRegion {
  std::atomic<std::uintptr_t> base{0};  // 0: unused record
  std::size_t stride = 0;               // bytes per slot; the guard is the first `guard` bytes
  std::size_t guard = 0;
  std::size_t stack_size = 0;
  std::uint32_t slots = 0;
  std::atomic<const char*>* owners = nullptr;  // one label per slot
};

// Installs the SIGSEGV handler (once per process) and an alternate signal stack for the calling
// thread (once per thread), so the handler can run although the faulting stack is exhausted.
void install_stack_overflow_handler();
GuardedRegion* register_region(std::uintptr_t base, std::size_t stride, std::size_t guard,
                               std::size_t stack_size, std::uint32_t slots,
                               std::atomic<const char*>* owners);
void unregister_region(GuardedRegion* region);

// Writes the overflow report for `label` and ends the program; used by the canary check too.
[[noreturn]] void report_stack_overflow(const char* label, std::size_t stack_size, const char* how);

}  // namespace cubesim::emu::detail
