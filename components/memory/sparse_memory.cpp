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
    auto& page = pages_[page_key(piece.loc)];  // a reference survives settle()'s writes
    if (!page.bytes) page.bytes = std::make_unique<std::byte[]>(page_bytes_);  // zeros
    settle_for(page, true);
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
    if (it == pages_.end()) {
      std::memset(out + done, 0, piece.len);
    } else {
      // Settling writes only marked pages, so the pages already copied stay as they were. It
      // may add pages: a reference survives that, an iterator need not.
      const Page& page = it->second;
      settle_for(page, false);
      std::memcpy(out + done, page.bytes.get() + piece.loc.offset % page_bytes_, piece.len);
    }
    done += piece.len;
  }
}

std::uint64_t SparseMemory::newest_write(std::uint64_t addr, std::uint64_t bytes) const {
  std::uint64_t newest = 0;
  map_.check_range(addr, bytes, "read");
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_bytes_);
    const auto it = pages_.find(page_key(piece.loc));
    if (it != pages_.end()) {
      const Page& page = it->second;  // as in read()
      settle_for(page, false);
      newest = std::max(newest, page.generation);
    }
    done += piece.len;
  }
  return newest;
}

std::vector<std::uint64_t> SparseMemory::page_keys(std::uint64_t addr, std::uint64_t bytes) const {
  map_.check_range(addr, bytes, "hold");
  std::vector<std::uint64_t> keys;
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_bytes_);
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

void SparseMemory::hold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write) {
  const int self = holder.slot_;
  if (self < 0 || holders_[self] != &holder)
    throw std::logic_error("SparseMemory::hold: the holder is not attached");
  const auto keys = page_keys(addr, bytes);
  for (const std::uint64_t k : keys) {
    const auto it = pages_.find(k);
    if (it == pages_.end()) continue;
    const Page& page = it->second;  // settling may add pages (see read())
    for (int h = 0; h < kMaxHolders; ++h)
      if ((write && page.held_reads[h] > 0) || (page.held_writes[h] > 0 && (!write || h != self)))
        holders_[h]->settle();
  }
  for (const std::uint64_t k : keys) {
    auto& page = pages_[k];
    if (!page.bytes) page.bytes = std::make_unique<std::byte[]>(page_bytes_);  // zeros
    ++(write ? page.held_writes : page.held_reads)[self];
  }
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
