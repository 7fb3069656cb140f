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
// the system (ops/program.hpp). Context is a facade: each call is one operation of ops/ on
// the program's detail::Program.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "components/dtype.hpp"
#include "components/system/pe_coord.hpp"
#include "components/system_config.hpp"
#include "emu/time.hpp"
#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/memory/ptr.hpp"
#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::detail {
class KernelRunner;
}  // namespace cubesim::detail

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

  using Operand = tl::Operand;
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

  // In-network reduction (system.inter_sip.switch_reduction for Scope::all,
  // system.ucie.switch_reduction for Scope::sip): the tile goes up to the switch, which adds it
  // to the same call's tiles from the programs at this program's place (cube and PE) in every
  // other SIP (Scope::all), or at its PE in every other cube of its SIP (Scope::sip), and sends
  // the sum down to each of them; the n-th call of each of those programs is one reduction.
  // Their tiles must match in shape and dtype, a dtype the switch adds; the sum comes back as
  // a new tile (its SRAM taken now). Returns once the tile is on its way.
  ReduceHandle switch_reduce_async(const Tile& tile, Scope scope);
  Tile wait(ReduceHandle& handle);
  Tile switch_reduce(const Tile& tile, Scope scope);

  Tile arange(std::int64_t start, std::int64_t end);  // i32, [start, end)
  Tile full(Shape shape, double value, DType dtype);
  Tile zeros(Shape shape, DType dtype);

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

  // Vector-unit time for work done outside tile math (a kernel's own element loop).
  void charge_vector(std::uint64_t elements,
                     components::VectorOp op = components::VectorOp::simple);
  // SRAM-accounted; values uninitialised (every caller writes them all), or none at all when
  // `values` is false or the run is timing-only (i32 tiles keep theirs: index math and masks).
  Tile make_tile(Shape shape, DType dtype, bool values = true);
  bool timing_only() const;
  [[noreturn]] void fault(const std::string& what) const;

 private:
  friend class cubesim::detail::KernelRunner;
  Context(detail::LaunchState& launch, detail::PeState& pe, std::uint32_t program)
      : program_(launch, pe, program) {}
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
  std::uint64_t atomic_bits(AtomicOp op, Ptr ptr, int type, std::uint64_t compare,
                            std::uint64_t value);

  detail::Program program_;  // the state and services the operations (ops/) work with
};

}  // namespace cubesim::tl
