#pragma once
// Last words for a fatal signal in code cubesim runs on someone else's behalf (a kernel's
// programs and host harness, a plugin's initialisers and registration): a segfault, bus error,
// arithmetic fault, illegal instruction or abort there ends the program with a message naming
// what was running and the process (fiber) it ran on, instead of a bare signal.
//
// Contract:
//  - One handler serves SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT. It is installed once per
//    process and runs on an alternate signal stack, which each thread that installs gets, so it
//    runs although the faulting stack is exhausted.
//  - A SIGSEGV that is a fiber's stack overflow is the overflow handling's (stack_overflow.hpp):
//    inside Scheduler::run() it becomes an error, and the program lives on.
//  - Otherwise, while a FatalSignalScope is alive on the thread that faulted, the handler writes
//    to stderr, with one write(2):
//      cubesim: <what>: <the signal and what it means> in <subject>, <on_fiber> <process>
//      at simulated time <T>.
//      <fix>
//    (or `off_fiber` in place of the process when no fiber runs; the time only inside a run),
//    then ends the program with the innermost scope's exit code, running no exit handlers.
//  - Without a scope (a fault in cubesim itself, a fault on another thread) and for a signal
//    another process sent, the signal goes to the handler installed before this one; by
//    default the process dies of it, core dump included.
//  - The running process is named by the stack the running fiber is on, which Fiber::switch_to
//    records anyway: keeping the record costs the scheduler nothing.

#include <string>

namespace cubesim::emu {

// The words a scope leaves for the handler, formatted before anything can fault.
struct LastWords {
  std::string what;       // "kernel fault"
  std::string subject;    // "kernel 'boom' of plugin /path/libboom.so"
  std::string on_fiber;   // "in its program on PE": precedes the running process's name
  std::string off_fiber;  // "in its host code": said when no fiber runs
  std::string fix;        // "Fix: ..." (may span lines)
  int exit_code = 1;
};

// While alive, a fatal signal on this thread ends the program with these last words. Nests:
// the innermost scope speaks. Installs the handler (once) and this thread's alternate stack.
class FatalSignalScope {
 public:
  explicit FatalSignalScope(LastWords words);
  ~FatalSignalScope();
  FatalSignalScope(const FatalSignalScope&) = delete;
  FatalSignalScope& operator=(const FatalSignalScope&) = delete;

  const LastWords& words() const { return words_; }

 private:
  LastWords words_;
  const FatalSignalScope* previous_;
};

// Installs the handler (once per process) and an alternate signal stack for the calling thread
// (once per thread). StackPool calls it, so fiber stack overflows are caught in every program.
void install_fatal_signal_handler();

}  // namespace cubesim::emu
