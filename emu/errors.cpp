#include "emu/errors.hpp"

#include <fmt/format.h>

#include <new>

namespace cubesim::emu {

std::string describe_exception(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of host memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

ProcessError::ProcessError(std::string process, Tick time, std::exception_ptr cause)
    : SimError(fmt::format("process '{}' failed at simulated time {}: {}", process,
                           format_time(time), describe_exception(cause)),
               time),
      process_(std::move(process)),
      cause_(std::move(cause)) {}

CallbackError::CallbackError(std::string label, Tick time, std::exception_ptr cause)
    : SimError(fmt::format("event callback '{}' failed at simulated time {}: {}", label,
                           format_time(time), describe_exception(cause)),
               time),
      label_(std::move(label)),
      cause_(std::move(cause)) {}

StackOverflowError::StackOverflowError(std::size_t stack_size, const std::string& how)
    : std::runtime_error(fmt::format(
          "stack overflow: the program needs more than its {} KiB fiber stack ({}); raise the "
          "stack size (the CLI's --stack-size BYTES, e.g. --stack-size 256K; "
          "SimOptions::stack_size in the library) or move large local arrays and deep recursion "
          "off the stack",
          stack_size / 1024, how)),
      stack_size_(stack_size) {}

namespace {
std::string deadlock_report(Tick time, const std::vector<DeadlockError::Blocked>& blocked) {
  std::string text = fmt::format(
      "deadlock at simulated time {}: no event is left to run, but {} process{} still "
      "blocked:\n",
      format_time(time), blocked.size(), blocked.size() == 1 ? " is" : "es are");
  for (const auto& b : blocked)
    text += fmt::format("  - '{}' waits on {}\n", b.process, b.waits_on);
  text += "Nothing can fire what they wait on: check that every wait has a matching fire/post.";
  return text;
}
}  // namespace

DeadlockError::DeadlockError(Tick time, std::vector<Blocked> blocked)
    : SimError(deadlock_report(time, blocked), time), blocked_(std::move(blocked)) {}

}  // namespace cubesim::emu
