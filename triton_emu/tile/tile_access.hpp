#pragma once
// A tile's record, for the code that makes and fills tiles: tile math (tile.cpp) and the
// operations (ops/). Internal (not installed API).

#include <cstddef>
#include <cstdint>

#include "components/pe/sram.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::tl {

struct TileAccess {
  // A tile of `owner`, holding `held` bytes of `sram` (its tenant `launch`), with `bytes` bytes
  // of uninitialised values (0: none).
  static Tile make(TileOwner& owner, const Shape& shape, DType dtype,
                   boost::intrusive_ptr<components::Sram> sram, std::uint64_t held,
                   std::uint64_t launch, std::uint64_t bytes) {
    Tile t;
    t.owner_ = &owner;
    t.shape_ = shape;
    t.dtype_ = dtype;
    t.data_ = new Tile::Data;  // default-initialised: the values are written by the caller
    t.data_->sram = std::move(sram);
    t.data_->held = held;
    t.data_->launch = launch;
    if (bytes != 0) t.data_->bytes.assign_uninitialised(bytes);
    return t;
  }
  // The tile's storage (nullptr when it has no values), without copying deferred values in.
  static std::byte* raw(Tile& t) { return t.data_->bytes.data(); }
  static void drop_values(Tile& t) {
    if (t.data_) t.data_->bytes.clear();
  }
  // The same values under another shape of as many elements.
  static Tile share(const Tile& t, Shape s) {
    Tile r = t;
    r.shape_ = s;
    return r;
  }
  static void set_source(Tile& t, const Tile::Source& source) { t.data_->source = source; }
  // The launch that made the tile (its SRAM's tenant then).
  static std::uint64_t launch(const Tile& t) { return t.data_->launch; }
  // The program that made the tile; a UsageError once its launch has ended (the program is
  // gone; values stay readable: to_f32(), at()); std::logic_error for an empty tile.
  static TileOwner& owner(const Tile& t);
};

}  // namespace cubesim::tl
