#pragma once
// Which programs a launch runs (ADR-0022's grid; launch_plan.hpp says where each runs).

#include <cstdint>
#include <string>

namespace cubesim {

// The programs of a launch, per axis (program_id(0), (1), (2)); 0 in a dimension means the
// hardware's size (PEs per cube, cubes per SIP, SIPs). A grid that fits the hardware in every
// dimension runs one program per PE at its own coordinates, all at once (ADR-0022's launch; the
// default is the hardware grid). Any other grid, or one made by Grid::logical, is a logical
// grid: Triton's grid of any size in 1-3 dimensions, whose programs the dispatcher places on
// PEs (system.dispatch: policy and cost per program) and runs in waves, each program starting on
// its PE when the PE's previous one ends. tl.pe() says where a program runs.
struct Grid {
  std::int64_t pes = 0, cubes = 0, sips = 0;
  bool dispatched = false;  // placed by the dispatcher even when it fits the hardware

  // Triton's grid (x, y, z): `cdiv(n, BLOCK)` programs along axis 0 is
  // Grid::logical(cdiv(n, BLOCK)).
  static Grid logical(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) {
    return {x, y, z, true};
  }
  // "hardware", or "16384 x 1 x 1 (logical)".
  std::string str() const;
};

// The largest number of programs along one axis of a grid (Triton's limit on axis 0).
inline constexpr std::int64_t kMaxGridDim = (std::int64_t{1} << 31) - 1;

}  // namespace cubesim
