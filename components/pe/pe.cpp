#include "components/pe/pe.hpp"

namespace cubesim::components {

Pe::Pe(emu::Scheduler& scheduler, Network& network, const GemmTimingModel& gemm_timing,
       const VectorUnit& vector, std::uint64_t sram_bytes, std::uint32_t global_pe, emu::Tick issue)
    : global_pe_(global_pe),
      sram_(new Sram(sram_bytes)),
      gemm_(scheduler, network, gemm_timing, global_pe),
      vector_(vector),
      issue_(issue) {}

PeStatistics Pe::statistics() const {
  PeStatistics s = counters_;
  s.gemm_busy_ps = gemm_.busy();
  s.flops = gemm_.flops();
  s.sram_peak_bytes = sram_->peak();
  return s;
}

void Pe::reset_statistics() {
  counters_ = {};
  gemm_.reset_stats();
  sram_->reset_peak();
}

}  // namespace cubesim::components
