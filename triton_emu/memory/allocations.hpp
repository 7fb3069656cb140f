#pragma once
// The buffers Simulation::alloc has handed out. Every byte a kernel touches (load, store, ref,
// composite output) and every host read or write must lie inside one buffer: the HBM window
// alone would let an access run off one buffer into its neighbour unnoticed.
//
// Contract: buffers never overlap; a buffer of 0 bytes still has an address of its own.
// contains() is inline with a one-entry cache: every transfer of a load or store asks it.

#include <cstdint>
#include <map>
#include <string>

namespace cubesim::detail {

class Allocations {
 public:
  Allocations() = default;
  Allocations(const Allocations&) = delete;  // last_ points into buffers_
  Allocations& operator=(const Allocations&) = delete;

  void add(std::uint64_t begin, std::uint64_t bytes);

  bool contains(std::uint64_t addr, std::uint64_t bytes) const {
    if (bytes == 0) return true;
    if (last_ != buffers_.end() && addr >= last_->first && addr - last_->first <= last_->second &&
        bytes <= last_->second - (addr - last_->first))
      return true;
    return find(addr, bytes);
  }

  // Why [addr, addr + bytes) is not inside one buffer: the nearest buffer, its bounds and how
  // far the access lies outside it. `what` names the access ("load", "store", ...).
  std::string describe_miss(std::uint64_t addr, std::uint64_t bytes, const char* what) const;

  std::size_t size() const { return buffers_.size(); }

 private:
  bool find(std::uint64_t addr, std::uint64_t bytes) const;

  std::map<std::uint64_t, std::uint64_t> buffers_;  // begin -> bytes
  mutable std::map<std::uint64_t, std::uint64_t>::const_iterator last_ = buffers_.end();
};

}  // namespace cubesim::detail
