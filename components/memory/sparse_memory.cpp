#include "components/memory/sparse_memory.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace cubesim::components {

SparseMemory::SparseMemory(const AddressMap& map, std::uint64_t page_bytes)
    : map_(map), page_(page_bytes) {
  // Pieces are cut at multiples of the page size in the address (AddressMap::first_piece), and
  // pages at multiples of it in a cube's offset: the two agree for powers of two only.
  if (!std::has_single_bit(page_bytes))
    throw std::invalid_argument("SparseMemory: the page size must be a power of two");
  if (map.capacity_per_cube() % page_bytes != 0)
    throw std::invalid_argument("SparseMemory: the page size must divide the HBM capacity");
  pages_per_cube_ = map.capacity_per_cube() / page_bytes;
}

void SparseMemory::write(std::uint64_t addr, const void* src, std::uint64_t bytes) {
  const auto* in = static_cast<const std::byte*>(src);
  map_.check_range(addr, bytes, "write");
  ++generation_;
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_.value());
    Page& p = page(page_key(piece.loc));
    p.generation = generation_;
    std::memcpy(p.bytes.get() + page_.rem(piece.loc.offset), in + done, piece.len);
    done += piece.len;
  }
}

void SparseMemory::read(std::uint64_t addr, void* dst, std::uint64_t bytes) const {
  auto* out = static_cast<std::byte*>(dst);
  map_.check_range(addr, bytes, "read");
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_.value());
    if (const Page* p = find_page(page_key(piece.loc)); !p) {
      std::memset(out + done, 0, piece.len);
    } else {
      std::memcpy(out + done, p->bytes.get() + page_.rem(piece.loc.offset), piece.len);
    }
    done += piece.len;
  }
}

std::uint64_t SparseMemory::newest_write(std::uint64_t addr, std::uint64_t bytes) const {
  std::uint64_t newest = 0;
  map_.check_range(addr, bytes, "read");
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_.value());
    if (const Page* p = find_page(page_key(piece.loc))) newest = std::max(newest, p->generation);
    done += piece.len;
  }
  return newest;
}

SparseMemory::Page& SparseMemory::page(std::uint64_t key) {
  if (key == last_key_) return const_cast<Page&>(*last_page_);  // pages_ is not const here
  Page& p = pages_[key];
  if (!p.bytes) {
    p.bytes.reset(static_cast<std::byte*>(std::calloc(page_.value(), 1)));  // zeros
    if (!p.bytes) throw std::bad_alloc();
  }
  last_key_ = key;
  last_page_ = &p;
  return p;
}

}  // namespace cubesim::components
