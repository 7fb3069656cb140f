#pragma once
// Tiles made from nothing: tl.arange and tl.full (tl.zeros is TileOwner::filled). Each costs
// its elements on the vector unit (class simple).

#include <cstdint>

#include "components/dtype.hpp"
#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::ops {

// i32 values start .. end - 1.
tl::Tile arange(detail::Program& program, std::int64_t start, std::int64_t end);
tl::Tile full(detail::Program& program, tl::Shape shape, double value, DType dtype);

}  // namespace cubesim::ops
