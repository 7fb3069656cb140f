#pragma once
// The flat 64-bit address space. Each cube's HBM owns a direct range; one more window maps the
// same physical memory interleaved across every cube of the system at a fixed granule, so a
// buffer can be spread over all cubes and still be addressed with plain byte arithmetic; a
// third maps frames one by one, for placements no arithmetic describes (a PE's slice of the
// channels, blocks dealt to the programs of a grid).
//
//   direct:      [kDirectBase + g * capacity, kDirectBase + (g + 1) * capacity)   for cube g
//   interleaved: [kInterleavedBase, kInterleavedBase + cubes * capacity)
//                granule i of the window lies on cube i % cubes, at offset (i / cubes) * granule
//   mapped:      [kMappedBase, kMappedBase + frames * frame)
//                frame i of the window (one channel granule) lies where map_frames put it
//
// g = sip * cubes_per_sip + cube is the global cube index. The windows alias the same bytes;
// the host allocator (triton_emu) keeps buffers from overlapping.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "components/memory/divisor.hpp"
#include "components/system_config.hpp"

namespace cubesim::components {

// An address outside every HBM range, or an access that crosses the end of one.
class AddressError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CubeId {
  std::uint32_t sip = 0;
  std::uint32_t cube = 0;  // within its SIP
  friend constexpr bool operator==(CubeId, CubeId) = default;
};

// Where a byte lives physically.
struct Location {
  std::uint32_t global_cube = 0;  // sip * cubes_per_sip + cube
  std::uint64_t offset = 0;       // byte offset inside that cube's HBM
};

class AddressMap {
 public:
  // Below 4 GiB nothing is mapped, so null and small integers are never valid addresses.
  static constexpr std::uint64_t kDirectBase = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kInterleavedBase = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kMappedBase = std::uint64_t{1} << 61;

  explicit AddressMap(const SystemConfig& config);

  std::uint32_t cubes() const { return cubes_.value(); }
  std::uint32_t cubes_per_sip() const { return cubes_per_sip_; }
  std::uint64_t capacity_per_cube() const { return capacity_.value(); }
  std::uint64_t interleave_bytes() const { return granule_.value(); }
  std::uint32_t hbm_channels() const { return channels_.value(); }
  std::uint64_t channel_interleave_bytes() const { return channel_granule_.value(); }

  CubeId cube_id(std::uint32_t global_cube) const {
    return {global_cube / cubes_per_sip_, global_cube % cubes_per_sip_};
  }
  std::uint32_t global_cube(CubeId id) const { return id.sip * cubes_per_sip_ + id.cube; }

  std::uint64_t cube_base(std::uint32_t global_cube) const;  // start of its direct range
  std::uint64_t direct_address(Location loc) const;          // inverse of decode, direct window
  std::uint64_t interleaved_address(Location loc) const;     // inverse of decode, interleaved
  std::uint64_t interleaved_size() const { return capacity_.value() * cubes_.value(); }

  bool is_mapped(std::uint64_t addr) const {
    if (is_interleaved(addr)) return true;
    if (in_frames(addr)) return frame_of(addr) != kNoFrame;
    return addr >= kDirectBase && addr - kDirectBase < capacity_.value() * cubes_.value();
  }
  bool is_interleaved(std::uint64_t addr) const {
    return addr >= kInterleavedBase && addr - kInterleavedBase < interleaved_size();
  }

  // The mapped window: frames of one channel granule each, appended by the allocator and never
  // moved (caches of routes and layouts by address stay valid). A frame's offset is a multiple
  // of the granule, so an access cut at channel granules (first_piece) stays inside a frame.
  std::uint64_t frame_bytes() const { return channel_granule_.value(); }
  // Appends `frames` to the window and returns the address of the first; a frame of
  // global_cube == kNoCube is a hole (padding for alignment), unmapped; one of kUntouched is
  // allocated but not yet placed (a first-touch buffer's): it passes check_range, and
  // decode throws until place_frame gives it a home.
  static constexpr std::uint32_t kNoCube = ~std::uint32_t{0};
  static constexpr std::uint32_t kUntouched = kNoCube - 1;
  std::uint64_t map_frames(std::span<const Location> frames);
  // The frame holding `addr` (in the mapped window), whether it is still untouched, and its
  // home once placed.
  std::uint64_t frame_index(std::uint64_t addr) const {
    return channel_granule_.quot(addr - kMappedBase);
  }
  bool untouched(std::uint64_t frame) const { return frames_[frame] == kUntouchedFrame; }
  void place_frame(std::uint64_t frame, Location home);
  // Whether any frame is untouched: accesses check their frames only then.
  bool has_untouched() const { return untouched_ > 0; }
  bool in_mapped_window(std::uint64_t addr) const { return in_frames(addr); }
  std::uint64_t mapped_end() const { return kMappedBase + frames_.size() * frame_bytes(); }
  // Throws AddressError naming the address and the ranges when it is not mapped. Inline: it
  // runs for every packet.
  Location decode(std::uint64_t addr) const {
    if (in_frames(addr)) {
      const std::uint64_t frame = frame_of(addr);
      if (frame >= kUntouchedFrame) throw_unplaced(addr, frame);
      return {static_cast<std::uint32_t>(frame >> kCubeShift),
              (frame & kOffsetMask) + channel_granule_.rem(addr - kMappedBase)};
    }
    if (is_interleaved(addr)) {
      const std::uint64_t w = addr - kInterleavedBase;
      const std::uint64_t granule_index = granule_.quot(w);
      return {static_cast<std::uint32_t>(cubes_.rem(granule_index)),
              cubes_.quot(granule_index) * granule_.value() + granule_.rem(w)};
    }
    if (addr >= kDirectBase && addr - kDirectBase < capacity_.value() * cubes_.value()) {
      const std::uint64_t d = addr - kDirectBase;
      return {static_cast<std::uint32_t>(capacity_.quot(d)), capacity_.rem(d)};
    }
    throw_unmapped(addr, 1, "access");
  }
  // The HBM channel holding the byte at `loc` (channels interleave at channel_interleave_bytes).
  std::uint32_t channel(Location loc) const {
    return static_cast<std::uint32_t>(channels_.rem(channel_granule_.quot(loc.offset)));
  }

  // The first piece of [addr, addr + bytes) as for_each_piece cuts it; `addr` must be mapped
  // (decode throws otherwise). Inline: it runs once per packet and per memory copy.
  struct Piece {
    Location loc;
    std::uint64_t len;
  };
  Piece first_piece(std::uint64_t addr, std::uint64_t bytes, std::uint64_t max_piece) const {
    const Location loc = decode(addr);
    std::uint64_t len = bytes;
    // Not std::has_single_bit: without -mpopcnt (baseline x86-64) it is a libgcc call.
    const std::uint64_t into_piece =
        (max_piece & (max_piece - 1)) == 0 ? addr & (max_piece - 1) : addr % max_piece;
    len = std::min(len, max_piece - into_piece);
    len = std::min(len, channel_granule_.value() - channel_granule_.rem(loc.offset));
    if (is_interleaved(addr)) len = std::min(len, granule_.value() - granule_.rem(loc.offset));
    len = std::min(len, capacity_.value() - loc.offset);
    return {loc, len};
  }

  // Splits [addr, addr + bytes) into pieces that are each physically contiguous, on one cube
  // and one HBM channel, and no longer than `max_piece` bytes nor crossing a multiple of it.
  // Throws AddressError (before calling fn) if any byte is unmapped.
  void for_each_piece(
      std::uint64_t addr, std::uint64_t bytes, std::uint64_t max_piece,
      const std::function<void(std::uint64_t addr, Location loc, std::uint64_t len)>& fn) const;
  // Checks that the whole range is mapped; the message names `what`. Inline: every transfer
  // and memory access checks its range.
  void check_range(std::uint64_t addr, std::uint64_t bytes, const char* what) const {
    if (bytes == 0) return;
    const std::uint64_t last = addr + (bytes - 1);
    if (last < addr) throw_unmapped(addr, bytes, what);
    if (is_interleaved(addr)) {
      if (!is_interleaved(last)) throw_unmapped(addr, bytes, what);
      return;
    }
    if (in_frames(addr)) {
      if (!in_frames(last)) throw_unmapped(addr, bytes, what);
      for (std::uint64_t f = channel_granule_.quot(addr - kMappedBase);
           f <= channel_granule_.quot(last - kMappedBase); ++f)
        if (frames_[f] == kNoFrame) throw_unmapped(addr, bytes, what);
      return;
    }
    // A direct access may run from one cube's range into the next: the ranges are adjacent and
    // both are real memory, so that is allowed, but it must stay inside the direct window.
    if (!is_mapped(addr) || !is_mapped(last) || is_interleaved(last) || in_frames(last))
      throw_unmapped(addr, bytes, what);
  }

  std::string describe_ranges() const;  // for error messages

 private:
  [[noreturn]] void throw_unmapped(std::uint64_t addr, std::uint64_t bytes, const char* what) const;
  [[noreturn]] void throw_unplaced(std::uint64_t addr, std::uint64_t frame) const;

  // A frame: its cube above kCubeShift, its offset below.
  static constexpr int kCubeShift = 46;  // capacity_GiB <= 65536
  static constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kCubeShift) - 1;
  static constexpr std::uint64_t kNoFrame = ~std::uint64_t{0};
  static constexpr std::uint64_t kUntouchedFrame = kNoFrame - 1;
  bool in_frames(std::uint64_t addr) const {
    return addr >= kMappedBase && addr < kMappedBase + frames_.size() * channel_granule_.value();
  }
  std::uint64_t frame_of(std::uint64_t addr) const {
    return frames_[channel_granule_.quot(addr - kMappedBase)];
  }

  // Divisors: decode divides by them for every packet.
  Divisor cubes_;
  std::uint32_t cubes_per_sip_;
  Divisor capacity_;  // per cube
  Divisor granule_;   // interleave granule across cubes
  Divisor channels_;
  Divisor channel_granule_;            // interleave granule across a cube's channels
  std::vector<std::uint64_t> frames_;  // the mapped window's, in order
  std::uint64_t untouched_ = 0;        // frames kUntouchedFrame
};

std::string hex_address(std::uint64_t addr);

}  // namespace cubesim::components
