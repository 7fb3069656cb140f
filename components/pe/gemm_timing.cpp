#include "components/pe/gemm_timing.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace cubesim::components {

GemmTimingModel::GemmTimingModel(const GemmConfig& config) : startup_(config.startup) {
  for (DType t : kAllDTypes) {
    const double p = config.peak(t);
    if (!(p >= 0) || p > 1e18) throw std::invalid_argument("GemmTimingModel: bad peak rate");
    peak_[static_cast<int>(t)] = static_cast<std::uint64_t>(std::llround(p));
  }
}

Tick GemmTimingModel::compute_time(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                   DType dtype) const {
  const std::uint64_t peak = peak_[static_cast<int>(dtype)];
  if (peak == 0)
    throw std::invalid_argument(std::string("the GEMM engine has no peak rate for ") +
                                std::string(dtype_name(dtype)) + " (system.pe.gemm.peak_TFLOPS." +
                                std::string(dtype_name(dtype)) +
                                " is not in the spec; add it to run GEMMs of this dtype)");
  __extension__ using u128 = unsigned __int128;
  const u128 f = u128{2} * m * n * k;
  const u128 ps = (f * emu::kPsPerSecond + peak - 1) / peak;
  if (ps > emu::kTickMax) {
    const std::string field = "system.pe.gemm.peak_TFLOPS." + std::string(dtype_name(dtype));
    throw emu::TimeOverflow(fmt::format(
        "the compute time of a {} x {} x {} {} GEMM at {} = {} overflows simulated time (2^64 "
        "ps = 213 days); raise {} or split the GEMM",
        m, n, k, dtype_name(dtype), field, static_cast<double>(peak) / 1e12, field));
  }
  return static_cast<Tick>(ps);
}

}  // namespace cubesim::components
