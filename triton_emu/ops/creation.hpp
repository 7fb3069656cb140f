#pragma once
// Tiles made from nothing: tl.arange (tl.full and tl.zeros are TileOwner::filled, which tile
// math uses too). Each costs its elements on the vector unit (class simple).

#include <cstdint>

#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::ops {

// i32 values start .. end - 1.
tl::Tile arange(detail::Program& program, std::int64_t start, std::int64_t end);

}  // namespace cubesim::ops
