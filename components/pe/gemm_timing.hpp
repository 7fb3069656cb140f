#pragma once
// How long a PE's GEMM engine takes for one composite GEMM, by the model the spec names
// (system.pe.gemm.model):
//
//   simple:    compute = ceil(2 * M * N * K / peak_flops(dtype))      (exact integer ps)
//   systolic:  an array of R x C multiply-add cells at the PE's clock f, each doing
//              w = peak(dtype) / (2 R C f) multiply-adds of K per cycle (the dtype's rate), the
//              GEMM cut into folds the array holds, each paying its fill and drain:
//      weight-stationary (B's K x N in the cells, A's rows stream through):
//              folds = ceil(K / (R w)) * ceil(N / C),  cycles = folds * (M + 2R + C - 2)
//              (R cycles to load a fold's weights, R - 1 and C - 1 of skew in and out)
//      output-stationary (C's M x N in the cells, K streams through):
//              folds = ceil(M / R) * ceil(N / C),  cycles = folds * (ceil(K / w) + 2R + C - 2)
//              (R - 1 and C - 1 of skew, R to shift the results out)
//              compute = max(cycles / f, feed bytes / sram_feed rate), the feed being what the
//              array reads and writes in SRAM: weight-stationary A once per N fold, B once, the
//              f32 partial sums written per K fold and read back; output-stationary A once per
//              N fold, B once per M fold, the results once.
//   streaming = time to stream the operands that stay in memory and the result
//               (measured by the caller on the network, so contention counts)
//   epilogue  = steps * ceil(M * N / epilogue_elements_per_s)              (exact integer ps)
//   total     = startup + max(compute + epilogue, streaming)
//
// An epilogue step (alpha scale, beta scale of the accumulator, bias, activation) passes every
// output element once after the products are summed; the cast to the output dtype is part of
// writing the result and costs nothing, as adding into an accumulator does.
//
// This unit gives compute, epilogue and startup; the engine (gemm_engine.hpp) waits out the
// startup, then runs the compute timer and the streaming side by side. The engine overlaps
// streaming with compute perfectly; what is not modelled: the simple model's tile-shape
// efficiency and partial tiles (the systolic model's folds), SRAM bank conflicts, folds that
// overlap one another's fill and drain (docs/hardware-model.md).

#include <cstdint>

#include "components/system_config.hpp"

namespace cubesim::components {

class GemmTimingModel {
 public:
  explicit GemmTimingModel(const GemmConfig& config);

  static std::uint64_t flops(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
    return 2 * m * n * k;
  }
  // Throws TimeError if the result does not fit a Tick; std::invalid_argument if the dtype has
  // no peak rate (0 in the spec).
  Tick compute_time(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype) const;
  // `steps` passes over `elements` outputs; TimeError if the result does not fit a Tick.
  Tick epilogue_time(std::uint64_t elements, std::uint32_t steps) const;
  Tick startup() const { return startup_; }
  std::uint64_t peak_flops_per_s(DType dtype) const { return peak_[static_cast<int>(dtype)]; }

  // systolic: the array's cycles and the bytes it feeds from SRAM for one GEMM.
  std::uint64_t systolic_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                DType dtype) const;
  std::uint64_t feed_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype) const;

 private:
  Tick systolic_time(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype) const;

  GemmConfig config_;
  Tick startup_;
  std::uint64_t peak_[kDTypeCount];
  std::uint64_t epilogue_per_s_;
  std::uint64_t feed_per_s_;  // 0: no limit
};

}  // namespace cubesim::components
