#include "triton_emu/memory/placement.hpp"

#include <algorithm>
#include <string>

#include "triton_emu/errors.hpp"

namespace cubesim::detail {

HbmPlacement::HbmPlacement(const components::AddressMap& map)
    : map_(map), direct_next_(map.cubes(), 0), interleaved_low_(map.interleaved_size()) {}

Ptr HbmPlacement::place(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw UsageError("alloc: alignment " + std::to_string(align) + " is not a power of two");
  return placement.interleaved ? place_interleaved(bytes, align)
                               : place_on_cube(bytes, placement, align);
}

std::uint64_t HbmPlacement::interleaved_floor(std::uint64_t low) const {
  const std::uint64_t g = map_.interleave_bytes();
  return (low / (g * map_.cubes())) * g;
}

Ptr HbmPlacement::place_interleaved(std::uint64_t bytes, std::uint64_t align) {
  const std::uint64_t a = std::max(align, map_.interleave_bytes());
  if (bytes > interleaved_low_)
    throw UsageError("alloc: " + std::to_string(bytes) + " bytes do not fit in HBM");
  const std::uint64_t low = (interleaved_low_ - bytes) / a * a;
  const std::uint64_t floor = interleaved_floor(low);
  for (std::uint64_t c = 0; c < direct_next_.size(); ++c)
    if (direct_next_[c] > floor)
      throw UsageError("alloc: " + std::to_string(bytes) +
                       " bytes interleaved do not fit: HBM is full (cube " + std::to_string(c) +
                       " has " + std::to_string(direct_next_[c]) + " bytes of direct buffers)");
  interleaved_low_ = low;
  return Ptr{components::AddressMap::kInterleavedBase + low};
}

Ptr HbmPlacement::place_on_cube(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  const std::uint32_t sips = map_.cubes() / map_.cubes_per_sip();
  if (placement.sip >= sips || placement.cube >= map_.cubes_per_sip())
    throw UsageError("alloc: no cube (sip " + std::to_string(placement.sip) + ", cube " +
                     std::to_string(placement.cube) + ") in this system of " +
                     std::to_string(sips) + " SIP(s) x " + std::to_string(map_.cubes_per_sip()) +
                     " cubes");
  const std::uint32_t cube = map_.global_cube({placement.sip, placement.cube});
  const std::uint64_t start = (direct_next_[cube] + align - 1) / align * align;
  if (start + bytes > std::min(map_.capacity_per_cube(), interleaved_floor(interleaved_low_)))
    throw UsageError("alloc: " + std::to_string(bytes) + " bytes do not fit on cube (sip " +
                     std::to_string(placement.sip) + ", cube " + std::to_string(placement.cube) +
                     ")");
  direct_next_[cube] = start + bytes;
  return Ptr{map_.direct_address({cube, start})};
}

}  // namespace cubesim::detail
