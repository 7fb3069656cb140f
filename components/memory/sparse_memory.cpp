#include "components/memory/sparse_memory.hpp"

#include <cstring>
#include <stdexcept>

namespace cubesim::components {

SparseMemory::SparseMemory(const AddressMap& map, std::uint64_t page_bytes)
    : map_(map), page_bytes_(page_bytes) {
  if (page_bytes == 0 || map.capacity_per_cube() % page_bytes != 0)
    throw std::invalid_argument("SparseMemory: the page size must divide the HBM capacity");
  pages_per_cube_ = map.capacity_per_cube() / page_bytes;
}

void SparseMemory::write(std::uint64_t addr, const void* src, std::uint64_t bytes) {
  const auto* in = static_cast<const std::byte*>(src);
  map_.for_each_piece(addr, bytes, page_bytes_, [&](std::uint64_t a, Location loc,
                                                    std::uint64_t len) {
    auto& page = pages_[page_key(loc)];
    if (!page) page = std::make_unique<std::byte[]>(page_bytes_);  // value-initialised: zeros
    std::memcpy(page.get() + loc.offset % page_bytes_, in + (a - addr), len);
  });
}

void SparseMemory::read(std::uint64_t addr, void* dst, std::uint64_t bytes) const {
  auto* out = static_cast<std::byte*>(dst);
  map_.for_each_piece(addr, bytes, page_bytes_, [&](std::uint64_t a, Location loc,
                                                    std::uint64_t len) {
    const auto it = pages_.find(page_key(loc));
    if (it == pages_.end())
      std::memset(out + (a - addr), 0, len);
    else
      std::memcpy(out + (a - addr), it->second.get() + loc.offset % page_bytes_, len);
  });
}

}  // namespace cubesim::components
