#pragma once
// The addresses of a load, store or atomic: checked (aligned, addressable, inside a buffer the
// host allocated) and cut into transfers of elements consecutive both in memory and in the
// tile (the program's segments()).

#include <cstdint>

#include "components/dtype.hpp"
#include "triton_emu/memory/ptr.hpp"
#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::ops {

// A fault naming `what` unless the `bytes` at `ptr` are aligned for `dtype`, addressable and
// inside one allocated buffer.
// A first-touch buffer's frames in [addr, addr + bytes) that no program touched before go to the
// program's cube (memory/placement.hpp), with what the host wrote to them; a fault when the cube
// is full. Every access a program makes passes here once checked.
void first_touch(const detail::Program& program, std::uint64_t addr, std::uint64_t bytes);
void check_access(const detail::Program& program, Ptr ptr, std::uint64_t bytes, DType dtype,
                  const char* what);

// Checks an access of a tile of `shape` at `ptr` and cuts it into program.segments(); true when
// a mask with values applies. A 3D shape's planes lie plane_stride elements apart (0: one after
// another).
bool plan_access(detail::Program& program, const char* what, Ptr ptr, const tl::Shape& shape,
                 DType dtype, std::int64_t row_stride, std::int64_t col_stride,
                 const tl::Tile* mask, std::int64_t plane_stride = 0);

}  // namespace cubesim::ops
