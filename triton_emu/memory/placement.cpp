#include "triton_emu/memory/placement.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "triton_emu/errors.hpp"

namespace cubesim {

std::string Placement::str() const {
  switch (kind) {
    case Kind::system:
      return "system";
    case Kind::sip:
      return "sip " + std::to_string(sip);
    case Kind::cube:
      return "cube (sip " + std::to_string(sip) + ", cube " + std::to_string(cube) + ")";
    case Kind::pe:
      return "pe (sip " + std::to_string(sip) + ", cube " + std::to_string(cube) + ", pe " +
             std::to_string(pe) + ")";
    case Kind::first_touch:
      return "first touch";
    case Kind::distributed:
      return "distributed (" + std::to_string(block_bytes) + "-byte blocks over " +
             std::to_string(programs()) + " programs, " +
             (spread == Spread::slice ? "each on its PE's channels)" : "each over its cube)");
  }
  return "?";
}

namespace detail {

HbmPlacement::HbmPlacement(components::AddressMap& map, std::uint32_t pes_per_cube,
                           std::vector<std::vector<std::uint32_t>> slices)
    : map_(map),
      pes_per_cube_(pes_per_cube),
      slices_(std::move(slices)),
      direct_next_(map.cubes(), 0),
      interleaved_low_(map.interleaved_size()),
      turns_(map.cubes()),
      next_turn_(map.cubes()),
      touched_(map.cubes(), 0) {}

Ptr HbmPlacement::place(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw UsageError("alloc: alignment " + std::to_string(align) + " is not a power of two");
  switch (placement.kind) {
    case Placement::Kind::system:
      return place_interleaved(bytes, align);
    case Placement::Kind::cube:
      return place_on_cube(bytes, placement, align);
    default:
      return place_frames(bytes, placement, align);
  }
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
                       " has " + std::to_string(direct_next_[c]) +
                       " bytes taken from below by buffers on that cube and by the turns of "
                       "channels that placements by PE, SIP, distribution or first touch "
                       "reserve; a turn's granules on other channels stay free for those "
                       "placements only)");
  interleaved_low_ = low;
  return Ptr{components::AddressMap::kInterleavedBase + low};
}

void HbmPlacement::check_cube(const Placement& p) const {
  const std::uint32_t sips = map_.cubes() / map_.cubes_per_sip();
  const bool cube_too = p.kind != Placement::Kind::sip;
  if (p.sip >= sips || (cube_too && p.cube >= map_.cubes_per_sip()))
    throw UsageError(
        "alloc: no " + std::string(cube_too ? "cube" : "SIP") + " (sip " + std::to_string(p.sip) +
        (cube_too ? ", cube " + std::to_string(p.cube) : std::string()) + ") in this system of " +
        std::to_string(sips) + " SIP(s) x " + std::to_string(map_.cubes_per_sip()) + " cubes");
  if (p.kind == Placement::Kind::pe && p.pe >= pes_per_cube_)
    throw UsageError("alloc: no PE " + std::to_string(p.pe) + " on a cube of " +
                     std::to_string(pes_per_cube_) + " PEs (placement " + p.str() + ")");
}

Ptr HbmPlacement::place_on_cube(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  check_cube(placement);
  const std::uint32_t cube = map_.global_cube({placement.sip, placement.cube});
  const std::uint64_t start = (direct_next_[cube] + align - 1) / align * align;
  if (start + bytes > std::min(map_.capacity_per_cube(), interleaved_floor(interleaved_low_)))
    throw UsageError(
        "alloc: " + std::to_string(bytes) + " bytes do not fit on cube (sip " +
        std::to_string(placement.sip) + ", cube " + std::to_string(placement.cube) +
        "): " + std::to_string(direct_next_[cube]) +
        " bytes of it are taken by buffers on it and by the turns of channels that "
        "placements by PE, SIP, distribution or first touch reserve, and " +
        std::to_string(map_.capacity_per_cube() -
                       std::min(map_.capacity_per_cube(), interleaved_floor(interleaved_low_))) +
        " by interleaved buffers");
  direct_next_[cube] = start + bytes;
  return Ptr{map_.direct_address({cube, start})};
}

std::uint64_t HbmPlacement::take_frame(std::uint32_t cube, std::uint32_t channel) {
  std::vector<std::uint64_t>& turns = turns_[cube];
  std::vector<std::uint32_t>& next = next_turn_[cube];
  if (next.empty()) next.assign(map_.hbm_channels(), 0);
  if (next[channel] == turns.size()) {
    // A turn: one granule of every channel, aligned so that its granule c is channel c's.
    const std::uint64_t turn = std::uint64_t{map_.hbm_channels()} * map_.frame_bytes();
    const std::uint64_t start = (direct_next_[cube] + turn - 1) / turn * turn;
    if (start + turn > std::min(map_.capacity_per_cube(), interleaved_floor(interleaved_low_)))
      return kFull;  // the caller says which cube
    direct_next_[cube] = start + turn;
    turns.push_back(start);
  }
  return turns[next[channel]++] + std::uint64_t{channel} * map_.frame_bytes();
}

void HbmPlacement::check_frames(const Placement& placement) const {
  const std::uint32_t sips = map_.cubes() / map_.cubes_per_sip();
  if (placement.kind == Placement::Kind::distributed) {
    const std::uint64_t programs = placement.programs();
    if (placement.block_bytes == 0 || programs == 0)
      throw UsageError(
          "alloc: a distributed placement needs blocks of at least 1 byte and a "
          "grid of at least one program (placement " +
          placement.str() + ")");
    if (placement.grid_pes > pes_per_cube_ || placement.grid_cubes > map_.cubes_per_sip() ||
        placement.grid_sips > sips)
      throw UsageError("alloc: a distributed placement over a grid of " +
                       std::to_string(placement.grid_pes) + " PEs x " +
                       std::to_string(placement.grid_cubes) + " cubes x " +
                       std::to_string(placement.grid_sips) + " SIPs does not fit this system of " +
                       std::to_string(sips) + " SIP(s) x " + std::to_string(map_.cubes_per_sip()) +
                       " cubes x " + std::to_string(pes_per_cube_) + " PEs");
  } else if (placement.kind != Placement::Kind::first_touch) {
    check_cube(placement);
  }
}

std::vector<HbmPlacement::Home> HbmPlacement::homes(std::uint64_t bytes,
                                                    const Placement& placement) const {
  const std::uint64_t frame = map_.frame_bytes();
  const std::uint32_t channels = map_.hbm_channels();
  const std::uint64_t programs = placement.programs();
  // Each frame's channel is taken in turn from those the placement allows on its cube (counted
  // per cube for a SIP, per PE otherwise), so that a buffer's frames spread over its channels
  // as the interleaved windows spread theirs.
  const std::uint64_t run =  // sip: frames in a row on one cube (an interleave granule)
      std::max<std::uint64_t>(1, map_.interleave_bytes() / frame);
  std::unordered_map<std::uint64_t, std::uint64_t> used;  // frames so far, per cube or PE
  std::vector<Home> out;
  const std::uint64_t count = (bytes + frame - 1) / frame;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (placement.kind == Placement::Kind::first_touch) {
      out.push_back({components::AddressMap::kUntouched, 0});
      continue;
    }
    if (placement.kind == Placement::Kind::sip) {
      const std::uint32_t cube = map_.global_cube(
          {placement.sip, static_cast<std::uint32_t>(i / run % map_.cubes_per_sip())});
      out.push_back({cube, static_cast<std::uint32_t>(used[cube]++ % channels)});
      continue;
    }
    std::uint32_t cube = 0, pe = 0;
    if (placement.kind == Placement::Kind::pe) {
      cube = map_.global_cube({placement.sip, placement.cube});
      pe = placement.pe;
    } else {  // distributed: the PE of the program whose block holds the frame's first byte
      const std::uint64_t g = (i * frame / placement.block_bytes) % programs;
      const std::uint64_t c = g / placement.grid_pes;
      pe = static_cast<std::uint32_t>(g % placement.grid_pes);
      cube = map_.global_cube({static_cast<std::uint32_t>(c / placement.grid_cubes),
                               static_cast<std::uint32_t>(c % placement.grid_cubes)});
      if (placement.spread == Placement::Spread::cube) {
        out.push_back({cube, static_cast<std::uint32_t>(used[cube]++ % channels)});
        continue;
      }
    }
    const std::vector<std::uint32_t>& slice = slices_[pe];
    const std::uint64_t k = used[std::uint64_t{cube} * pes_per_cube_ + pe]++;
    out.push_back({cube, slice[k % slice.size()]});
  }
  return out;
}

Ptr HbmPlacement::place_frames(std::uint64_t bytes, const Placement& placement,
                               std::uint64_t align) {
  const std::uint64_t frame = map_.frame_bytes();
  check_frames(placement);
  // Refused before any table is built: more bytes than the HBM the placement reaches, or an
  // alignment whose holes would cost more than the buffer (each is a frame of the table).
  const std::uint64_t channels = map_.hbm_channels(), capacity = map_.capacity_per_cube();
  std::uint64_t reach = 0;  // bytes of HBM the placement can use, at most
  switch (placement.kind) {
    case Placement::Kind::pe:
      reach = capacity / channels * slices_[placement.pe].size();
      break;
    case Placement::Kind::sip:
      reach = capacity * map_.cubes_per_sip();
      break;
    case Placement::Kind::distributed:
      reach = capacity * std::min<std::uint64_t>(map_.cubes(), std::uint64_t{placement.grid_cubes} *
                                                                   placement.grid_sips);
      break;
    default:
      reach = capacity * map_.cubes();
  }
  if (bytes > reach)
    throw UsageError("alloc: " + std::to_string(bytes) + " bytes placed " + placement.str() +
                     " are more than the " + std::to_string(reach) +
                     " bytes of HBM that placement reaches");
  if (align > std::max(frame, kMaxFrameAlign))
    throw UsageError("alloc: alignment " + std::to_string(align) + " of a buffer placed " +
                     placement.str() + " is above " + std::to_string(kMaxFrameAlign) +
                     " bytes; align to at most that (buffers on one cube or interleaved over the "
                     "system take any alignment)");
  const std::vector<Home> want = homes(bytes, placement);
  // Holes first, so that the buffer's first frame is aligned as asked (frames and alignments
  // are powers of two).
  std::vector<components::Location> frames;
  for (std::uint64_t at = map_.mapped_end(); at % std::max(align, frame) != 0; at += frame)
    frames.push_back({components::AddressMap::kNoCube, 0});
  const std::uint64_t holes = frames.size();
  // Taken frames are given back if the request fails part-way: a failed alloc changes nothing.
  struct Taken {
    Home home;
    std::uint64_t direct_next;  // the cube's before
    std::size_t turns;          // the cube's before
  };
  std::vector<Taken> taken;
  for (const Home& h : want) {
    if (h.cube == components::AddressMap::kUntouched) {
      frames.push_back({h.cube, 0});
      continue;
    }
    const Taken before{h, direct_next_[h.cube], turns_[h.cube].size()};
    const std::uint64_t offset = take_frame(h.cube, h.channel);
    if (offset == kFull) {
      for (auto t = taken.rbegin(); t != taken.rend(); ++t) {
        --next_turn_[t->home.cube][t->home.channel];
        turns_[t->home.cube].resize(t->turns);
        direct_next_[t->home.cube] = t->direct_next;
      }
      const components::CubeId id = map_.cube_id(h.cube);
      throw UsageError("alloc: " + std::to_string(bytes) + " bytes placed " + placement.str() +
                       " do not fit: cube (sip " + std::to_string(id.sip) + ", cube " +
                       std::to_string(id.cube) + ") is full");
    }
    taken.push_back(before);
    frames.push_back({h.cube, offset});
  }
  return Ptr{map_.map_frames(frames) + holes * frame};
}

void HbmPlacement::touch(std::uint64_t addr, std::uint64_t bytes, std::uint32_t cube,
                         const StagedWrite& write) {
  if (bytes == 0 || !map_.has_untouched() || !map_.in_mapped_window(addr)) return;
  const std::uint64_t frame = map_.frame_bytes();
  const std::uint32_t channels = map_.hbm_channels();
  for (std::uint64_t f = map_.frame_index(addr); f <= map_.frame_index(addr + bytes - 1); ++f) {
    if (!map_.untouched(f)) continue;
    const auto channel = static_cast<std::uint32_t>(touched_[cube] % channels);
    const std::uint64_t offset = take_frame(cube, channel);
    if (offset == kFull) {
      const components::CubeId id = map_.cube_id(cube);
      throw UsageError("first touch of " + components::hex_address(addr) + ": cube (sip " +
                       std::to_string(id.sip) + ", cube " + std::to_string(id.cube) +
                       ") has no free HBM left for the frame");
    }
    ++touched_[cube];
    map_.place_frame(f, {cube, offset});
    if (const auto it = staged_.find(f); it != staged_.end()) {
      write(components::AddressMap::kMappedBase + f * frame, it->second);
      staged_.erase(it);
    }
  }
}

void HbmPlacement::host_runs(
    std::uint64_t addr, std::uint64_t bytes, bool write,
    const std::function<void(std::uint64_t, std::uint64_t, bool, std::byte*)>& fn) {
  if (bytes == 0) return;
  if (!map_.has_untouched() || !map_.in_mapped_window(addr)) return fn(addr, bytes, true, nullptr);
  const std::uint64_t frame = map_.frame_bytes();
  std::uint64_t run = addr;  // the start of the run of placed frames so far
  for (std::uint64_t at = addr; at < addr + bytes;) {
    const std::uint64_t f = map_.frame_index(at);
    const std::uint64_t end =
        std::min(addr + bytes, components::AddressMap::kMappedBase + (f + 1) * frame);
    if (map_.untouched(f)) {
      if (at > run) fn(run, at - run, true, nullptr);
      std::byte* held = nullptr;
      if (auto it = staged_.find(f); it != staged_.end()) {
        held = it->second.data();
      } else if (write) {
        held = staged_.emplace(f, std::vector<std::byte>(frame)).first->second.data();
      }
      fn(at, end - at, false,
         held == nullptr ? nullptr : held + (at - components::AddressMap::kMappedBase) % frame);
      run = end;
    }
    at = end;
  }
  if (run < addr + bytes) fn(run, addr + bytes - run, true, nullptr);
}

}  // namespace detail
}  // namespace cubesim
