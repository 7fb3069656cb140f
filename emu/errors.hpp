#pragma once
// Errors that end a simulation run. Each names what failed and the simulated time.

#include <stdexcept>
#include <string>
#include <vector>

#include "emu/time.hpp"

namespace cubesim::emu {

// Base of every error a run can end with.
class SimError : public std::runtime_error {
 public:
  SimError(const std::string& message, Tick time) : std::runtime_error(message), time_(time) {}
  Tick time() const { return time_; }

 private:
  Tick time_;
};

// A process threw. what() names the process and the time; nested() is the original exception.
class ProcessError : public SimError {
 public:
  ProcessError(std::string process, Tick time, std::exception_ptr cause);
  const std::string& process() const { return process_; }
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::string process_;
  std::exception_ptr cause_;
};

// A scheduled callback threw.
class CallbackError : public SimError {
 public:
  CallbackError(std::string label, Tick time, std::exception_ptr cause);
  const std::string& label() const { return label_; }
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::string label_;
  std::exception_ptr cause_;
};

// No event left while processes are still blocked. what() is the full report.
class DeadlockError : public SimError {
 public:
  struct Blocked {
    std::string process;
    std::string waits_on;
  };
  DeadlockError(Tick time, std::vector<Blocked> blocked);
  const std::vector<Blocked>& blocked() const { return blocked_; }

 private:
  std::vector<Blocked> blocked_;
};

// A process needed more stack than its fiber has. The process's fiber is abandoned (never
// resumed or unwound: its frames may be damaged); the rest of the run ends as for any error.
class StackOverflowError : public std::runtime_error {
 public:
  StackOverflowError(std::size_t stack_size, const std::string& how);
  std::size_t stack_size() const { return stack_size_; }

 private:
  std::size_t stack_size_;
};

// The message of an exception_ptr's exception, or a placeholder for non-std exceptions.
std::string describe_exception(const std::exception_ptr& e);

}  // namespace cubesim::emu
