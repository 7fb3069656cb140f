#include "triton_emu/launch/grid.hpp"

namespace cubesim {

std::string Grid::str() const {
  if (!dispatched && pes == 0 && cubes == 0 && sips == 0) return "hardware";
  const auto dim = [](std::int64_t d) { return d == 0 ? std::string("all") : std::to_string(d); };
  return dim(pes) + " x " + dim(cubes) + " x " + dim(sips) + (dispatched ? " (logical)" : "");
}

}  // namespace cubesim
