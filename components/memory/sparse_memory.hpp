#pragma once
// Functional HBM contents, stored sparsely: a page is allocated on its first write, so real
// memory grows with the bytes a run writes, not with the modelled capacity. Bytes never written
// read as zero (like memory freshly handed out by an OS), and reading them allocates nothing.
//
// Contract: single-threaded (the simulation thread owns it). Locations are physical (cube,
// offset), so the direct and interleaved windows of AddressMap see the same bytes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "components/memory/address_map.hpp"

namespace cubesim::components {

class SparseMemory {
 public:
  SparseMemory(const AddressMap& map, std::uint64_t page_bytes);

  // Copies between host memory and the modelled address space; any length, any alignment,
  // across pages, channels and cubes. Throws AddressError for an unmapped range.
  void write(std::uint64_t addr, const void* src, std::uint64_t bytes);
  void read(std::uint64_t addr, void* dst, std::uint64_t bytes) const;

  // A number that grows with every write: the newest write to any page of [addr, addr+bytes)
  // (0 if none). Caches of memory contents compare it with the value they were filled at.
  std::uint64_t newest_write(std::uint64_t addr, std::uint64_t bytes) const;
  std::uint64_t write_generation() const { return generation_; }

  std::uint64_t page_bytes() const { return page_bytes_; }
  std::size_t pages_allocated() const { return pages_.size(); }
  std::uint64_t bytes_allocated() const { return pages_.size() * page_bytes_; }

 private:
  std::uint64_t page_key(Location loc) const {
    return std::uint64_t{loc.global_cube} * pages_per_cube_ + loc.offset / page_bytes_;
  }

  const AddressMap& map_;
  std::uint64_t page_bytes_;
  std::uint64_t pages_per_cube_;
  struct Page {
    std::unique_ptr<std::byte[]> bytes;
    std::uint64_t generation = 0;  // of the last write
  };
  std::unordered_map<std::uint64_t, Page> pages_;
  std::uint64_t generation_ = 0;
};

}  // namespace cubesim::components
