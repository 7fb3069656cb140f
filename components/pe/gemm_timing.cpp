#include "components/pe/gemm_timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cubesim::components {

GemmTimingModel::GemmTimingModel(const GemmConfig& config)
    : config_(config),
      startup_(config.startup),
      epilogue_per_s_(static_cast<std::uint64_t>(std::llround(config.epilogue_elements_per_s))),
      feed_per_s_(static_cast<std::uint64_t>(std::llround(config.sram_feed_bytes_per_s))) {
  if (config.model == GemmModel::systolic && (config.rows == 0 || config.cols == 0))
    throw std::invalid_argument("GemmTimingModel: a systolic array needs rows and columns");
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
  if (config_.model == GemmModel::systolic) return systolic_time(m, n, k, dtype);
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

namespace {
__extension__ using u128 = unsigned __int128;
u128 cdiv(u128 a, u128 b) {
  return (a + b - 1) / b;
}
}  // namespace

// With w = peak / (2 R C f) multiply-adds per cell per cycle, a weight-stationary fold covers
// R w = peak / (2 C f) of K and an output-stationary fold takes K / w = 2 R C f K / peak cycles:
// both in integers, the peak in FLOP/s and f in Hz.
std::uint64_t GemmTimingModel::systolic_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                               DType dtype) const {
  const u128 peak = peak_[static_cast<int>(dtype)], f = config_.clock.hz();
  const u128 r = config_.rows, c = config_.cols;
  const u128 skew = 2 * r + c - 2;
  u128 cycles = 0;
  if (config_.dataflow == Dataflow::weight_stationary)
    cycles = cdiv(u128{k} * 2 * c * f, peak) * cdiv(n, c) * (m + skew);
  else
    cycles = cdiv(m, r) * cdiv(n, c) * (cdiv(u128{k} * 2 * r * c * f, peak) + skew);
  if (cycles > emu::kTickMax)
    throw emu::TimeOverflow(fmt::format(
        "the systolic array's {} cycles for a {} x {} x {} GEMM overflow simulated time; split "
        "the GEMM",
        static_cast<double>(cycles), m, n, k));
  return static_cast<std::uint64_t>(cycles);
}

std::uint64_t GemmTimingModel::feed_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                          DType dtype) const {
  const u128 e = dtype_size(dtype), peak = peak_[static_cast<int>(dtype)];
  const u128 r = config_.rows, c = config_.cols, f = config_.clock.hz();
  const u128 a = u128{m} * k * e, b = u128{k} * n * e, out = u128{m} * n * 4;
  u128 bytes = 0;
  if (config_.dataflow == Dataflow::weight_stationary) {
    const u128 k_folds = cdiv(u128{k} * 2 * c * f, peak);
    bytes = a * cdiv(n, c) + b + out * (2 * k_folds - 1);
  } else {
    bytes = a * cdiv(n, c) + b * cdiv(m, r) + out;
  }
  return bytes > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(bytes);
}

Tick GemmTimingModel::systolic_time(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                    DType dtype) const {
  const Tick array = config_.clock.cycles_to_ticks({systolic_cycles(m, n, k, dtype)});
  if (feed_per_s_ == 0) return array;
  const u128 ps = cdiv(u128{feed_bytes(m, n, k, dtype)} * emu::kPsPerSecond, feed_per_s_);
  if (ps > emu::kTickMax)
    throw emu::TimeOverflow(fmt::format(
        "feeding a {} x {} x {} GEMM from SRAM at system.pe.gemm.systolic.sram_feed_GBps = {} "
        "overflows simulated time; raise the rate or split the GEMM",
        m, n, k, static_cast<double>(feed_per_s_) / 1e9));
  return std::max(array, static_cast<Tick>(ps));
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
