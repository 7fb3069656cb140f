#include "triton_emu/launch/context.hpp"

#include <string>

#include "triton_emu/ops/atomics.hpp"
#include "triton_emu/ops/barrier.hpp"
#include "triton_emu/ops/composites.hpp"
#include "triton_emu/ops/copies.hpp"
#include "triton_emu/ops/creation.hpp"
#include "triton_emu/ops/debug.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/ops/messages.hpp"
#include "triton_emu/ops/switch_reduce.hpp"

namespace cubesim::tl {

// ---- Where the program runs -------------------------------------------------------------------

std::int64_t Context::program_id(int axis) const {
  if (axis < 0 || axis > 2)
    fault("program_id(" + std::to_string(axis) +
          "): no such axis; valid axes are 0, 1 and 2 (on the hardware grid: PE within its "
          "cube, cube within its SIP, SIP)");
  return program_.launch().coords[program_.index()].id[axis];
}

std::int64_t Context::num_programs(int axis) const {
  if (axis < 0 || axis > 2)
    fault("num_programs(" + std::to_string(axis) +
          "): no such axis; valid axes are 0, 1 and 2 (on the hardware grid: PEs per cube, "
          "cubes per SIP, SIPs)");
  return program_.launch().grid[axis];
}

PeCoord Context::pe() const {
  return program_.pe().coord;
}
std::string Context::pe_name() const {
  return program_.pe_name();
}
emu::Tick Context::now() const {
  return program_.now();
}
bool Context::timing_only() const {
  return program_.timing_only();
}
std::uint64_t Context::sram_free() const {
  return program_.pe().hw.sram().available();
}
void Context::fault(const std::string& what) const {
  program_.fault(what);
}
void Context::charge_vector(std::uint64_t elements, components::VectorOp op) {
  program_.charge_vector(elements, op);
}
Tile Context::make_tile(Shape shape, DType dtype, bool values) {
  return program_.make_tile(shape, dtype, values);
}

// ---- Tiles from nothing, debugging ------------------------------------------------------------

Tile Context::arange(std::int64_t start, std::int64_t end) {
  return ops::arange(program_, start, end);
}
Tile Context::full(Shape shape, double value, DType dtype) {
  return program_.filled("full", shape, value, dtype);
}
Tile Context::zeros(Shape shape, DType dtype) {
  return program_.filled("zeros", shape, 0.0, dtype);
}
void Context::device_print(std::string_view prefix, const Tile& tile) const {
  ops::device_print(program_, prefix, tile);
}
void Context::device_assert(const Tile& condition, std::string_view message) const {
  ops::device_assert(program_, condition, message);
}

// ---- Copies -----------------------------------------------------------------------------------

Tile Context::load(Ptr ptr, Shape shape, DType dtype, const LoadOptions& options) {
  program_.charge_issue();
  return ops::load(program_, ptr, shape, dtype, options);
}
Ref Context::ref(Ptr ptr, Shape shape, DType dtype, std::int64_t row_stride) {
  return ops::ref(program_, ptr, shape, dtype, row_stride);
}
void Context::store(Ptr ptr, const Tile& tile, const StoreOptions& options) {
  program_.charge_issue();
  ops::store(program_, ptr, tile, options);
}
LoadHandle Context::load_async(Ptr ptr, Shape shape, DType dtype, const LoadOptions& options) {
  program_.charge_issue();
  LoadHandle h;
  h.state_ = ops::load_async(program_, ptr, shape, dtype, options);
  return h;
}
LoadHandle Context::load_async(const Ref& r) {
  return load_async(r.ptr, r.shape, r.dtype, {.row_stride = r.row_stride});
}
StoreHandle Context::store_async(Ptr ptr, const Tile& tile, const StoreOptions& options) {
  program_.charge_issue();
  StoreHandle h;
  h.state_ = ops::store_async(program_, ptr, tile, options);
  return h;
}
Tile Context::wait(LoadHandle& handle) {
  program_.charge_issue();
  ops::wait_async(program_, handle.state_.get(), /*store=*/false);
  return handle.state_->tile;
}
void Context::wait(StoreHandle& handle) {
  program_.charge_issue();
  ops::wait_async(program_, handle.state_.get(), /*store=*/true);
}

// ---- Composites -------------------------------------------------------------------------------

Handle Context::composite(Op op, const Operand& a, const Operand& b, Ptr out,
                          const CompositeOptions& options) {
  program_.charge_issue();
  Handle h;
  h.state_ = ops::composite(program_, op, a, b, detail::GemmOut{.ptr = out}, options);
  return h;
}
TileHandle Context::composite(Op op, const Operand& a, const Operand& b, ToTile,
                              const CompositeOptions& options) {
  program_.charge_issue();
  TileHandle h;
  h.handle_.state_ = ops::composite(program_, op, a, b, detail::GemmOut{.to_tile = true}, options);
  return h;
}
TileHandle Context::composite(Op op, const Operand& a, const Operand& b, const Tile& acc,
                              const CompositeOptions& options) {
  program_.charge_issue();
  TileHandle h;
  h.handle_.state_ =
      ops::composite(program_, op, a, b, detail::GemmOut{.to_tile = true, .acc = &acc}, options);
  return h;
}
TileHandle Context::composite(Op op, const Operand& a, const Operand& b, const TileHandle& acc,
                              const CompositeOptions& options) {
  program_.charge_issue();
  TileHandle h;
  h.handle_.state_ = ops::composite_onto(program_, op, a, b, acc.handle_.state_, options);
  return h;
}
void Context::wait(Handle& handle) {
  program_.charge_issue();
  ops::wait(program_, handle.state_.get());
}
Tile Context::wait(TileHandle& handle) {
  program_.charge_issue();
  return ops::wait_tile(program_, handle.handle_.state_.get());
}

// ---- Barriers, atomics, messages ----------------------------------------------------------------

void Context::barrier(Scope scope) {
  program_.charge_issue();
  ops::barrier(program_, scope);
}

Tile Context::atomic_add(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  program_.charge_issue();
  return ops::atomic_tile(program_, AtomicOp::add, ptr, nullptr, values, o);
}
Tile Context::atomic_max(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  program_.charge_issue();
  return ops::atomic_tile(program_, AtomicOp::max, ptr, nullptr, values, o);
}
Tile Context::atomic_min(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  program_.charge_issue();
  return ops::atomic_tile(program_, AtomicOp::min, ptr, nullptr, values, o);
}
Tile Context::atomic_xchg(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  program_.charge_issue();
  return ops::atomic_tile(program_, AtomicOp::xchg, ptr, nullptr, values, o);
}
Tile Context::atomic_cas(Ptr ptr, const Tile& compare, const Tile& values, const AtomicOptions& o) {
  program_.charge_issue();
  return ops::atomic_tile(program_, AtomicOp::cas, ptr, &compare, values, o);
}
std::uint64_t Context::atomic_bits(AtomicOp op, Ptr ptr, int type, std::uint64_t compare,
                                   std::uint64_t value) {
  program_.charge_issue();
  return ops::atomic_bits(program_, op, ptr, type, compare, value);
}

void Context::send(const Peer& dst, const Tile& tile) {
  program_.charge_issue();
  ops::send(program_, dst, tile);
}
Tile Context::recv(const Peer& src, Shape shape, DType dtype) {
  program_.charge_issue();
  const auto receipt = ops::recv_async(program_, src, shape, dtype);
  return ops::wait_recv(program_, receipt.get(), "recv");
}
RecvHandle Context::recv_async(const Peer& src, Shape shape, DType dtype) {
  program_.charge_issue();
  RecvHandle h;
  h.state_ = ops::recv_async(program_, src, shape, dtype);
  return h;
}
Tile Context::wait(RecvHandle& handle) {
  program_.charge_issue();
  return ops::wait_recv(program_, handle.state_.get(), "recv_async wait");
}

ReduceHandle Context::switch_reduce_async(const Tile& tile, Scope scope) {
  program_.charge_issue();
  ReduceHandle h;
  h.state_ = program_.launch().reductions->contribute(program_, tile, scope);
  return h;
}
Tile Context::wait(ReduceHandle& handle) {
  program_.charge_issue();
  return program_.launch().reductions->wait(program_, handle.state_.get());
}
Tile Context::switch_reduce(const Tile& tile, Scope scope) {
  program_.charge_issue();  // one call, though it is the two below
  const auto state = program_.launch().reductions->contribute(program_, tile, scope);
  return program_.launch().reductions->wait(program_, state.get());
}

std::string Peer::str() const {
  switch (kind) {
    case Kind::north:
      return "north";
    case Kind::south:
      return "south";
    case Kind::east:
      return "east";
    case Kind::west:
      return "west";
    case Kind::ucie:
      return "ucie(" + std::to_string(index) + ")";
    case Kind::inter_sip:
      return "inter_sip(" + std::to_string(index) + ")";
    case Kind::program:
      break;
  }
  return "program(" + std::to_string(id[0]) + ", " + std::to_string(id[1]) + ", " +
         std::to_string(id[2]) + ")";
}

}  // namespace cubesim::tl
