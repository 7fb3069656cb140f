#include "components/pe/gemm_timing.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace cubesim::components {

GemmTimingModel::GemmTimingModel(const GemmConfig& config)
    : startup_(config.startup),
      epilogue_per_s_(static_cast<std::uint64_t>(std::llround(config.epilogue_elements_per_s))) {
  if (!(config.epilogue_elements_per_s >= 1) || config.epilogue_elements_per_s > 1e18)
    throw std::invalid_argument("GemmTimingModel: bad epilogue rate");
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

Tick GemmTimingModel::epilogue_time(std::uint64_t elements, std::uint32_t steps) const {
  if (steps == 0 || elements == 0) return 0;
  __extension__ using u128 = unsigned __int128;
  const u128 one = (u128{elements} * emu::kPsPerSecond + epilogue_per_s_ - 1) / epilogue_per_s_;
  const u128 ps = one * steps;
  if (ps > emu::kTickMax)
    throw emu::TimeOverflow(fmt::format(
        "the epilogue of {} steps over {} output elements at system.pe.gemm.epilogue_Gelem_per_s "
        "= {} overflows simulated time (2^64 ps = 213 days); split the GEMM",
        steps, elements, static_cast<double>(epilogue_per_s_) / 1e9));
  return static_cast<Tick>(ps);
}

}  // namespace cubesim::components
