#pragma once
// A program as its tiles see it: the PE whose SRAM holds them and whose vector unit computes
// them, and whether the run keeps values. Tile math (tile.cpp) makes its results and charges
// its time through the owner of its operands; the running program (ops/program.hpp) is an
// owner that adds its launch. Vector time is only accumulated here: the program pays it before
// it next talks to the rest of the system. Internal (not installed API).

#include <cstdint>
#include <span>
#include <string>

#include "components/dtype.hpp"
#include "components/pe/pe.hpp"
#include "components/system_config.hpp"
#include "emu/time.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::tl {

class TileOwner {
 public:
  TileOwner(const TileOwner&) = delete;
  TileOwner& operator=(const TileOwner&) = delete;

  // SRAM-accounted; values uninitialised (every caller writes them all), or none at all when
  // `values` is false or the run is timing-only (i32 tiles keep theirs: index math and masks).
  Tile make_tile(Shape shape, DType dtype, bool values = true);
  // The same, `bytes` already computed by tile_bytes.
  Tile make_tile(Shape shape, DType dtype, std::uint64_t bytes, bool values);
  // `value` in every element (a fault naming `what` when it is not one of `dtype`'s).
  Tile filled(const char* what, Shape shape, double value, DType dtype);
  // Bytes of a tile of `shape`, or a fault naming `what` for a negative dimension or a size
  // past 2^63 bytes.
  std::uint64_t tile_bytes(const char* what, const Shape& shape, DType dtype) const;
  // A fault naming `what` unless `value` is one of `dtype`'s (integers: in range, whole).
  void check_fill_value(const char* what, double value, DType dtype) const;

  void charge_vector(std::uint64_t elements,
                     components::VectorOp op = components::VectorOp::simple) {
    pending_.time += pe_.vector().time(elements, op);
    pending_.elements += elements;
    pending_.ops |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(op));
    charge_issue();  // a vector operation is a TL call
  }
  // A reduction along an axis (runs of `len`, `inner` apart), costed as a tree
  // (VectorUnit::reduce_cycles); a TL call.
  void charge_reduce(std::uint64_t outer, std::uint64_t len, std::uint64_t inner, bool scan) {
    pending_.time += pe_.vector().reduce_time(outer, len, inner, scan);
    pending_.elements += outer * len * inner;
    pending_.ops |=
        static_cast<std::uint8_t>(1u << static_cast<unsigned>(components::VectorOp::reduce));
    charge_issue();
  }
  // A data movement: output k is source element src[k] (from `second` on, of a second source),
  // read through the SRAM's banks (VectorUnit::gather_cycles); a TL call.
  void charge_gather(std::span<const std::int64_t> src, std::uint32_t element_bytes,
                     std::int64_t second) {
    pending_.time += pe_.vector().gather_time(src, element_bytes, second);
    pending_.elements += src.size();
    pending_.ops |=
        static_cast<std::uint8_t>(1u << static_cast<unsigned>(components::VectorOp::simple));
    charge_issue();
  }
  // One TL call's issue on the PE's control core (system.pe.issue_ns), paid with the vector
  // work at the next sync.
  void charge_issue() { pending_.issue += pe_.issue_time(); }
  bool timing_only() const { return timing_only_; }
  const std::string& pe_name() const { return pe_name_; }
  // A KernelFault: ends the program and names `what`.
  [[noreturn]] void fault(const std::string& what) const;

 protected:
  // `pe_name` must outlive the owner.
  TileOwner(components::Pe& pe, const std::string& pe_name, bool timing_only)
      : pe_(pe), pe_name_(pe_name), timing_only_(timing_only) {}
  ~TileOwner() = default;

  // Vector work charged and not yet paid: its time, elements, and ops (a bit per VectorOp).
  struct PendingVector {
    emu::Tick time = 0;
    std::uint64_t elements = 0;
    std::uint8_t ops = 0;
    emu::Tick issue = 0;  // the TL calls' issue, before the vector work
  };
  const PendingVector& pending() const { return pending_; }
  // The pending work, handed over to be paid (and forgotten here).
  PendingVector take_pending() {
    const PendingVector p = pending_;
    pending_ = {};
    return p;
  }

 private:
  [[noreturn, gnu::cold]] void bad_shape(const char* what, const Shape& shape, DType dtype) const;

  components::Pe& pe_;
  const std::string& pe_name_;
  bool timing_only_;
  PendingVector pending_;
};

}  // namespace cubesim::tl
