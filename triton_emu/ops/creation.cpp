#include "triton_emu/ops/creation.hpp"

#include <climits>
#include <cstring>
#include <string>

#include "triton_emu/tile/element_codec.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::ops {

using detail::Program;
using tl::encode_f64;
using tl::Shape;
using tl::Tile;
using tl::TileAccess;

// Fills n elements of dtype with one value, converted once.
void fill_value(std::byte* p, std::int64_t n, DType dtype, double value) {
  const std::uint32_t size = dtype_size(dtype);
  std::byte one[8];
  // Callers check the range of integers (full() faults, load's `other` too): exact.
  encode_f64(&value, 1, dtype, one);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(p + i * size, one, size);
}

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

Tile filled(Program& program, const char* what, Shape shape, double value, DType dtype) {
  program.check_fill_value(what, value, dtype);
  Tile t = program.make_tile(shape, dtype, program.tile_bytes(what, shape, dtype), true);
  program.charge_vector(static_cast<std::uint64_t>(shape.numel()));
  if (std::byte* p = TileAccess::raw(t)) fill_value(p, shape.numel(), dtype, value);
  return t;
}

Tile full(Program& program, Shape shape, double value, DType dtype) {
  return filled(program, "full", shape, value, dtype);
}

}  // namespace cubesim::ops
