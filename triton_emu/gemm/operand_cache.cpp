#include "triton_emu/gemm/operand_cache.hpp"

#include "triton_emu/backends/cpu_convert.hpp"

namespace cubesim::detail {

std::shared_ptr<const std::vector<float>> OperandCache::f16_as_f32(FunctionalMemory& mem,
                                                                   std::uint64_t addr,
                                                                   std::int64_t rows,
                                                                   std::int64_t cols,
                                                                   std::int64_t row_stride) {
  const std::uint64_t span =
      rows == 0 ? 0 : static_cast<std::uint64_t>((rows - 1) * row_stride + cols) * 2;
  const std::uint64_t newest = mem.newest_write(addr, span);
  const Key key{addr, rows, cols, row_stride};
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.as_of >= newest) {
    ++hits_;
    it->second.last_use = ++clock_;
    return it->second.data;
  }
  ++misses_;
  std::vector<std::uint16_t> raw(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    mem.read(addr + static_cast<std::uint64_t>(i * row_stride) * 2, raw.data() + i * cols,
             static_cast<std::uint64_t>(cols) * 2);
  auto data = std::make_shared<std::vector<float>>(raw.size());
  if (!raw.empty())
    backends::convert_block(DType::f16, raw.data(), cols, DType::f32, data->data(), cols, rows,
                            cols);
  const std::uint64_t size = data->size() * sizeof(float);
  if (it != entries_.end()) {
    bytes_ -= it->second.data->size() * sizeof(float);
    entries_.erase(it);
  }
  while (bytes_ + size > capacity_ && !entries_.empty()) {  // evict the least recently used
    auto lru = entries_.begin();
    for (auto e = entries_.begin(); e != entries_.end(); ++e)
      if (e->second.last_use < lru->second.last_use) lru = e;
    bytes_ -= lru->second.data->size() * sizeof(float);
    entries_.erase(lru);
  }
  if (size <= capacity_) {
    entries_.emplace(key, Entry{mem.write_generation(), data, ++clock_});
    bytes_ += size;
  }
  return data;
}

}  // namespace cubesim::detail
