#include "triton_emu/memory/allocations.hpp"

#include <iterator>

#include "components/memory/address_map.hpp"

namespace cubesim::detail {

using components::hex_address;

void Allocations::add(std::uint64_t begin, std::uint64_t bytes) {
  buffers_[begin] = bytes;
  last_ = buffers_.end();  // map iterators stay valid, but keep the cache simple to reason about
}

bool Allocations::find(std::uint64_t addr, std::uint64_t bytes) const {
  auto it = buffers_.upper_bound(addr);
  if (it == buffers_.begin()) return false;
  --it;
  const std::uint64_t into = addr - it->first;
  if (into > it->second || bytes > it->second - into) return false;
  last_ = it;
  return true;
}

std::string Allocations::describe_miss(std::uint64_t addr, std::uint64_t bytes,
                                       const char* what) const {
  const std::string access = std::string(what) + " of " + std::to_string(bytes) + " bytes at [" +
                             hex_address(addr) + ", " + hex_address(addr + bytes) + ")";
  const std::string fix = "; check the offsets and shapes against the buffers allocated";
  if (buffers_.empty()) return access + " touches no buffer: nothing has been allocated" + fix;
  auto buffer = [](std::map<std::uint64_t, std::uint64_t>::const_iterator b) {
    return "the buffer [" + hex_address(b->first) + ", " + hex_address(b->first + b->second) +
           ") of " + std::to_string(b->second) + " bytes";
  };
  const auto after = buffers_.upper_bound(addr);  // the first buffer starting past addr
  const auto at = after == buffers_.begin() ? buffers_.end() : std::prev(after);
  if (at != buffers_.end() && (addr < at->first + at->second || addr == at->first)) {
    const std::uint64_t end = at->first + at->second;
    return access + " starts " + std::to_string(addr - at->first) + " bytes into " + buffer(at) +
           " and runs " + std::to_string(addr + bytes - end) + " bytes past its end" + fix;
  }
  if (after != buffers_.end() && addr + bytes > after->first)
    return access + " starts before " + buffer(after) + " and runs into it" + fix;
  const bool before_is_nearer =
      at != buffers_.end() &&
      (after == buffers_.end() || addr - (at->first + at->second) <= after->first - (addr + bytes));
  if (before_is_nearer)
    return access + " lies outside every allocated buffer; the nearest is " + buffer(at) +
           ", which ends " + std::to_string(addr - (at->first + at->second)) + " bytes before it" +
           fix;
  return access + " lies outside every allocated buffer; the nearest is " + buffer(after) +
         ", which starts " + std::to_string(after->first - (addr + bytes)) + " bytes after it" +
         fix;
}

}  // namespace cubesim::detail
