#pragma once
// Functional HBM contents, stored sparsely: a page is allocated on its first write, so real
// memory grows with the bytes a run writes, not with the modelled capacity. Bytes never written
// read as zero (like memory freshly handed out by an OS), and reading them allocates nothing.
//
// Contract: single-threaded (the simulation thread owns it). Locations are physical (cube,
// offset), so the direct and interleaved windows of AddressMap see the same bytes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "components/memory/address_map.hpp"
#include "components/memory/divisor.hpp"

namespace cubesim::components {

class SparseMemory {
 public:
  SparseMemory(const AddressMap& map, std::uint64_t page_bytes);
  // The page cache points into the map.
  SparseMemory(const SparseMemory&) = delete;
  SparseMemory& operator=(const SparseMemory&) = delete;

  // Copies between host memory and the modelled address space; any length, any alignment,
  // across pages, channels and cubes. Throws AddressError for an unmapped range.
  void write(std::uint64_t addr, const void* src, std::uint64_t bytes);
  void read(std::uint64_t addr, void* dst, std::uint64_t bytes) const;

  // A number that grows with every write: the newest write to any page of [addr, addr+bytes)
  // (0 if none). Caches of memory contents compare it with the value they were filled at.
  std::uint64_t newest_write(std::uint64_t addr, std::uint64_t bytes) const;
  std::uint64_t write_generation() const { return generation_; }

  const AddressMap& address_map() const { return map_; }
  std::uint64_t page_bytes() const { return page_.value(); }
  std::size_t pages_allocated() const { return pages_.size(); }
  std::uint64_t bytes_allocated() const { return pages_.size() * page_.value(); }

 private:
  // A page's bytes come from calloc: a large page is mapped on demand and reads as zeros, so
  // host memory grows with the parts of it a run touches, not with the page size.
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  struct Page {
    std::unique_ptr<std::byte, Free> bytes;
    std::uint64_t generation = 0;  // of the last write
  };
  std::uint64_t page_key(Location loc) const {
    return std::uint64_t{loc.global_cube} * pages_per_cube_ + page_.quot(loc.offset);
  }
  // The page `key`, or null while nothing was written there. The last page found is
  // remembered: pages are never dropped and the map's nodes never move, so the pointer stays
  // valid, and runs of accesses to one page (small tl.loads of one tile) skip the lookup and
  // its division.
  const Page* find_page(std::uint64_t key) const {
    if (key == last_key_) return last_page_;
    const auto it = pages_.find(key);
    if (it == pages_.end()) return nullptr;
    last_key_ = key;
    last_page_ = &it->second;
    return last_page_;
  }
  Page& page(std::uint64_t key);  // allocated (zeros) when new

  const AddressMap& map_;
  Divisor page_;  // bytes per page
  std::uint64_t pages_per_cube_;

  std::unordered_map<std::uint64_t, Page> pages_;
  mutable std::uint64_t last_key_ = ~std::uint64_t{0};
  mutable const Page* last_page_ = nullptr;
  std::uint64_t generation_ = 0;
};

}  // namespace cubesim::components
