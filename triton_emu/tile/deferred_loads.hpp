#pragma once
// Loads whose copy waits until the tile's values are used.
//
// A large unmasked load into a tile whose only use is as an operand of held composite GEMMs
// (held_gemms.hpp) never needs its bytes in the host's memory: the ADR's sharded GEMM loads
// 2 GiB of A that way at 4096^3. So a load of at least kMinBytes whole rows copies nothing when
// its transfers land; memory marks the rows as still to be read (FunctionalMemory::hold), and the
// tile's values are copied on first use (Tile::raw()), or before anything writes to those rows
// (settle()), whichever comes first. Until then the rows hold exactly what the load would have
// copied, so the tile's values are the same as if they had been copied at once.
//
// A write that lands while the load is still in flight copies the whole tile before it lands
// (the parts already delivered read what they read) and makes the load's remaining transfers
// copy their parts as they land, which is what an eager load does.
//
// Contract: simulation thread only. Every deferred tile is copied or forgotten before this goes.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "triton_emu/memory/functional_memory.hpp"
#include "triton_emu/memory/matrix_at.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::detail {

class DeferredLoads final : public FunctionalMemory::Holder {
 public:
  // Below this, marking pages costs more than copying (the per-call case is a 64-byte tile).
  static constexpr std::uint64_t kMinBytes = std::uint64_t{16} << 10;

  explicit DeferredLoads(FunctionalMemory& memory);
  ~DeferredLoads();
  DeferredLoads(const DeferredLoads&) = delete;
  DeferredLoads& operator=(const DeferredLoads&) = delete;

  // `tile` (no values yet) is loaded from `at`; `*in_flight` is where the load's transfers copy
  // to as they land (nullptr: nowhere), until landed().
  void defer(tl::Tile& tile, const MatrixAt& at, std::byte** in_flight);
  void landed(const tl::Tile& tile);
  // Copies the tile's values now (Tile::raw() calls this).
  void materialize(tl::Tile::Data& data);
  // The tile went before its values were used.
  void forget(tl::Tile::Data& data);
  // Copies every deferred tile.
  void settle() override;

  std::size_t deferred() const { return loads_.size(); }
  std::uint64_t bytes_not_copied() const { return bytes_not_copied_; }  // by tiles that went

 private:
  struct Load {
    MatrixAt at;
    std::byte** in_flight = nullptr;
  };
  void copy(tl::Tile::Data& data, const Load& load);

  FunctionalMemory& memory_;
  std::unordered_map<tl::Tile::Data*, Load> loads_;
  std::vector<std::byte> scratch_;
  std::uint64_t bytes_not_copied_ = 0;
};

}  // namespace cubesim::detail
