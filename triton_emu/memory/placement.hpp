#pragma once
// Where Simulation::alloc puts a buffer in HBM. Interleaved buffers take whole rows of
// granules (one granule per cube) from the top of every cube's range, growing down; direct
// buffers grow up from the bottom of their own cube. The two must not meet, so a cube's
// direct buffers and the interleaved rows each see what the other has taken.
//
// Contract: place() returns ranges that never overlap and are aligned as asked; a request
// that does not fit is a UsageError saying which cube is full, and changes nothing.

#include <cstdint>
#include <vector>

#include "components/memory/address_map.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim {

// Where alloc() puts a buffer.
struct Placement {
  bool interleaved = true;
  std::uint32_t sip = 0, cube = 0;
  static Placement interleaved_across_cubes() { return {}; }
  static Placement on_cube(std::uint32_t sip, std::uint32_t cube) { return {false, sip, cube}; }
};

namespace detail {

class HbmPlacement {
 public:
  explicit HbmPlacement(const components::AddressMap& map);

  // `bytes` (at least 1) placed as `placement` says, aligned to `align` bytes (a power of two;
  // interleaved buffers to at least a granule).
  Ptr place(std::uint64_t bytes, Placement placement, std::uint64_t align);

 private:
  Ptr place_interleaved(std::uint64_t bytes, std::uint64_t align);
  Ptr place_on_cube(std::uint64_t bytes, Placement placement, std::uint64_t align);
  // The lowest offset, in every cube, of interleaved rows that start at window offset `low`.
  std::uint64_t interleaved_floor(std::uint64_t low) const;

  const components::AddressMap& map_;
  std::vector<std::uint64_t> direct_next_;  // per cube: next free offset from the bottom
  std::uint64_t interleaved_low_;           // window offset where interleaved buffers begin
};

}  // namespace detail
}  // namespace cubesim
