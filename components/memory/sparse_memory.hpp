#pragma once
// Functional HBM contents, stored sparsely: a page is allocated on its first write, so real
// memory grows with the bytes a run writes, not with the modelled capacity. Bytes never written
// read as zero (like memory freshly handed out by an OS), and reading them allocates nothing.
//
// Contract: single-threaded (the simulation thread owns it). Locations are physical (cube,
// offset), so the direct and interleaved windows of AddressMap see the same bytes.
//
// Held-back writes: a Holder (composite GEMMs whose products are computed late) marks the pages
// it will write and the pages it has still to read. Before an access that would see a held-back
// write (reading or writing a page marked for writing) or change what the holder has still to
// read (writing a page marked for reading), memory calls holder.settle(), which unmarks its pages
// and writes what it held back. Marks are per physical page, so both windows see them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "components/memory/address_map.hpp"

namespace cubesim::components {

class SparseMemory {
 public:
  class Holder {
   public:
    // Unmarks every page it marked (unhold) and writes what it held back.
    virtual void settle() = 0;

   protected:
    ~Holder() = default;
  };

  SparseMemory(const AddressMap& map, std::uint64_t page_bytes);

  // Copies between host memory and the modelled address space; any length, any alignment,
  // across pages, channels and cubes. Throws AddressError for an unmapped range.
  void write(std::uint64_t addr, const void* src, std::uint64_t bytes);
  void read(std::uint64_t addr, void* dst, std::uint64_t bytes) const;

  // A number that grows with every write: the newest write to any page of [addr, addr+bytes)
  // (0 if none). Caches of memory contents compare it with the value they were filled at.
  // Settles a holder's writes to the range first, as read() does.
  std::uint64_t newest_write(std::uint64_t addr, std::uint64_t bytes) const;
  std::uint64_t write_generation() const { return generation_; }

  // One holder at a time (nullptr: none); it must outlive its marks or settle them first.
  void set_holder(Holder* holder) { holder_ = holder; }
  // Marks the pages of [addr, addr + bytes) as to be written (`write`) or still to be read by
  // the holder, after settling what that access would conflict with as read() and write() do,
  // except that held writes do not conflict with each other (the holder orders them). Pages
  // are allocated (zeros) if needed. unhold() takes one such mark back.
  void hold(std::uint64_t addr, std::uint64_t bytes, bool write);
  void unhold(std::uint64_t addr, std::uint64_t bytes, bool write);

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
    std::uint32_t held_writes = 0, held_reads = 0;  // the holder's marks
  };
  // Calls the holder if an access of this kind to `page` must wait for it.
  void settle_for(const Page& page, bool write) const {
    if (page.held_writes > 0 || (write && page.held_reads > 0)) holder_->settle();
  }
  // The distinct pages of a range, sorted.
  std::vector<std::uint64_t> page_keys(std::uint64_t addr, std::uint64_t bytes) const;

  std::unordered_map<std::uint64_t, Page> pages_;
  std::uint64_t generation_ = 0;
  Holder* holder_ = nullptr;
};

}  // namespace cubesim::components
