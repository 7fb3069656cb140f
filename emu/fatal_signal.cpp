#include "emu/fatal_signal.hpp"

#include <signal.h>
#if defined(__APPLE__)
#include <sys/ucontext.h>  // <ucontext.h> there wants _XOPEN_SOURCE for routines unused here
#else
#include <ucontext.h>
#endif
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "emu/fiber.hpp"
#include "emu/log.hpp"
#include "emu/signal_text.hpp"
#include "emu/stack_overflow.hpp"

namespace cubesim::emu {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[NSIG] {};
thread_local const FatalSignalScope* t_scope = nullptr;
using detail::SignalText;

std::uintptr_t stack_pointer_of(void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__linux__) && defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__linux__) && defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  (void)uc;
  return 0;  // unknown: no fault is attributed to a stack overflow
#endif
}

// "segmentation fault (SIGSEGV): ..." with what the kernel's siginfo says of the cause.
void describe(SignalText& m, int sig, const siginfo_t* info) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  const bool sent = info->si_code <= 0;  // raise(), kill(): no faulting address
  switch (sig) {
    case SIGSEGV:
      m.add("segmentation fault (SIGSEGV)");
      if (sent) return;
      m.add(info->si_code == SEGV_ACCERR ? ": an access its protection forbids, at address "
                                         : ": an access to unmapped memory, at address ");
      m.add_hex(address);
      return;
    case SIGBUS:
      m.add("bus error (SIGBUS)");
      if (sent) return;
      m.add(
          ": an access the hardware refused (misaligned, or past the end of a mapped file), at "
          "address ");
      m.add_hex(address);
      return;
    case SIGFPE:
      m.add("arithmetic fault (SIGFPE)");
      if (info->si_code == FPE_INTDIV) m.add(": an integer division by zero");
      if (info->si_code == FPE_INTOVF) m.add(": an integer overflow (INT_MIN / -1)");
      return;
    case SIGILL:
      m.add("illegal instruction (SIGILL)");
      if (sent) return;
      m.add(" at ");
      m.add_hex(address);
      m.add(": code built for another CPU, or a __builtin_trap() reached");
      return;
    case SIGABRT:
      m.add("abort (SIGABRT): std::abort(), a failed assert() or std::terminate()");
      return;
    default:
      m.add("signal ");
      m.add(static_cast<std::uint64_t>(sig));
  }
}

[[noreturn]] void say_last_words(const FatalSignalScope& scope, int sig, const siginfo_t* info) {
  const LastWords& w = scope.words();
  SignalText m;
  m.add("cubesim: ");
  m.add(w.what.c_str());
  m.add(": ");
  describe(m, sig, info);
  m.add(" in ");
  m.add(w.subject.c_str());
  if (const char* process = detail::stack_owner(Fiber::running_stack_bottom())) {
    m.add(", ");
    m.add(w.on_fiber.c_str());
    m.add(" ");
    m.add(process);
  } else if (!w.off_fiber.empty()) {
    m.add(", ");
    m.add(w.off_fiber.c_str());
  }
  if (const Tick* now = log_clock()) {
    m.add(" at simulated time ");
    m.add_time(*now);
  }
  m.add(".\n");
  m.add(w.fix.c_str());
  m.add("\n");
  m.write_to_stderr();
  _exit(w.exit_code);
}

// The signal is not ours to explain: to the handler before ours, or the default action.
void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[sig];
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) return previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    return previous.sa_handler(sig);
  }
  // Default action: a fault re-runs the faulting instruction once the handler returns; a raised
  // signal (abort) is raised again, pending until the handler returns. Either way it kills.
  signal(sig, SIG_DFL);
  if (info->si_code <= 0) raise(sig);
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  if (sig == SIGSEGV) {
    const detail::FaultAttribution f =
        detail::attribute_fault(reinterpret_cast<std::uintptr_t>(info->si_addr),
                                stack_pointer_of(context), Fiber::running_stack_bottom());
    if (f.overflow) detail::on_stack_overflow(f);
  }
  // A signal another process sent is not a fault of the code running here.
  const bool from_elsewhere = info->si_code <= 0 && info->si_pid != getpid();
  if (const FatalSignalScope* scope = t_scope; scope != nullptr && !from_elsewhere)
    say_last_words(*scope, sig, info);
  pass_on(sig, info, context);
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
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;
};

}  // namespace

void install_fatal_signal_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : kSignals) sigaction(sig, &sa, &g_previous[sig]);
  });
  thread_local AltStack alt_stack;
}

FatalSignalScope::FatalSignalScope(LastWords words) : words_(std::move(words)), previous_(t_scope) {
  install_fatal_signal_handler();
  t_scope = this;
}

FatalSignalScope::~FatalSignalScope() {
  t_scope = previous_;
}

}  // namespace cubesim::emu
