#include "components/pe/gemm_engine.hpp"

namespace cubesim::components {

GemmEngine::GemmEngine(emu::Scheduler& scheduler, Network& network, const GemmTimingModel& timing,
                       std::uint32_t pe)
    : scheduler_(scheduler), network_(network), timing_(timing), pe_(pe) {}

void GemmEngine::submit(std::unique_ptr<Job> job) {
  queue_.push_back(std::move(job));
  if (queue_.size() == 1) start(*queue_.front());
}

void GemmEngine::start(Job& job) {
  job.started_ = scheduler_.now();
  job.compute_ = timing_.compute_time(job.m, job.n, job.k, job.dtype) +
                 timing_.epilogue_time(job.m * job.n, job.epilogue_steps);
  job.on_start();
  // Start-up, then compute and streaming side by side.
  job.pending_ = 1;
  scheduler_.schedule_in(
      timing_.startup(),
      [this, &job] {
        ++job.pending_;  // the compute timer
        scheduler_.schedule_in(
            job.compute_, [this, &job] { arrive(job); }, 0, "gemm compute");
        for (const StridedBytes& operand : job.operands) stream(job, operand, true);
        stream(job, job.result, false);
        arrive(job);  // the start-up
      },
      0, "gemm start");
}

void GemmEngine::stream(Job& job, const StridedBytes& bytes, bool in) {
  for (std::uint64_t row = 0; row < bytes.rows; ++row) {
    ++job.pending_;
    const std::uint64_t addr = bytes.addr + row * bytes.stride_bytes;
    if (in)
      network_.read(pe_, addr, bytes.row_bytes, [this, &job] { arrive(job); });
    else
      network_.write(pe_, addr, bytes.row_bytes, [this, &job] { arrive(job); });
  }
}

void GemmEngine::arrive(Job& job) {
  if (--job.pending_ == 0) finish(job);
}

void GemmEngine::finish(Job& job) {
  const Tick end = scheduler_.now();
  busy_ += end - job.started_;
  const std::uint64_t flops = GemmTimingModel::flops(job.m, job.n, job.k);
  flops_ += flops;
  flops_by_dtype_[static_cast<int>(job.dtype)] += flops;
  job.on_finish(job.started_, end);
  queue_.pop_front();  // frees the job
  if (!queue_.empty()) start(*queue_.front());
}

}  // namespace cubesim::components
