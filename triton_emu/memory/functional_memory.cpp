#include "triton_emu/memory/functional_memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cubesim::detail {

bool FunctionalMemory::Marks::empty() const {
  for (int h = 0; h < kMaxHolders; ++h)
    if (writes[h] > 0 || reads[h] > 0) return false;
  return true;
}

FunctionalMemory::FunctionalMemory(components::SparseMemory& store)
    : store_(store),
      map_(store.address_map()),
      page_(store.page_bytes()),
      pages_per_cube_(store.address_map().capacity_per_cube() / store.page_bytes()) {}

void FunctionalMemory::settle_for(std::uint64_t key, bool write) {
  // Looked up again for each holder: settling one unmarks pages, and may settle the other.
  for (int h = 0; h < kMaxHolders; ++h) {
    const auto it = marks_.find(key);
    if (it == marks_.end()) return;
    if (it->second.writes[h] > 0 || (write && it->second.reads[h] > 0)) holders_[h]->settle();
  }
}

void FunctionalMemory::settle_for(std::uint64_t addr, std::uint64_t bytes, bool write,
                                  const char* what) {
  if (marks_.empty()) return;
  map_.check_range(addr, bytes, what);
  // Settling writes only marked pages, and a page met earlier in the range holds no mark that
  // conflicts with this access any more: settling first and then accessing the whole range
  // gives what accessing it page by page, settling on the way, gives.
  for (std::uint64_t done = 0; done < bytes;) {
    const auto piece = map_.first_piece(addr + done, bytes - done, page_.value());
    settle_for(page_key(piece.loc), write);
    if (marks_.empty()) return;
    done += piece.len;
  }
}

void FunctionalMemory::write(std::uint64_t addr, const void* src, std::uint64_t bytes) {
  settle_for(addr, bytes, true, "write");
  store_.write(addr, src, bytes);
}

void FunctionalMemory::read(std::uint64_t addr, void* dst, std::uint64_t bytes) {
  settle_for(addr, bytes, false, "read");
  store_.read(addr, dst, bytes);
}

std::uint64_t FunctionalMemory::newest_write(std::uint64_t addr, std::uint64_t bytes) {
  settle_for(addr, bytes, false, "read");
  return store_.newest_write(addr, bytes);
}

std::vector<std::uint64_t> FunctionalMemory::page_keys(std::uint64_t addr,
                                                       std::uint64_t bytes) const {
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

void FunctionalMemory::attach(Holder& holder) {
  if (holder.slot_ >= 0) throw std::logic_error("FunctionalMemory::attach: the holder is attached");
  for (int h = 0; h < kMaxHolders; ++h)
    if (holders_[h] == nullptr) {
      holders_[h] = &holder;
      holder.slot_ = h;
      return;
    }
  throw std::logic_error("FunctionalMemory::attach: no free holder slot");
}

int FunctionalMemory::slot_of(const Holder& holder, const char* what) const {
  if (holder.slot_ < 0 || holders_[holder.slot_] != &holder)
    throw std::logic_error(std::string("FunctionalMemory::") + what +
                           ": the holder is not attached");
  return holder.slot_;
}

void FunctionalMemory::detach(Holder& holder) {
  holders_[slot_of(holder, "detach")] = nullptr;
  holder.slot_ = -1;
}

void FunctionalMemory::hold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write) {
  const int self = slot_of(holder, "hold");
  const auto keys = page_keys(addr, bytes);
  for (const std::uint64_t k : keys)
    for (int h = 0; h < kMaxHolders; ++h) {
      const auto it = marks_.find(k);  // settling unmarks pages
      if (it == marks_.end()) break;
      const Marks& m = it->second;
      if ((write && m.reads[h] > 0) || (m.writes[h] > 0 && (!write || h != self)))
        holders_[h]->settle();
    }
  for (const std::uint64_t k : keys) ++(write ? marks_[k].writes : marks_[k].reads)[self];
}

void FunctionalMemory::unhold(Holder& holder, std::uint64_t addr, std::uint64_t bytes, bool write) {
  const int self = slot_of(holder, "unhold");
  for (const std::uint64_t k : page_keys(addr, bytes)) {
    const auto it = marks_.find(k);
    if (it == marks_.end() || (write ? it->second.writes : it->second.reads)[self] == 0)
      throw std::logic_error("FunctionalMemory::unhold: the range was not held");
    --(write ? it->second.writes : it->second.reads)[self];
    if (it->second.empty()) marks_.erase(it);
  }
}

}  // namespace cubesim::detail
