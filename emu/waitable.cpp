#include "emu/waitable.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cubesim::emu {

Completion::Completion(Scheduler& scheduler, std::string name, std::uint64_t arrivals)
    : Waitable(scheduler, std::move(name)), expected_(arrivals) {
  if (arrivals == 0) {
    throw std::invalid_argument(
        fmt::format("completion '{}' must expect at least one arrival", this->name()));
  }
}

void Completion::arrive(std::uint64_t n) {
  if (n > expected_ - arrived_) {
    throw std::logic_error(fmt::format(
        "completion '{}' expects {} arrival(s) but got {}: it was fired more often than it waits "
        "for",
        name(), expected_, arrived_ + n));
  }
  arrived_ += n;
  if (done()) wake_all();
}

void Completion::wait() {
  if (!done()) block();
}

std::string Completion::describe() const {
  return fmt::format("completion '{}' ({} of {} arrivals)", name(), arrived_, expected_);
}

Semaphore::Semaphore(Scheduler& scheduler, std::string name, std::uint64_t initial)
    : Waitable(scheduler, std::move(name)), tokens_(initial) {}

void Semaphore::post(std::uint64_t n) {
  while (n > 0 && wake_one()) --n;
  tokens_ += n;
}

void Semaphore::acquire() {
  if (!try_acquire()) block();
}

bool Semaphore::try_acquire() {
  if (tokens_ == 0 || waiters() > 0) return false;
  --tokens_;
  return true;
}

std::string Semaphore::describe() const {
  return fmt::format("semaphore '{}' ({} token{} available)", name(), tokens_,
                     tokens_ == 1 ? "" : "s");
}

}  // namespace cubesim::emu
