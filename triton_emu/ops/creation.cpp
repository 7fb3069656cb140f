#include "triton_emu/ops/creation.hpp"

#include <climits>
#include <string>

#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::ops {

using detail::Program;
using tl::Shape;
using tl::Tile;
using tl::TileAccess;

Tile arange(Program& program, std::int64_t start, std::int64_t end) {
  if (end < start)
    program.fault("arange(" + std::to_string(start) + ", " + std::to_string(end) +
                  "): end < start");
  if (start < INT32_MIN || end - 1 > INT32_MAX)
    program.fault(
        "arange(" + std::to_string(start) + ", " + std::to_string(end) +
        "): the values do not fit the i32 index tile (-2^31 .. 2^31-1); index from the block "
        "instead: offset the pointer by the block's start in bytes and take arange(0, block)");
  Tile t = program.make_tile(Shape{end - start}, DType::i32);
  program.charge_vector(static_cast<std::uint64_t>(end - start));
  {
    auto* p = reinterpret_cast<std::int32_t*>(TileAccess::raw(t));
    for (std::int64_t i = start; i < end; ++i) p[i - start] = static_cast<std::int32_t>(i);
  }
  return t;
}

}  // namespace cubesim::ops
