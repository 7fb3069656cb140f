#include "components/pe/vector_unit.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cubesim::components {

VectorUnit::VectorUnit(const VectorConfig& config, Frequency clock)
    : lanes_(config.lanes),
      latency_cycles_(config.latency_cycles),
      clock_(clock),
      banks_(config.sram_banks == 0 ? config.lanes : config.sram_banks),
      bank_bytes_(config.sram_bank_bytes),
      mapping_(config.sram_bank_mapping) {
  if (lanes_ == 0)
    throw std::invalid_argument("VectorUnit: no lanes (system.pe.vector.lanes is 0)");
  if (bank_bytes_ == 0)
    throw std::invalid_argument("VectorUnit: system.pe.vector.sram_bank_bytes is 0");
  for (VectorOp op : kAllVectorOps) {
    const std::uint32_t c = config.op_cycles[static_cast<int>(op)];
    if (c == 0)
      throw std::invalid_argument("VectorUnit: system.pe.vector.op_cycles." +
                                  std::string(vector_op_name(op)) + " is 0; every op takes >= 1");
    op_cycles_[static_cast<int>(op)] = c;
  }
}

emu::Cycles VectorUnit::gather_cycles(std::span<const std::int64_t> src,
                                      std::uint32_t element_bytes, std::int64_t second) const {
  const std::uint64_t slots_per_element = op_cycles_[static_cast<int>(VectorOp::simple)];
  // The second source begins on the bank row after the first's last word.
  const std::uint64_t first_words =
      (static_cast<std::uint64_t>(second) * element_bytes + bank_bytes_ - 1) / bank_bytes_;
  const std::uint64_t second_base = (first_words + banks_ - 1) / banks_ * banks_;
  const auto word = [&](std::int64_t i) {
    return i < second
               ? static_cast<std::uint64_t>(i) * element_bytes / bank_bytes_
               : second_base + static_cast<std::uint64_t>(i - second) * element_bytes / bank_bytes_;
  };
  __extension__ using u128 = unsigned __int128;
  u128 total = latency_cycles_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> asked;  // (bank, word) of a group
  asked.reserve(std::min<std::size_t>(src.size(), lanes_));
  for (std::size_t g = 0; g < src.size(); g += lanes_) {
    const std::size_t n = std::min<std::size_t>(lanes_, src.size() - g);
    asked.clear();
    for (std::size_t k = g; k < g + n; ++k) {
      const std::uint64_t w = word(src[k]);
      asked.emplace_back(bank(w), w);
    }
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
    std::uint64_t most = 0, run = 0;
    for (std::size_t k = 0; k < asked.size(); ++k) {
      run = k > 0 && asked[k].first == asked[k - 1].first ? run + 1 : 1;
      most = std::max(most, run);
    }
    const u128 slots = u128{n} * slots_per_element;
    total += std::max<u128>(most, slots / lanes_ + (slots % lanes_ != 0));
  }
  return {total > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(total)};
}

emu::Cycles VectorUnit::reduce_cycles(std::uint64_t outer, std::uint64_t len, std::uint64_t inner,
                                      bool scan) const {
  __extension__ using u128 = unsigned __int128;
  const std::uint64_t r = op_cycles_[static_cast<int>(VectorOp::reduce)];
  const u128 elements = u128{outer} * len * inner;
  const u128 slots = elements * r;
  const u128 lane_steps = slots / lanes_ + (slots % lanes_ != 0);
  u128 levels_cost = 0;
  if (inner == 1 && len > 1) {
    const std::uint64_t w = std::min<std::uint64_t>(len, lanes_);
    std::uint64_t depth = 0;
    while ((std::uint64_t{1} << depth) < w) ++depth;
    if (scan) {
      const u128 passes = elements / lanes_ + (elements % lanes_ != 0);
      levels_cost = passes * depth * r;
    } else {
      const std::uint64_t packed = lanes_ / w;  // runs side by side in one vector (>= 1)
      const u128 vectors = outer / packed + (outer % packed != 0);
      levels_cost = vectors * depth * r;
    }
  }
  const u128 total = lane_steps + levels_cost + latency_cycles_;
  return {total > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(total)};
}

}  // namespace cubesim::components
