#include "components/pe/vector_unit.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cubesim::components {

VectorUnit::VectorUnit(const VectorConfig& config, Frequency clock)
    : lanes_(config.lanes), latency_cycles_(config.latency_cycles), clock_(clock) {
  if (lanes_ == 0)
    throw std::invalid_argument("VectorUnit: no lanes (system.pe.vector.lanes is 0)");
  for (VectorOp op : kAllVectorOps) {
    const std::uint32_t c = config.op_cycles[static_cast<int>(op)];
    if (c == 0)
      throw std::invalid_argument("VectorUnit: system.pe.vector.op_cycles." +
                                  std::string(vector_op_name(op)) + " is 0; every op takes >= 1");
    op_cycles_[static_cast<int>(op)] = c;
  }
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
