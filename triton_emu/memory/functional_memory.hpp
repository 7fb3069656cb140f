#pragma once
// The modelled memory as the programming layer uses it: the system's byte store
// (components::SparseMemory) and the work this layer holds back on it. Every functional access
// triton_emu makes (loads and stores, host reads and writes, GEMM operands and results) goes
// through here, so that held-back work is done before anything can see or disturb it.
//
// Held-back work: a Holder (composite GEMMs whose products are computed late, held_gemms.hpp;
// loads whose copy waits until the values are used, deferred_loads.hpp) marks the pages it will
// write and the pages it has still to read. Before an access that would see a held-back write
// (reading or writing a page marked for writing) or change what a holder has still to read
// (writing a page marked for reading), this calls that holder's settle(), which unmarks its
// pages and does what it held back. Marks are per physical page of the store, so both windows
// of the AddressMap see them.
//
// Contract: single-threaded (the simulation thread owns it). Nothing else writes to the store
// while pages are marked.

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/memory/divisor.hpp"
#include "components/memory/sparse_memory.hpp"

namespace cubesim::detail {

class FunctionalMemory {
 public:
  class Holder {
   public:
    // Unmarks every page it marked (unhold) and does what it held back. May be called while
    // another holder settles (its writes may conflict with this holder's marks).
    virtual void settle() = 0;

   protected:
    virtual ~Holder() = default;

   private:
    friend class FunctionalMemory;
    int slot_ = -1;  // in holders_, while attached
  };
  static constexpr int kMaxHolders = 2;

  explicit FunctionalMemory(components::SparseMemory& store);
  // Holders point here.
  FunctionalMemory(const FunctionalMemory&) = delete;
  FunctionalMemory& operator=(const FunctionalMemory&) = delete;

  // As SparseMemory's, after settling the holders whose marks the access conflicts with, page by
  // page in address order. Throws AddressError for an unmapped range.
  void write(std::uint64_t addr, const void* src, std::uint64_t bytes);
  void read(std::uint64_t addr, void* dst, std::uint64_t bytes);
  // Settles a holder's writes to the range first, as read() does.
  std::uint64_t newest_write(std::uint64_t addr, std::uint64_t bytes);
  std::uint64_t write_generation() const { return store_.write_generation(); }

  // Up to kMaxHolders holders; each must unmark its pages before it is detached.
  void attach(Holder& holder);
  void detach(Holder& holder);
  // Marks the pages of [addr, addr + bytes) as to be written (`write`) or still to be read by
  // `holder`, after settling the holders that access would conflict with as read() and write()
  // do, except that a holder's own held writes do not conflict with each other (it orders
  // them). unhold() takes one such mark back.
  void hold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write);
  void unhold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write);

 private:
  struct Marks {
    std::array<std::uint32_t, kMaxHolders> writes{}, reads{};
    bool empty() const;
  };
  std::uint64_t page_key(components::Location loc) const {
    return std::uint64_t{loc.global_cube} * pages_per_cube_ + page_.quot(loc.offset);
  }
  // Settles each holder that an access of this kind to the page `key` must wait for.
  void settle_for(std::uint64_t key, bool write);
  void settle_for(std::uint64_t addr, std::uint64_t bytes, bool write, const char* what);
  // The distinct pages of a range, sorted.
  std::vector<std::uint64_t> page_keys(std::uint64_t addr, std::uint64_t bytes) const;
  int slot_of(const Holder& holder, const char* what) const;

  components::SparseMemory& store_;
  const components::AddressMap& map_;
  components::Divisor page_;  // the store's page size
  std::uint64_t pages_per_cube_;
  std::unordered_map<std::uint64_t, Marks> marks_;  // only pages that hold a mark
  std::array<Holder*, kMaxHolders> holders_{};
};

}  // namespace cubesim::detail
