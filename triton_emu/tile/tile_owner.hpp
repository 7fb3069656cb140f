#pragma once
// What tile math (tile.cpp) needs of the program that owns a tile: new SRAM tiles, the vector
// unit's time, faults, and whether values are kept. The running program (ops/program.hpp)
// provides it; tiles point back to it. Internal (not installed API).

#include <cstdint>
#include <string>

#include "components/dtype.hpp"
#include "components/system_config.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::tl {

class TileOwner {
 public:
  // SRAM-accounted; values uninitialised (every caller writes them all), or none at all when
  // `values` is false or the run is timing-only (i32 tiles keep theirs: index math and masks).
  virtual Tile make_tile(Shape shape, DType dtype, bool values = true) = 0;
  // tl.full: `value` in every element (a fault when it is not one of `dtype`'s).
  virtual Tile full(Shape shape, double value, DType dtype) = 0;
  virtual void charge_vector(std::uint64_t elements,
                             components::VectorOp op = components::VectorOp::simple) = 0;
  // A KernelFault naming `what`.
  [[noreturn]] virtual void fault(const std::string& what) const = 0;
  virtual bool timing_only() const = 0;

 protected:
  ~TileOwner() = default;
};

}  // namespace cubesim::tl
