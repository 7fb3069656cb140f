#pragma once
// What an operation (ops/*.hpp) gets of the program that calls it: its PE, its launch, its
// place in the launch, and the few services every operation shares: a fault naming the call,
// SRAM tiles and the vector unit's time (as the tl::TileOwner its tiles point back to), and
// paying that time before talking to the rest of the system. tl::Context is a thin facade over
// a Program and the operations. Internal (not installed API).
//
// Vector-unit time is accumulated by charge_vector and paid by sync(), which every operation
// that talks to the rest of the system (a load, store, composite, message, atomic, barrier,
// wait) calls first, and the program's end: the same simulated times as paying it at once,
// with far fewer context switches.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "components/system_config.hpp"
#include "emu/time.hpp"
#include "triton_emu/tile/tile.hpp"
#include "triton_emu/tile/tile_owner.hpp"

namespace cubesim::detail {

struct LaunchState;
struct PeState;
struct Copy;

// A run of elements consecutive both in memory and in a tile: one transfer of a load/store.
struct AccessSegment {
  std::uint64_t addr;
  std::uint64_t bytes;
  std::uint64_t tile_offset;  // bytes into the tile
};

class Program : public tl::TileOwner {
 public:
  Program(LaunchState& launch, PeState& pe, std::uint32_t index);
  ~Program();

  LaunchState& launch() const { return launch_; }
  PeState& pe() const { return pe_; }
  std::uint32_t index() const { return index_; }  // within the launch
  emu::Tick now() const;  // simulated time, including vector-unit time not yet paid
  void sync();            // pay the vector time charged since the last sync

  // Barriers passed, of any scope: the access log orders accesses by them.
  std::uint32_t epoch() const { return epoch_; }
  // The barrier of `scope` (0 cube, 1 SIP, 2 all) this program meets next; counts it passed.
  std::uint32_t pass_barrier(int scope) {
    ++epoch_;
    return scoped_barriers_[scope]++;
  }

  // A fault naming `what` when the launch runs in several waves (nothing may wait for a
  // program of another wave).
  void require_one_wave(const std::string& what) const;
  // Faults unless `t`, the tile of a `handle` from `call`, was made in this launch: a handle kept
  // past its launch says so and `why`.
  void require_this_launch(const tl::Tile& t, const char* handle, const char* call,
                           const char* why) const;
  // Whether this program made `t` (a UsageError for a tile of an ended launch).
  bool owns(const tl::Tile& t) const;

  // The scratch transfers of the access being planned (ops/access.hpp), reused across calls.
  std::vector<AccessSegment>& segments() { return segments_; }
  // Asynchronous copies in flight (each knows its index here), kept until they land.
  std::vector<std::shared_ptr<Copy>>& copies() { return copies_; }

 private:
  LaunchState& launch_;
  PeState& pe_;
  std::uint32_t index_;
  std::uint32_t epoch_ = 0;                       // barriers passed, of any scope
  std::uint32_t scoped_barriers_[3] = {0, 0, 0};  // barriers passed per Scope
  std::vector<AccessSegment> segments_;
  std::vector<std::shared_ptr<Copy>> copies_;
};

}  // namespace cubesim::detail
