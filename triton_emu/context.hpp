#pragma once
// tl::Context: what a kernel program sees (ADR-0022, docs/adr/0001-program-id-axes.md).
//
//   program_id(0) / num_programs(0): PE within its cube / PEs per cube
//   program_id(1) / num_programs(1): cube within its SIP / system.sips.cubes_per_sip
//   program_id(2) / num_programs(2): SIP / number of SIPs
//   program_id()  : axis 0.  Any other axis is a kernel fault naming the PE and the axis.
// That is the hardware grid (the default launch). On a logical grid (simulation.hpp's Grid)
// they give the program's place in that grid, and pe() where the dispatcher put it.
//
// Where the time of each call comes from (docs/hardware-model.md has the formulas):
//   load / store    the network: packets from or to memory, contended (components/network)
//   composite gemm  the PE's GEMM engine: FIFO, start-up + max(compute + epilogue, streaming)
//   tile math       the vector unit: ceil(elements * op_cycles[class] / lanes) + latency
//                   cycles per operation (components/pe/vector_unit.hpp)
//   device_print, device_assert   free (debugging must not change the timing)
// Vector-unit time is accumulated and paid before the next call that talks to the rest of
// the system (a load, store, composite, wait, barrier) or when the program ends, which gives
// the same simulated times as paying it at once, with far fewer context switches.

#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "components/dtype.hpp"
#include "components/system/pe_coord.hpp"
#include "components/system_config.hpp"
#include "emu/time.hpp"
#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ptr.hpp"
#include "triton_emu/tile.hpp"

namespace cubesim {
namespace detail {
class KernelRunner;
struct LaunchState;
struct PeState;
struct GemmOut;
// A run of elements consecutive both in memory and in a tile: one transfer of a load/store.
struct AccessSegment {
  std::uint64_t addr;
  std::uint64_t bytes;
  std::uint64_t tile_offset;  // bytes into the tile
};
}  // namespace detail
}  // namespace cubesim

namespace cubesim::tl {

using components::PeCoord;

class Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  std::int64_t program_id(int axis = 0) const;
  std::int64_t num_programs(int axis = 0) const;

  // Blocking: returns once the data is in SRAM. 1D shapes {n}, 2D {rows, cols}.
  Tile load(Ptr ptr, Shape shape, DType dtype, const LoadOptions& options = {});
  Ref ref(Ptr ptr, Shape shape, DType dtype, std::int64_t row_stride = 0);
  // Blocking: returns once the data is in memory.
  void store(Ptr ptr, const Tile& tile, const StoreOptions& options = {});

  // Asynchronous copies: the same checks, transfers and costs as load and store, but the call
  // returns once the transfers are issued, so vector math (or anything else) overlaps them.
  // load_async reserves the tile's SRAM at once; the tile is wait()'s. The values are what
  // memory holds when each transfer lands. store_async holds the tile (and its SRAM) until its
  // last transfer has landed; memory takes each part as it lands. A program ends only once its
  // copies have landed (its end time includes them), waited on or not.
  LoadHandle load_async(Ptr ptr, Shape shape, DType dtype, const LoadOptions& options = {});
  // Prefetch: the memory a ref names, into an SRAM tile (a composite operand that the engine
  // then reads from SRAM instead of streaming it).
  LoadHandle load_async(const Ref& ref);
  StoreHandle store_async(Ptr ptr, const Tile& tile, const StoreOptions& options = {});
  Tile wait(LoadHandle& handle);  // the loaded tile (waiting again gives it again)
  void wait(StoreHandle& handle);

  using Operand = std::variant<Tile, Ref>;
  // out (M x N, row-major, rows out_row_stride apart) = a (M x K) . b (K x N) and the
  // epilogue (CompositeOptions), on the GEMM engine.
  Handle composite(Op op, const Operand& a, const Operand& b, Ptr out,
                   const CompositeOptions& options = {});
  // The result as a new M x N tile in SRAM, reserved now (a fault when it does not fit).
  TileHandle composite(Op op, const Operand& a, const Operand& b, ToTile,
                       const CompositeOptions& options = {});
  // With .accumulate = true: acc (M x N) as the accumulator, as Triton's dot(a, b, acc). A tile
  // is read as it is (the result is a new tile); the handle of a composite still in flight
  // hands its tile on, and the engine adds into it in place after that composite (its FIFO),
  // so a K loop is `acc = tl.composite(Op::gemm, a_k, b_k, acc, {.accumulate = true})`.
  TileHandle composite(Op op, const Operand& a, const Operand& b, const Tile& acc,
                       const CompositeOptions& options = {});
  TileHandle composite(Op op, const Operand& a, const Operand& b, const TileHandle& acc,
                       const CompositeOptions& options = {});
  void wait(Handle& handle);
  Tile wait(TileHandle& handle);
  // Every program of the scope (the caller's cube, its SIP, or the whole launch) waits here
  // until all of them have arrived. A program that finishes without arriving leaves the others
  // waiting: a deadlock, reported with every blocked PE.
  void barrier(Scope scope = Scope::all);

  // Atomics on f32, i32 or i64 words at ptr (laid out as AtomicOptions says), one per element of
  // `values`, each atomic on its own (not the tile as a whole); blocks until the old values are
  // back and returns them as a tile of the values' shape and dtype. The words must be aligned
  // and in allocated HBM. cas writes values[i] where the word equals compare[i] (bit for bit).
  Tile atomic_add(Ptr ptr, const Tile& values, const AtomicOptions& options = {});
  Tile atomic_max(Ptr ptr, const Tile& values, const AtomicOptions& options = {});
  Tile atomic_min(Ptr ptr, const Tile& values, const AtomicOptions& options = {});
  Tile atomic_xchg(Ptr ptr, const Tile& values, const AtomicOptions& options = {});
  Tile atomic_cas(Ptr ptr, const Tile& compare, const Tile& values,
                  const AtomicOptions& options = {});
  // One word: float (f32), std::int32_t (i32) or std::int64_t (i64); returns the old value.
  // Integers wrap on overflow; a float max/min with a NaN operand leaves the word alone.
  template <AtomicWord T>
  T atomic_add(Ptr ptr, T value) {
    return atomic_word(AtomicOp::add, ptr, T{}, value);
  }
  template <AtomicWord T>
  T atomic_max(Ptr ptr, T value) {
    return atomic_word(AtomicOp::max, ptr, T{}, value);
  }
  template <AtomicWord T>
  T atomic_min(Ptr ptr, T value) {
    return atomic_word(AtomicOp::min, ptr, T{}, value);
  }
  template <AtomicWord T>
  T atomic_xchg(Ptr ptr, T value) {
    return atomic_word(AtomicOp::xchg, ptr, T{}, value);
  }
  template <AtomicWord T>
  T atomic_cas(Ptr ptr, T compare, T value) {
    return atomic_word(AtomicOp::cas, ptr, compare, value);
  }

  // Messages (DESIGN.md "Communication"): the tile goes into the next slot of the channel from
  // this program to `dst`; send blocks only while every slot of the channel is full (until the
  // receiver frees one and its credit is back), and returns once the payload is on its way.
  void send(const Peer& dst, const Tile& tile);
  // The next message from `src`, in the order sent, as a tile in this PE's SRAM; blocks until
  // it has arrived and been read out of its slot. Its shape and dtype must be the message's.
  Tile recv(const Peer& src, Shape shape, DType dtype);
  // recv without blocking: the message is read out of its slot as soon as it arrives.
  RecvHandle recv_async(const Peer& src, Shape shape, DType dtype);
  Tile wait(RecvHandle& handle);

  Tile arange(std::int64_t start, std::int64_t end);  // i32, [start, end)
  Tile full(Shape shape, double value, DType dtype);
  Tile zeros(Shape shape, DType dtype) { return filled("zeros", shape, 0.0, dtype); }

  // Debugging, free of simulated time (tl.device_print / tl.device_assert). device_print writes
  // one line to stdout: "[program (x, y, z) on PE at TIME] prefix: [values]" (the shape and
  // dtype when a timing-only run has no values); lines come in simulated-time order, which is
  // deterministic. device_assert: a kernel fault naming the program, the message and the first
  // element of `condition` that is zero (false).
  void device_print(std::string_view prefix, const Tile& tile) const;
  void device_assert(const Tile& condition, std::string_view message) const;

  // Where this program runs (the hardware position, also on a sub-grid).
  PeCoord pe() const;
  std::string pe_name() const;
  emu::Tick now() const;  // simulated time, including vector-unit time not yet paid
  std::uint64_t sram_free() const;

  // For tile math (tile.cpp): charge the vector unit and make result tiles.
  void charge_vector(std::uint64_t elements,
                     components::VectorOp op = components::VectorOp::simple);
  // SRAM-accounted; values uninitialised (every caller writes them all), or none at all when
  // `values` is false or the run is timing-only (i32 tiles keep theirs: index math and masks).
  Tile make_tile(Shape shape, DType dtype, bool values = true);
  bool timing_only() const;
  [[noreturn]] void fault(const std::string& what) const;

 private:
  friend class cubesim::detail::KernelRunner;
  friend struct cubesim::detail::LaunchState;
  Context(detail::LaunchState& launch, detail::PeState& pe, std::uint32_t program);
  void sync();  // pay accumulated vector time
  // A fault naming `what` when the launch runs in several waves (nothing may wait for a
  // program of another wave).
  Tile wait_recv(RecvHandle& handle, const char* what);  // recv's and wait's blocking part
  void require_one_wave(const std::string& what) const;
  std::shared_ptr<HandleState> issue(Op op, const Operand& a, const Operand& b,
                                     const detail::GemmOut& out, const CompositeOptions& options);
  void check_access(Ptr ptr, std::uint64_t bytes, DType dtype, const char* what) const;
  // Checks a load/store and cuts it into segments_; true when a mask with values applies.
  // A 3D shape's planes lie plane_stride elements apart (0: one after another).
  bool plan_access(const char* what, Ptr ptr, const Shape& shape, DType dtype,
                   std::int64_t row_stride, std::int64_t col_stride, const Tile* mask,
                   std::int64_t plane_stride = 0);
  // Moves segments_ from `src` to memory (store) or from memory to `dst` (load), and waits;
  // a null pointer moves timing only.
  // `deferred`: a load that copies nothing now (deferred_loads.hpp).
  // The transfers of `copy` (its segments, planned by plan_access) are issued.
  void issue_copy(detail::Copy& copy);
  // The last transfer of `copy` landed (called by it).
  void copy_landed(detail::Copy& copy);
  // A copy's tile made and its transfers planned (into the copy's segments), as load does.
  void prepare_load(detail::Copy& copy, Ptr ptr, Shape shape, DType dtype, const LoadOptions& o,
                    const char* what);
  void prepare_store(detail::Copy& copy, Ptr ptr, const Tile& tile, const StoreOptions& o,
                     const char* what);
  // Blocks until `copy` has landed; an async copy counts and traces the time as `what`.
  void wait_copy(detail::Copy& copy, const char* what);
  std::shared_ptr<detail::Copy> new_async(bool write, const char* what);
  // An asynchronous copy, prepared: put on the list of copies in flight and issued.
  void issue_async(const std::shared_ptr<detail::Copy>& copy);
  // The program's end: waits until its asynchronous copies have landed.
  void finish_copies();
  // What every memory operation does once its `parts` transfers of `bytes` in all are done
  // (begun at `start`): counts the PE's memory wait, logs it at trace level, and gives it a
  // trace slice whose args name the parts (`parts_key`) and the element type (`type_key`).
  void memory_op_done(const char* what, emu::Tick start, std::uint64_t flow, std::uint64_t bytes,
                      std::size_t parts, const char* part_name, const char* parts_key,
                      const Shape& shape, const char* type_key, std::string_view type);
  // Bytes of a tile of `shape`, or a fault naming `what` for a negative dimension or a size
  // past 2^63 bytes.
  std::uint64_t tile_bytes(const char* what, const Shape& shape, DType dtype) const;
  [[noreturn, gnu::cold]] void bad_shape(const char* what, const Shape& shape, DType dtype) const;
  Tile make_tile(Shape shape, DType dtype, std::uint64_t bytes, bool values);
  void check_fill_value(const char* what, double value, DType dtype) const;
  // Faults unless `t`, the tile of a `handle` from `call`, was made in this launch: a handle kept
  // past its launch says so and `why` (its Context and records are gone).
  void require_this_launch(const Tile& t, const char* handle, const char* call,
                           const char* why) const;
  // full and zeros: faults name `what`.
  Tile filled(const char* what, Shape shape, double value, DType dtype);
  Tile atomic_tile(AtomicOp op, Ptr ptr, const Tile* compare, const Tile& values,
                   const AtomicOptions& options);
  template <AtomicWord T>
  T atomic_word(AtomicOp op, Ptr ptr, T compare, T value) {
    std::uint64_t c = 0, v = 0;
    std::memcpy(&c, &compare, sizeof(T));
    std::memcpy(&v, &value, sizeof(T));
    const std::uint64_t old = atomic_bits(op, ptr,
                                          std::same_as<T, float>          ? 0
                                          : std::same_as<T, std::int32_t> ? 1
                                                                          : 2,
                                          c, v);
    T r;
    std::memcpy(&r, &old, sizeof(T));
    return r;
  }
  // One word of type 0 f32, 1 i32, 2 i64, its bits in the low bytes.
  std::uint64_t atomic_bits(AtomicOp op, Ptr ptr, int type, std::uint64_t compare,
                            std::uint64_t value);
  // The atomics of segments_ (planned by plan_access), waited for.
  void atomic_segments(AtomicOp op, int type, const Shape& shape, const std::byte* operand,
                       const std::byte* compare, std::byte* old);

  detail::LaunchState& launch_;
  detail::PeState& pe_;
  std::uint32_t program_;                         // index within the launch
  emu::Tick pending_ = 0;                         // vector time not yet paid
  std::uint64_t pending_elements_ = 0;            // elements of that work, for the trace
  std::uint8_t pending_ops_ = 0;                  // its ops, a bit per components::VectorOp
  std::uint32_t epoch_ = 0;                       // barriers passed, of any scope
  std::uint32_t scoped_barriers_[3] = {0, 0, 0};  // barriers passed per Scope
  std::vector<detail::AccessSegment> segments_;   // scratch of load/store, reused
  // Asynchronous copies in flight (each knows its index here), kept until they land.
  std::vector<std::shared_ptr<detail::Copy>> copies_;
};

}  // namespace cubesim::tl
