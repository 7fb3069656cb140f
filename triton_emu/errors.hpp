#pragma once
// The errors a user of cubesim sees, each with the CLI exit code of its category
// (DESIGN.md "User-facing contracts"): 1 verification failed, 2 usage or spec error,
// 3 kernel fault, 4 deadlock. Messages say what, where and how to fix it.

#include <stdexcept>
#include <string>
#include <vector>

#include "emu/time.hpp"

namespace cubesim {

enum class ExitCode : int {
  ok = 0,
  verification_failed = 1,
  usage = 2,
  kernel_fault = 3,
  deadlock = 4,
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode exit_code() const { return code_; }

 private:
  ExitCode code_;
};

// A bad argument, parameter or option (exit 2).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitCode::usage, message) {}
};

// Thrown inside a kernel for what it did wrong (out of bounds, misaligned, SRAM overflow, bad
// axis). launch() rethrows it as a KernelError carrying the PE and the simulated time.
class KernelFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel failed (exit 3): it faulted or threw. what() names the PE, its program ids and the
// simulated time.
class KernelError : public Error {
 public:
  KernelError(const std::string& message, std::string pe, emu::Tick time)
      : Error(ExitCode::kernel_fault, message), pe_(std::move(pe)), time_(time) {}
  const std::string& pe() const { return pe_; }  // "sip0.cube1.pe5"
  emu::Tick time() const { return time_; }

 private:
  std::string pe_;
  emu::Tick time_;
};

// Programs wait on something that can never happen (exit 4). what() names every blocked PE
// and what it waits on.
class DeadlockError : public Error {
 public:
  DeadlockError(const std::string& message, std::vector<std::string> blocked, emu::Tick time)
      : Error(ExitCode::deadlock, message), blocked_(std::move(blocked)), time_(time) {}
  const std::vector<std::string>& blocked() const { return blocked_; }
  emu::Tick time() const { return time_; }

 private:
  std::vector<std::string> blocked_;
  emu::Tick time_;
};

}  // namespace cubesim
