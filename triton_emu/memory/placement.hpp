#pragma once
// Where Simulation::alloc puts a buffer in HBM. Interleaved buffers take whole rows of
// granules (one granule per cube) from the top of every cube's range, growing down; direct
// buffers (one cube) grow up from the bottom of their own cube, and so do the turns of the
// channels (one granule of each) that placements by frame take their frames from. The two
// ends must not meet, so a cube's direct buffers and turns and the interleaved rows each see
// what the other has taken.
//
// Contract: place() returns ranges that never overlap and are aligned as asked; a request
// that does not fit, or names a SIP, cube or PE the system lacks, is a UsageError saying
// which, and changes nothing.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "components/memory/address_map.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim {

// Where alloc() puts a buffer.
//   system      interleaved over every cube of the system (the default)
//   sip         interleaved over the cubes of one SIP
//   cube        contiguous on one cube (its channels interleaved)
//   pe          on one PE's slice of its cube's channels: those whose controller is on the
//               PE's router (a PE whose router has none: channel pe % channels)
//   distributed blocks of block_bytes dealt to the programs of a grid in global program order
//               (block b to program b % programs), each on its program's PE's slice (or over
//               its cube): what a program touches in a grid-stride loop over blocks is its own
//   first_touch each frame placed on the cube of the program that first loads, stores,
//               refs or atomically updates it (over that cube's channels in turn); what the
//               host writes before is held until then
struct Placement {
  enum class Kind : std::uint8_t { system, sip, cube, pe, distributed, first_touch };
  Kind kind = Kind::system;
  std::uint32_t sip = 0, cube = 0, pe = 0;  // sip: kinds sip, cube, pe; cube: cube, pe
  std::uint64_t block_bytes = 0;            // distributed
  std::uint32_t grid_pes = 0, grid_cubes = 0, grid_sips = 0;  // distributed: its grid
  // distributed: a block on its program's PE's slice, or over every channel of its cube.
  enum class Spread : std::uint8_t { slice, cube };
  Spread spread = Spread::slice;

  static Placement interleaved_across_cubes() { return {}; }
  static Placement on_sip(std::uint32_t sip) { return {.kind = Kind::sip, .sip = sip}; }
  static Placement on_cube(std::uint32_t sip, std::uint32_t cube) {
    return {.kind = Kind::cube, .sip = sip, .cube = cube};
  }
  static Placement on_pe(std::uint32_t sip, std::uint32_t cube, std::uint32_t pe) {
    return {.kind = Kind::pe, .sip = sip, .cube = cube, .pe = pe};
  }
  // Over a grid of pes x cubes x sips programs, program g on PE g % pes of cube
  // (g / pes) % cubes of SIP g / (pes * cubes) (the hardware grid, or a --grid's sub-grid).
  static Placement distributed(std::uint64_t block_bytes, std::uint32_t pes, std::uint32_t cubes,
                               std::uint32_t sips, Spread spread = Spread::slice) {
    return {.kind = Kind::distributed,
            .block_bytes = block_bytes,
            .grid_pes = pes,
            .grid_cubes = cubes,
            .grid_sips = sips,
            .spread = spread};
  }
  static Placement first_touch() { return {.kind = Kind::first_touch}; }
  std::string str() const;  // e.g. "pe (sip 0, cube 1, pe 5)"
  // distributed: the programs of its grid, that blocks go to in turn.
  std::uint64_t programs() const { return std::uint64_t{grid_pes} * grid_cubes * grid_sips; }
};

namespace detail {

class HbmPlacement {
 public:
  // `slices[p]`: the channels of local PE p's slice (Placement::pe).
  HbmPlacement(components::AddressMap& map, std::uint32_t pes_per_cube,
               std::vector<std::vector<std::uint32_t>> slices);

  // `bytes` (at least 1) placed as `placement` says, aligned to `align` bytes (a power of two;
  // interleaved buffers to at least a granule).
  Ptr place(std::uint64_t bytes, Placement placement, std::uint64_t align);

  // First touch: the untouched frames of [addr, addr + bytes) placed on global cube `cube`,
  // each with what the host wrote to it before handed to `write` (its address and bytes), to
  // be stored in functional memory. UsageError when the cube is full.
  using StagedWrite = std::function<void(std::uint64_t addr, const std::vector<std::byte>&)>;
  void touch(std::uint64_t addr, std::uint64_t bytes, std::uint32_t cube, const StagedWrite& write);
  // The host's view of [addr, addr + bytes): `fn(addr, len, placed, staged)` for each run of
  // placed frames (placed, staged null) and each untouched frame's part (staged: its bytes
  // held here, made zero on a write's first use; null on a read of one never written, which
  // reads as zeros).
  void host_runs(std::uint64_t addr, std::uint64_t bytes, bool write,
                 const std::function<void(std::uint64_t, std::uint64_t, bool, std::byte*)>& fn);

 private:
  Ptr place_interleaved(std::uint64_t bytes, std::uint64_t align);
  Ptr place_on_cube(std::uint64_t bytes, Placement placement, std::uint64_t align);
  Ptr place_frames(std::uint64_t bytes, const Placement& placement, std::uint64_t align);
  // UsageError for a placement by frame that names what the system lacks.
  void check_frames(const Placement& placement) const;
  // Where each frame of a buffer placed by frame goes (placement checked).
  struct Home {
    std::uint32_t cube, channel;
  };
  std::vector<Home> homes(std::uint64_t bytes, const Placement& placement) const;
  // The lowest offset, in every cube, of interleaved rows that start at window offset `low`.
  std::uint64_t interleaved_floor(std::uint64_t low) const;
  void check_cube(const Placement& p) const;
  // The offset of the next free frame of `channel` on global cube `cube`, a turn reserved when
  // none is left; kFull, changing nothing, when the cube has no room for a turn.
  static constexpr std::uint64_t kFull = ~std::uint64_t{0};
  static constexpr std::uint64_t kMaxFrameAlign = std::uint64_t{1} << 30;  // placements by frame
  std::uint64_t take_frame(std::uint32_t cube, std::uint32_t channel);

  components::AddressMap& map_;
  std::uint32_t pes_per_cube_;
  std::vector<std::vector<std::uint32_t>> slices_;
  std::vector<std::uint64_t> direct_next_;  // per cube: next free offset from the bottom
  std::uint64_t interleaved_low_;           // window offset where interleaved buffers begin
  // Per cube: the turns reserved for frames (offsets, in order), and per channel the index of
  // the turn whose frame of that channel is next free.
  std::vector<std::vector<std::uint64_t>> turns_;
  std::vector<std::vector<std::uint32_t>> next_turn_;
  std::vector<std::uint64_t> touched_;  // per cube: frames placed by first touch (channels)
  std::unordered_map<std::uint64_t, std::vector<std::byte>> staged_;  // by untouched frame
};

}  // namespace detail
}  // namespace cubesim
