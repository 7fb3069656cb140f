#include "components/memory/sparse_memory.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
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
    Page& p = page(page_key(piece.loc));  // a reference survives settle()'s writes
    settle_for(p, true);
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
      // Settling writes only marked pages, so the pages already copied stay as they were. It
      // may add pages: a reference survives that.
      settle_for(*p, false);
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
    if (const Page* p = find_page(page_key(piece.loc))) {  // as in read()
      settle_for(*p, false);
      newest = std::max(newest, p->generation);
    }
    done += piece.len;
  }
  return newest;
}

std::vector<std::uint64_t> SparseMemory::page_keys(std::uint64_t addr, std::uint64_t bytes) const {
  map_.check_range(addr, bytes, "hold");
  std::vector<std::uint64_t> keys;
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_.value());
    keys.push_back(page_key(piece.loc));
    done += piece.len;
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

void SparseMemory::attach(Holder& holder) {
  if (holder.slot_ >= 0) throw std::logic_error("SparseMemory::attach: the holder is attached");
  for (int h = 0; h < kMaxHolders; ++h)
    if (holders_[h] == nullptr) {
      holders_[h] = &holder;
      holder.slot_ = h;
      return;
    }
  throw std::logic_error("SparseMemory::attach: no free holder slot");
}

void SparseMemory::detach(Holder& holder) {
  if (holder.slot_ < 0 || holders_[holder.slot_] != &holder)
    throw std::logic_error("SparseMemory::detach: the holder is not attached");
  holders_[holder.slot_] = nullptr;
  holder.slot_ = -1;
}

SparseMemory::Page& SparseMemory::page(std::uint64_t key) {
  if (key == last_key_) return const_cast<Page&>(*last_page_);  // pages_ is not const here
  Page& p = pages_[key];
  if (!p.bytes) p.bytes = std::make_unique<std::byte[]>(page_.value());  // zeros
  last_key_ = key;
  last_page_ = &p;
  return p;
}

void SparseMemory::hold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write) {
  const int self = holder.slot_;
  if (self < 0 || holders_[self] != &holder)
    throw std::logic_error("SparseMemory::hold: the holder is not attached");
  const auto keys = page_keys(addr, bytes);
  for (const std::uint64_t k : keys) {
    const Page* p = find_page(k);  // settling may add pages (see read())
    if (!p) continue;
    for (int h = 0; h < kMaxHolders; ++h)
      if ((write && p->held_reads[h] > 0) || (p->held_writes[h] > 0 && (!write || h != self)))
        holders_[h]->settle();
  }
  for (const std::uint64_t k : keys) ++(write ? page(k).held_writes : page(k).held_reads)[self];
}

void SparseMemory::unhold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write) {
  const int self = holder.slot_;
  if (self < 0 || holders_[self] != &holder)
    throw std::logic_error("SparseMemory::unhold: the holder is not attached");
  for (const std::uint64_t k : page_keys(addr, bytes)) {
    const auto it = pages_.find(k);
    if (it == pages_.end() || (write ? it->second.held_writes : it->second.held_reads)[self] == 0)
      throw std::logic_error("SparseMemory::unhold: the range was not held");
    --(write ? it->second.held_writes : it->second.held_reads)[self];
  }
}

}  // namespace cubesim::components
