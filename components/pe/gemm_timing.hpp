#pragma once
// How long a PE's GEMM engine takes for one composite GEMM. A separate unit so a tiling-aware
// model can replace it without touching the callers.
//
//   compute   = ceil(2 * M * N * K / peak_flops(dtype))               (exact integer ps)
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
// streaming with compute perfectly; what is not modelled: tile-shape efficiency, partial tiles,
// SRAM bank conflicts (docs/hardware-model.md).

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

 private:
  Tick startup_;
  std::uint64_t peak_[kDTypeCount];
  std::uint64_t epilogue_per_s_;
};

}  // namespace cubesim::components
