#include "components/pe/vector_unit.hpp"

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

}  // namespace cubesim::components
