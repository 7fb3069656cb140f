#include "triton_emu/memory/matrix_at.hpp"

#include <cstring>

namespace cubesim::detail {

std::uint64_t MatrixAt::span_bytes() const {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<std::uint64_t>((rows - 1) * row_stride + cols) * dtype_size(dtype);
}

void read_matrix(FunctionalMemory& mem, const MatrixAt& m, std::byte* dst, std::int64_t ld,
                 std::vector<std::byte>& scratch) {
  const std::uint32_t size = dtype_size(m.dtype);
  const auto row_bytes = static_cast<std::uint64_t>(m.cols) * size;
  if (m.row_stride == m.cols && ld == m.cols) {
    mem.read(m.addr, dst, static_cast<std::uint64_t>(m.rows) * row_bytes);
    return;
  }
  if (m.row_stride == m.cols) {  // one read, then the rows into place
    scratch.resize(static_cast<std::size_t>(m.rows) * row_bytes);
    mem.read(m.addr, scratch.data(), scratch.size());
    for (std::int64_t i = 0; i < m.rows; ++i)
      std::memcpy(dst + i * ld * size, scratch.data() + static_cast<std::uint64_t>(i) * row_bytes,
                  row_bytes);
    return;
  }
  for (std::int64_t i = 0; i < m.rows; ++i)
    mem.read(m.addr + static_cast<std::uint64_t>(i * m.row_stride) * size, dst + i * ld * size,
             row_bytes);
}

}  // namespace cubesim::detail
