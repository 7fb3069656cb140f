#include "emu/stack_overflow.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <mutex>

#include "emu/signal_text.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace cubesim::emu::detail {
namespace {

constexpr std::size_t kMaxRegions = 1 << 16;
GuardedRegion g_regions[kMaxRegions];
thread_local OverflowRecovery* t_recovery = nullptr;

struct SlotHit {
  const GuardedRegion* region = nullptr;
  std::uint32_t slot = 0;
  bool in_guard = false;
};

SlotHit find_slot(std::uintptr_t addr) {
  for (const GuardedRegion& r : g_regions) {
    const std::uintptr_t base = r.base.load(std::memory_order_acquire);
    if (base == 0 || addr < base || addr >= base + r.stride * r.slots) continue;
    const auto slot = static_cast<std::uint32_t>((addr - base) / r.stride);
    return {&r, slot, (addr - base) % r.stride < r.guard};
  }
  return {};
}

}  // namespace

FaultAttribution attribute_fault(std::uintptr_t fault_addr, std::uintptr_t stack_pointer,
                                 const void* running_stack_bottom) {
  FaultAttribution f;
  if (running_stack_bottom == nullptr || stack_pointer == 0) return f;
  const auto bottom = reinterpret_cast<std::uintptr_t>(running_stack_bottom);
  const SlotHit running = find_slot(bottom);
  if (running.region == nullptr) return f;
  // The stack has run out when the stack pointer is down at (or, within the ABI's 128-byte red
  // zone of a leaf function, just above) the bottom and the fault lies below the bottom.
  constexpr std::uintptr_t kRedZone = 128;
  if (stack_pointer >= bottom + kRedZone + 64 || fault_addr >= bottom) return f;
  f.overflow = true;
  f.label = running.region->owners[running.slot].load(std::memory_order_relaxed);
  f.stack_size = running.region->stack_size;
  f.stack_bottom = running_stack_bottom;
  const SlotHit at = find_slot(fault_addr);
  f.guard_hit = at.region == running.region && at.slot == running.slot && at.in_guard &&
                running.region->guarded;
  return f;
}

void back_on_thread_stack(const void* live_frame) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan still believes the thread runs on the fiber's stack (the jump bypassed the switch
  // annotations), and the frames the jump skipped are still poisoned: switch it back to the
  // thread's own stack, then forget those frames, as its longjmp interceptor would have.
  pthread_attr_t attr;
  void* low = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
  }
  __sanitizer_start_switch_fiber(nullptr, low, size);
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
  // Everything below the caller's frame is dead. (Not __asan_handle_no_return(): it writes to
  // the stack through an intercepted call first, which the stale poison would report.)
  const auto* top = static_cast<const char*>(live_frame);
  if (low != nullptr && top > static_cast<const char*>(low))
    __asan_unpoison_memory_region(low, static_cast<std::size_t>(top - static_cast<char*>(low)));
#else
  (void)live_frame;
#endif
}

RecoveryScope::RecoveryScope(OverflowRecovery* r) : previous_(t_recovery) {
  t_recovery = r;
}
RecoveryScope::~RecoveryScope() {
  t_recovery = previous_;
}

GuardedRegion* register_region(std::uintptr_t base, std::size_t stride, std::size_t guard,
                               bool guarded, std::size_t stack_size, std::uint32_t slots,
                               std::atomic<const char*>* owners) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  for (GuardedRegion& r : g_regions) {
    if (r.base.load(std::memory_order_relaxed) != 0) continue;
    r.stride = stride;
    r.guard = guard;
    r.guarded = guarded;
    r.stack_size = stack_size;
    r.slots = slots;
    r.owners = owners;
    r.base.store(base, std::memory_order_release);
    return &r;
  }
  return nullptr;  // more than 65536 slabs: that many stacks cannot be guarded anyway
}

void unregister_region(GuardedRegion* region) {
  if (region) region->base.store(0, std::memory_order_release);
}

void on_stack_overflow(const FaultAttribution& f) {
  if (OverflowRecovery* r = t_recovery) {
    t_recovery = nullptr;  // one jump per arming
    r->fault = f;
    siglongjmp(r->env, 1);
  }
  report_stack_overflow(f.label, f.stack_size,
                        f.guard_hit ? "it touched the guard page below the stack"
                                    : "it ran past the end of its stack");
}

const char* stack_owner(const void* bottom) {
  const SlotHit at = find_slot(reinterpret_cast<std::uintptr_t>(bottom));
  return at.region ? at.region->owners[at.slot].load(std::memory_order_relaxed) : nullptr;
}

void report_stack_overflow(const char* label, std::size_t stack_size, const char* how) {
  SignalText m;
  m.add("cubesim: stack overflow in process '");
  m.add(label ? label : "(unnamed)");
  m.add("': it needs more than its ");
  m.add(stack_size / 1024);
  m.add(" KiB fiber stack (");
  m.add(how);
  m.add(
      ").\nFix: raise the stack size (the CLI's --stack-size BYTES, e.g. --stack-size 256K; "
      "SimOptions::stack_size in the library) or move large local arrays and deep recursion "
      "off the stack.\n");
  m.write_to_stderr();
  _exit(kStackOverflowExitCode);
}

}  // namespace cubesim::emu::detail
