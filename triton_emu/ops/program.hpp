#pragma once
// What an operation (ops/*.hpp) gets of the program that calls it: its PE, its launch, its
// place in the launch, and the few services every operation shares: a fault naming the call,
// SRAM tiles, the vector unit's time, and paying that time before talking to the rest of the
// system. tl::Context is a thin facade over a Program and the operations; tiles point back to
// their Program for tile math (as a tl::TileOwner). Internal (not installed API).
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

class Program final : public tl::TileOwner {
 public:
  Program(LaunchState& launch, PeState& pe, std::uint32_t index);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program();

  LaunchState& launch() const { return launch_; }
  PeState& pe() const { return pe_; }
  std::uint32_t index() const { return index_; }  // within the launch
  const std::string& pe_name() const;
  bool timing_only() const override;
  emu::Tick now() const;  // simulated time, including vector-unit time not yet paid

  // A KernelFault: ends the program and names `what`.
  [[noreturn]] void fault(const std::string& what) const override;

  // SRAM-accounted; values uninitialised (every caller writes them all), or none at all when
  // `values` is false or the run is timing-only (i32 tiles keep theirs: index math and masks).
  tl::Tile make_tile(tl::Shape shape, DType dtype, bool values = true) override;
  // The same, `bytes` already computed by tile_bytes.
  tl::Tile make_tile(tl::Shape shape, DType dtype, std::uint64_t bytes, bool values);
  // Bytes of a tile of `shape`, or a fault naming `what` for a negative dimension or a size
  // past 2^63 bytes.
  std::uint64_t tile_bytes(const char* what, const tl::Shape& shape, DType dtype) const;
  // A fault naming `what` unless `value` is one of `dtype`'s (integers: in range, whole).
  void check_fill_value(const char* what, double value, DType dtype) const;

  tl::Tile full(tl::Shape shape, double value, DType dtype) override;

  void charge_vector(std::uint64_t elements,
                     components::VectorOp op = components::VectorOp::simple) override;
  void sync();  // pay the vector time charged since the last sync

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
  [[noreturn, gnu::cold]] void bad_shape(const char* what, const tl::Shape& shape,
                                         DType dtype) const;

  LaunchState& launch_;
  PeState& pe_;
  std::uint32_t index_;
  emu::Tick pending_ = 0;                         // vector time not yet paid
  std::uint64_t pending_elements_ = 0;            // elements of that work, for the trace
  std::uint8_t pending_ops_ = 0;                  // its ops, a bit per components::VectorOp
  std::uint32_t epoch_ = 0;                       // barriers passed, of any scope
  std::uint32_t scoped_barriers_[3] = {0, 0, 0};  // barriers passed per Scope
  std::vector<AccessSegment> segments_;
  std::vector<std::shared_ptr<Copy>> copies_;
};

}  // namespace cubesim::detail
