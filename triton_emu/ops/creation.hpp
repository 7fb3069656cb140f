#pragma once
// Tiles made from nothing: tl.arange, tl.full, tl.zeros. Each costs its elements on the
// vector unit (class simple).

#include <cstddef>
#include <cstdint>

#include "components/dtype.hpp"
#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::ops {

// i32 values start .. end - 1.
tl::Tile arange(detail::Program& program, std::int64_t start, std::int64_t end);
// `value` in every element; faults name `what` ("full", "zeros").
tl::Tile filled(detail::Program& program, const char* what, tl::Shape shape, double value,
                DType dtype);
tl::Tile full(detail::Program& program, tl::Shape shape, double value, DType dtype);

// Writes `value`, converted once to `dtype`, into `n` elements at `p` (an integer value must
// be in the dtype's range: Program::check_fill_value).
void fill_value(std::byte* p, std::int64_t n, DType dtype, double value);

}  // namespace cubesim::ops
