#include "emu/stack_overflow.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cubesim::emu::detail {
namespace {

constexpr std::size_t kMaxRegions = 1 << 16;
GuardedRegion g_regions[kMaxRegions];
struct sigaction g_previous {};

// Async-signal-safe text building: no allocation, no stdio.
struct Message {
  char text[1024];
  std::size_t len = 0;
  void add(const char* s) {
    while (*s && len + 1 < sizeof text) text[len++] = *s++;
  }
  void add(std::uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0 && len + 1 < sizeof text) text[len++] = digits[--n];
  }
};

void on_segv(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (GuardedRegion& r : g_regions) {
    const std::uintptr_t base = r.base.load(std::memory_order_acquire);
    if (base == 0 || addr < base || addr >= base + r.stride * r.slots) continue;
    const std::size_t slot = (addr - base) / r.stride;
    if ((addr - base) % r.stride >= r.guard) continue;  // a fault inside a live stack: not ours
    const char* label = r.owners[slot].load(std::memory_order_relaxed);
    report_stack_overflow(label, r.stack_size, "it touched the guard page below the stack");
  }
  // Not a guard page: hand the fault to whoever handled it before (default: core dump).
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  signal(sig, SIG_DFL);  // returning re-runs the faulting instruction, which now dumps core
}

struct AltStack {
  void* memory = nullptr;
  AltStack() {
    constexpr std::size_t size = 64 * 1024;
    memory = std::malloc(size);
    stack_t ss{};
    ss.ss_sp = memory;
    ss.ss_size = size;
    if (memory == nullptr || sigaltstack(&ss, nullptr) != 0) {
      std::free(memory);
      memory = nullptr;
    }
  }
  ~AltStack() {
    if (memory == nullptr) return;
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    std::free(memory);
  }
};

}  // namespace

void install_stack_overflow_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous);
  });
  thread_local AltStack alt_stack;
}

GuardedRegion* register_region(std::uintptr_t base, std::size_t stride, std::size_t guard,
                               std::size_t stack_size, std::uint32_t slots,
                               std::atomic<const char*>* owners) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  for (GuardedRegion& r : g_regions) {
    if (r.base.load(std::memory_order_relaxed) != 0) continue;
    r.stride = stride;
    r.guard = guard;
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

void report_stack_overflow(const char* label, std::size_t stack_size, const char* how) {
  Message m;
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
  ssize_t ignored = write(STDERR_FILENO, m.text, m.len);
  (void)ignored;
  _exit(kStackOverflowExitCode);
}

}  // namespace cubesim::emu::detail
