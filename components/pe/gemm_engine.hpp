#pragma once
// A PE's GEMM engine: it runs jobs one at a time, first in, first out. A job takes the start-up,
// then computes at its dtype's peak rate and runs its epilogue steps (GemmTimingModel) while it
// streams its operands that stay in memory in and its result out over the network, one
// transfer per row; it ends when the longer of the two does, and the next job starts then. The
// engine overlaps streaming with compute perfectly.
//
// What a job computes and where its values come from is its owner's business: the owner
// subclasses Job and hears when the engine takes the job up and when it is done.

#include <array>
#include <cstdint>
#include <deque>
#include <memory>

#include "components/network/network.hpp"
#include "components/pe/gemm_timing.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components {

// Bytes in memory that a GEMM engine streams, one transfer per row: `rows` rows of `row_bytes`,
// each `stride_bytes` after the one before, from `addr`. No rows: nothing to stream (an operand
// already in SRAM).
struct StridedBytes {
  std::uint64_t addr = 0;
  std::uint64_t row_bytes = 0;
  std::uint64_t rows = 0;
  std::uint64_t stride_bytes = 0;

  static StridedBytes contiguous(std::uint64_t addr, std::uint64_t bytes) {
    return {addr, bytes, 1, bytes};
  }
};

class GemmEngine {
 public:
  // Contract: the engine owns a job from submit() until it has finished it (or abandon()). Its
  // hooks run on the simulation thread: on_start() when the engine takes it up, then
  // on_finish() once, when its compute and its streaming are both done.
  class Job {
   public:
    virtual ~Job() = default;

    std::uint64_t m = 0, n = 0, k = 0;  // an m x k by k x n product
    DType dtype = DType::f32;           // of the inputs: picks the peak rate
    std::uint32_t epilogue_steps = 0;   // passes over the m x n result after the compute
    StridedBytes operands[4];           // streamed in from memory (a, b, bias, accumulator)
    StridedBytes result;                // streamed out to memory (nothing for an SRAM result)

   private:
    friend class GemmEngine;
    virtual void on_start() {}
    virtual void on_finish(Tick started, Tick ended) = 0;
    Tick started_ = 0;
    Tick compute_ = 0;
    int pending_ = 0;  // the start-up or the compute timer, and the transfers, still to end
  };

  // `pe` is the engine's PE as the network numbers it (global).
  GemmEngine(emu::Scheduler& scheduler, Network& network, const GemmTimingModel& timing,
             std::uint32_t pe);
  GemmEngine(GemmEngine&&) = default;  // only before anything is submitted: events hold `this`

  // Queues `job` and starts it if the engine is idle. A job that cannot start (the timing
  // model throws: no Tick holds its compute time, or its dtype has no peak rate) throws from
  // here or from the event that ends the job before it, and stays queued until abandon().
  void submit(std::unique_ptr<Job> job);
  std::size_t jobs() const { return queue_.size(); }  // queued, the running one included

  Tick busy() const { return busy_; }  // the jobs' times, start to end, since reset_stats()
  std::uint64_t flops() const { return flops_; }  // the FLOPs of those jobs
  // The same by the jobs' input dtype (index: static_cast<int>(DType)).
  const std::array<std::uint64_t, kDTypeCount>& flops_by_dtype() const { return flops_by_dtype_; }
  void reset_stats() {
    busy_ = flops_ = 0;
    flops_by_dtype_ = {};
  }
  // Forgets every queued and running job without finishing it, as on a new engine. For a run
  // that stopped early, once the scheduler has dropped the events those jobs waited for.
  void abandon() { queue_.clear(); }

 private:
  void start(Job& job);
  void arrive(Job& job);
  void finish(Job& job);
  void stream(Job& job, const StridedBytes& bytes, bool in);

  emu::Scheduler& scheduler_;
  Network& network_;
  const GemmTimingModel& timing_;
  std::uint32_t pe_;
  std::deque<std::unique_ptr<Job>> queue_;  // front: running
  Tick busy_ = 0;
  std::uint64_t flops_ = 0;
  std::array<std::uint64_t, kDTypeCount> flops_by_dtype_{};
};

}  // namespace cubesim::components
