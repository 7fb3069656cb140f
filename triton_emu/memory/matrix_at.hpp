#pragma once
// A matrix as it lies in the modelled memory, and copying one out of it: what the work that
// memory holds back (held_gemms.hpp, deferred_loads.hpp) reads when it is done.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "components/dtype.hpp"
#include "triton_emu/memory/functional_memory.hpp"

namespace cubesim::detail {

// A row-major matrix in memory: `rows` rows of `cols` elements, `row_stride` elements apart.
struct MatrixAt {
  std::uint64_t addr = 0;
  std::int64_t rows = 0, cols = 0, row_stride = 0;
  DType dtype = DType::f32;
  auto operator<=>(const MatrixAt&) const = default;
  std::uint64_t span_bytes() const;  // from the first element to the last one
};

// Copies the matrix's rows to `dst`, `ld` elements apart. `scratch` is reused between calls.
void read_matrix(FunctionalMemory& mem, const MatrixAt& m, std::byte* dst, std::int64_t ld,
                 std::vector<std::byte>& scratch);

}  // namespace cubesim::detail
