#include "components/memory/sparse_memory.hpp"

#include <algorithm>
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
  map_.check_range(addr, bytes, "write");
  ++generation_;
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_bytes_);
    auto& page = pages_[page_key(piece.loc)];
    if (!page.bytes) page.bytes = std::make_unique<std::byte[]>(page_bytes_);  // zeros
    page.generation = generation_;
    std::memcpy(page.bytes.get() + piece.loc.offset % page_bytes_, in + done, piece.len);
    done += piece.len;
  }
}

void SparseMemory::read(std::uint64_t addr, void* dst, std::uint64_t bytes) const {
  auto* out = static_cast<std::byte*>(dst);
  map_.check_range(addr, bytes, "read");
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_bytes_);
    const auto it = pages_.find(page_key(piece.loc));
    if (it == pages_.end())
      std::memset(out + done, 0, piece.len);
    else
      std::memcpy(out + done, it->second.bytes.get() + piece.loc.offset % page_bytes_, piece.len);
    done += piece.len;
  }
}

std::uint64_t SparseMemory::newest_write(std::uint64_t addr, std::uint64_t bytes) const {
  std::uint64_t newest = 0;
  map_.check_range(addr, bytes, "read");
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_bytes_);
    const auto it = pages_.find(page_key(piece.loc));
    if (it != pages_.end()) newest = std::max(newest, it->second.generation);
    done += piece.len;
  }
  return newest;
}

}  // namespace cubesim::components
