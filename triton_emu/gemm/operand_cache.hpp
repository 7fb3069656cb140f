#pragma once
// f32 copies of f16 matrices held in memory, shared by every composite GEMM that reads the same
// bytes. The CPU backend computes f16 GEMMs in f32 (f16 values are exact in f32), so converting
// once instead of once per GEMM gives the same numbers: a sharded GEMM whose 64 programs all
// load the same A converts it once, not 64 times. Entries are checked against the memory's
// write generations, so a write to the bytes invalidates them; least recently used entries go
// first when the cache is over its capacity.
//
// Contract: used from the simulation thread only; the returned data is immutable and may be
// read by worker threads while the shared_ptr is held.

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "triton_emu/memory/functional_memory.hpp"

namespace cubesim::detail {

class OperandCache {
 public:
  explicit OperandCache(std::uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The f32 values of the rows x cols f16 matrix at `addr` (rows `row_stride` elements apart),
  // as memory holds it now.
  std::shared_ptr<const std::vector<float>> f16_as_f32(FunctionalMemory& mem, std::uint64_t addr,
                                                       std::int64_t rows, std::int64_t cols,
                                                       std::int64_t row_stride);
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  using Key = std::tuple<std::uint64_t, std::int64_t, std::int64_t, std::int64_t>;
  struct Entry {
    std::uint64_t as_of;
    std::shared_ptr<const std::vector<float>> data;
    std::uint64_t last_use;
  };
  std::map<Key, Entry> entries_;
  std::uint64_t capacity_;
  std::uint64_t bytes_ = 0, clock_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace cubesim::detail
