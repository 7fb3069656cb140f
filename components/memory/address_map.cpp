#include "components/memory/address_map.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace cubesim::components {

std::string hex_address(std::uint64_t addr) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
  return buf;
}

AddressMap::AddressMap(const SystemConfig& config)
    : cubes_(config.total_cubes()),
      cubes_per_sip_(config.cubes_per_sip),
      capacity_(config.cube.hbm.capacity_bytes),
      granule_(config.memory.interleave_bytes),
      channels_(config.cube.hbm.channels),
      channel_granule_(config.cube.hbm.channel_interleave_bytes) {
  // The spec validator guarantees these; a hand-made config must too.
  if (cubes_.value() == 0 || capacity_.value() == 0 || granule_.value() == 0 ||
      channels_.value() == 0 || channel_granule_.value() == 0)
    throw std::invalid_argument("AddressMap: cubes, capacity, granules and channels must be > 0");
  if (capacity_.value() % granule_.value() != 0)
    throw std::invalid_argument(
        "AddressMap: HBM capacity per cube must be a multiple of the "
        "interleave granule");
  if (kDirectBase + capacity_.value() * cubes_.value() > kMappedBase ||
      capacity_.value() * cubes_.value() > kInterleavedBase - kMappedBase ||
      capacity_.value() > (std::uint64_t{1} << kCubeShift) ||
      cubes_.value() >= (std::uint64_t{1} << (64 - kCubeShift)) ||
      capacity_.value() * cubes_.value() > ~std::uint64_t{0} - kInterleavedBase)
    throw std::invalid_argument("AddressMap: total HBM capacity does not fit the address space");
}

std::uint64_t AddressMap::cube_base(std::uint32_t global_cube) const {
  return kDirectBase + std::uint64_t{global_cube} * capacity_.value();
}

std::uint64_t AddressMap::direct_address(Location loc) const {
  return cube_base(loc.global_cube) + loc.offset;
}

std::uint64_t AddressMap::interleaved_address(Location loc) const {
  const std::uint64_t granule_index = granule_.quot(loc.offset) * cubes_.value() + loc.global_cube;
  return kInterleavedBase + granule_index * granule_.value() + granule_.rem(loc.offset);
}

std::uint64_t AddressMap::map_frames(std::span<const Location> frames) {
  const std::uint64_t first = mapped_end();
  if ((frames_.size() + frames.size()) * frame_bytes() > kInterleavedBase - kMappedBase)
    throw std::length_error("AddressMap: the mapped window is full");
  for (const Location& f : frames) {
    if (f.global_cube == kNoCube || f.global_cube == kUntouched) {
      frames_.push_back(f.global_cube == kNoCube ? kNoFrame : kUntouchedFrame);
      untouched_ += f.global_cube == kUntouched ? 1 : 0;
      continue;
    }
    if (f.global_cube >= cubes_.value() || f.offset >= capacity_.value() ||
        channel_granule_.rem(f.offset) != 0)
      throw std::invalid_argument("AddressMap: frame at cube " + std::to_string(f.global_cube) +
                                  " offset " + hex_address(f.offset) +
                                  " is not a channel granule of that cube");
    frames_.push_back((std::uint64_t{f.global_cube} << kCubeShift) | f.offset);
  }
  return first;
}

void AddressMap::place_frame(std::uint64_t frame, Location home) {
  if (frame >= frames_.size() || frames_[frame] != kUntouchedFrame)
    throw std::logic_error("AddressMap: frame " + std::to_string(frame) + " is not untouched");
  if (home.global_cube >= cubes_.value() || home.offset >= capacity_.value() ||
      channel_granule_.rem(home.offset) != 0)
    throw std::invalid_argument("AddressMap: no channel granule at cube " +
                                std::to_string(home.global_cube) + " offset " +
                                hex_address(home.offset));
  frames_[frame] = (std::uint64_t{home.global_cube} << kCubeShift) | home.offset;
  --untouched_;
}

void AddressMap::throw_unplaced(std::uint64_t addr, std::uint64_t frame) const {
  if (frame == kNoFrame) throw_unmapped(addr, 1, "access");
  throw AddressError("the byte at " + hex_address(addr) +
                     " lies in a first-touch buffer's frame no program has touched yet, so it "
                     "has no place in HBM; a program's load, store, ref or atomic places it "
                     "(the host's Simulation::write and read do not need it placed)");
}

void AddressMap::for_each_piece(
    std::uint64_t addr, std::uint64_t bytes, std::uint64_t max_piece,
    const std::function<void(std::uint64_t, Location, std::uint64_t)>& fn) const {
  check_range(addr, bytes, "access");
  std::uint64_t done = 0;
  while (done < bytes) {
    const Piece piece = first_piece(addr + done, bytes - done, max_piece);
    fn(addr + done, piece.loc, piece.len);
    done += piece.len;
  }
}

std::string AddressMap::describe_ranges() const {
  std::string s = "HBM ranges: cube g (g = sip * " + std::to_string(cubes_per_sip_) +
                  " + cube, g < " + std::to_string(cubes_.value()) + ") owns [" +
                  hex_address(kDirectBase) + " + g * " + hex_address(capacity_.value()) + ", +" +
                  hex_address(capacity_.value()) + "), i.e. [" + hex_address(kDirectBase) + ", " +
                  hex_address(kDirectBase + interleaved_size()) + "); the interleaved window is [" +
                  hex_address(kInterleavedBase) + ", " +
                  hex_address(kInterleavedBase + interleaved_size()) +
                  "); the mapped window (placements by frame) is [" + hex_address(kMappedBase) +
                  ", " + hex_address(mapped_end()) + ")";
  return s;
}

void AddressMap::throw_unmapped(std::uint64_t addr, std::uint64_t bytes, const char* what) const {
  std::string msg = std::string(what) + " of " + std::to_string(bytes) + " byte" +
                    (bytes == 1 ? "" : "s") + " at " + hex_address(addr) +
                    " is outside every HBM range";
  msg += "; " + describe_ranges();
  throw AddressError(msg);
}

}  // namespace cubesim::components
