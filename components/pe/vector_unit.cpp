#include "components/pe/vector_unit.hpp"

#include <stdexcept>

namespace cubesim::components {

VectorUnit::VectorUnit(const VectorConfig& config, Frequency clock)
    : lanes_(config.lanes), latency_cycles_(config.latency_cycles), clock_(clock) {
  if (lanes_ == 0)
    throw std::invalid_argument("VectorUnit: no lanes (system.pe.vector.lanes is 0)");
}

}  // namespace cubesim::components
