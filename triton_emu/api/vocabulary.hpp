#pragma once
// The words of the kernel API besides tl::Context and tl::Tile (ADR-0022, DESIGN.md "Kernel
// API"): memory named without moving it (Ref), the options of loads, stores, atomics and
// composites, barrier scopes, message peers, and the handles of asynchronous operations.
// Plain values: a kernel can build and pass them without a Context, and this header pulls in
// nothing of the hardware model but dtypes.

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "components/dtype.hpp"
#include "triton_emu/memory/ptr.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::detail {
struct Receipt;
struct Copy;
struct SwitchReceipt;
}  // namespace cubesim::detail

namespace cubesim::tl {

class Context;
struct HandleState;

// Memory named without moving it; a composite op streams it from where it lies.
struct Ref {
  Ptr ptr;
  Shape shape;
  DType dtype = DType::f32;
  std::int64_t row_stride = 0;  // elements between rows; 0 = cols (contiguous)
};

// A composite's operand: a tile in SRAM, or memory the engine streams.
using Operand = std::variant<Tile, Ref>;

struct LoadOptions {
  std::int64_t row_stride = 0;  // elements between rows (2D); 0 = cols, i.e. contiguous
  std::int64_t col_stride = 1;  // elements between neighbours in a row; != 1 is a gather
  const Tile* mask = nullptr;   // mask (bool or any dtype) of the tile's shape: 0 = do not read
  double other = 0.0;           // value of masked-off elements
  // 3D tiles: elements between planes (axis 0); 0 = shape[1] * row_stride, i.e. the planes
  // follow one another. Element (p, i, j) is at p * plane_stride + i * row_stride + j *
  // col_stride.
  std::int64_t plane_stride = 0;
};

struct StoreOptions {
  std::int64_t row_stride = 0;
  std::int64_t col_stride = 1;
  const Tile* mask = nullptr;     // 0 = do not write
  std::int64_t plane_stride = 0;  // 3D tiles, as LoadOptions::plane_stride
};

enum class Op { gemm };

// Which programs a barrier synchronises: those of the caller's cube (program_id(1) and (2)
// equal), of its SIP (program_id(2) equal), or every program of the launch.
enum class Scope : std::uint8_t { cube, sip, all };

// Atomic read-modify-writes on HBM words, done by the memory controller (atomics.hpp has the
// timing); each returns the old values.
enum class AtomicOp : std::uint8_t { add, max, min, xchg, cas };

// Where the words of a tile atomic lie, as for store: element (i, j) at
// ptr + (i * row_stride + j * col_stride) elements.
struct AtomicOptions {
  std::int64_t row_stride = 0;  // 0 = cols (contiguous)
  std::int64_t col_stride = 1;
  const Tile* mask = nullptr;  // 0 = leave the word alone (its old value reads as 0)
};

// The word types of the one-word atomics.
template <class T>
concept AtomicWord =
    std::same_as<T, float> || std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

// The activation of a composite GEMM's epilogue. gelu is the erf form (torch's default):
// x / 2 * (1 + erf(x / sqrt(2))).
enum class Activation : std::uint8_t { none, relu, gelu };

// A composite GEMM computes op(a) . op(b) (M x N) and writes, element by element,
//   out = cast(activation(alpha * (a . b) + beta * acc + bias[col]))
// where acc is what out held (memory or an accumulator tile) when accumulate is set, and cast
// rounds the f32 value to out_dtype. Each step that changes a value (alpha != 1, beta != 1,
// bias, activation) is an epilogue step on the engine (docs/hardware-model.md).
struct CompositeOptions {
  bool trans_a = false;  // a holds K x M
  bool trans_b = false;  // b holds N x K
  // Default: the accumulator tile's dtype, else a's (i8: i32, f8: f32); docs/writing-kernels.md
  // lists the pairs.
  std::optional<DType> out_dtype{};
  bool accumulate = false;          // add beta * (what out holds)
  std::int64_t out_row_stride = 0;  // memory output: elements between its rows; 0 = N
  double alpha = 1.0;               // scales a . b
  double beta = 1.0;                // scales the accumulator (needs accumulate)
  // N values (shape [N] or [1, N]; any float dtype) added to every row: a tile, or a ref the
  // engine streams in.
  std::optional<std::variant<Tile, Ref>> bias{};
  Activation activation = Activation::none;
};

// An asynchronous composite operation in flight.
class Handle {
 public:
  Handle() = default;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Context;
  std::shared_ptr<HandleState> state_;
};

// Passed where a composite's output goes: the result is a new tile in the PE's SRAM.
struct ToTile {
  explicit ToTile() = default;
};
inline constexpr ToTile to_tile{};

// A composite whose result is a tile in the PE's SRAM: wait() gives the tile. Passed as the
// accumulator of a later composite it is used up (that composite's handle owns the tile).
class TileHandle {
 public:
  TileHandle() = default;
  bool valid() const { return handle_.valid(); }

 private:
  friend class Context;
  Handle handle_;
};

// An asynchronous copy in flight (load_async, store_async): its transfers go through the PE's
// DMA engine while the program goes on; wait() blocks until every one has landed.
class LoadHandle {
 public:
  LoadHandle() = default;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Context;
  std::shared_ptr<detail::Copy> state_;
};

class StoreHandle {
 public:
  StoreHandle() = default;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Context;
  std::shared_ptr<detail::Copy> state_;
};

// Who a message goes to or comes from (DESIGN.md "Communication"): a mesh neighbour (north is
// the row above, y - 1; west the column to the left, x - 1), the same PE of the k-th cube one
// UCIe link away or of the k-th SIP one inter-SIP link away (neighbours in ascending order), or
// the program at grid coordinates (program_id(0), (1), (2)).
struct Peer {
  enum class Kind : std::uint8_t { north, south, east, west, ucie, inter_sip, program };
  Kind kind = Kind::program;
  std::int64_t index = 0;          // ucie, inter_sip: which neighbour
  std::int64_t id[3] = {0, 0, 0};  // program
  std::string str() const;         // "east", "ucie(1)", "program(3, 1, 0)"
};
inline constexpr Peer north{Peer::Kind::north};
inline constexpr Peer south{Peer::Kind::south};
inline constexpr Peer east{Peer::Kind::east};
inline constexpr Peer west{Peer::Kind::west};
inline Peer ucie(std::int64_t k) {
  return {Peer::Kind::ucie, k};
}
inline Peer inter_sip(std::int64_t k) {
  return {Peer::Kind::inter_sip, k};
}
inline Peer program(std::int64_t pe, std::int64_t cube = 0, std::int64_t sip = 0) {
  return {Peer::Kind::program, 0, {pe, cube, sip}};
}

// A receive in flight (recv_async); wait() gives its tile.
class RecvHandle {
 public:
  RecvHandle() = default;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Context;
  std::shared_ptr<detail::Receipt> state_;
};

// An in-network reduction in flight (switch_reduce_async); wait() gives the sum.
class ReduceHandle {
 public:
  ReduceHandle() = default;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Context;
  std::shared_ptr<detail::SwitchReceipt> state_;
};

}  // namespace cubesim::tl
