#pragma once
// Waitable events: what a process blocks on until a callback or another process fires it.
// Waiters resume in the order they blocked, at the simulated time of the firing.
// A waitable must outlive the processes waiting on it.

#include <cstdint>
#include <string>

#include "emu/scheduler.hpp"

namespace cubesim::emu {

// One-shot: done after `arrivals` calls of arrive() (1 by default: fire() once). Once done,
// wait() returns at once, forever.
class Completion final : public Waitable {
 public:
  Completion(Scheduler& scheduler, std::string name, std::uint64_t arrivals = 1);

  void arrive(std::uint64_t n = 1);  // more arrivals than expected is an error
  void fire() { arrive(1); }
  void wait();

  bool done() const { return arrived_ == expected_; }
  std::uint64_t arrived() const { return arrived_; }
  std::uint64_t expected() const { return expected_; }
  std::string describe() const override;

 private:
  std::uint64_t expected_;
  std::uint64_t arrived_ = 0;
};

// Counting: post() adds tokens, acquire() takes one, blocking while there is none. Tokens are
// handed to blocked waiters first (FIFO), so a late acquire() cannot overtake them.
class Semaphore final : public Waitable {
 public:
  Semaphore(Scheduler& scheduler, std::string name, std::uint64_t initial = 0);

  void post(std::uint64_t n = 1);
  void acquire();
  bool try_acquire();

  std::uint64_t available() const { return tokens_; }
  std::string describe() const override;

 private:
  std::uint64_t tokens_;
};

}  // namespace cubesim::emu
