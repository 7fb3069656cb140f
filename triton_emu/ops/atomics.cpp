#include "triton_emu/ops/atomics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "emu/log.hpp"
#include "triton_emu/ops/access.hpp"
#include "triton_emu/ops/atomic_unit.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::ops {

using components::hex_address;
using detail::AccessSegment;
using detail::atomic_op_name;
using detail::atomic_size;
using detail::atomic_type_name;
using detail::AtomicType;
using detail::LaunchState;
using detail::PeState;
using detail::Program;
using tl::AtomicOp;
using tl::AtomicOptions;
using tl::Shape;
using tl::Tile;
using tl::TileAccess;

namespace {

// What every memory operation does once its `parts` transfers of `bytes` in all are done
// (begun at `start`): counts the PE's memory wait, logs it at trace level, and gives it a
// trace slice whose args name the parts (`parts_key`) and the element type (`type_key`).
void memory_op_done(Program& program, const char* what, emu::Tick start, std::uint64_t flow,
                    std::uint64_t bytes, std::size_t parts, const char* part_name,
                    const char* parts_key, const Shape& shape, const char* type_key,
                    std::string_view type) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  pe.hw.counters().memory_wait_ps += launch.sched.now() - start;
  pe.hw.counters().atomic_wait_ps += launch.sched.now() - start;
  if (launch.trace_calls) [[unlikely]]
    emu::log().trace("{}: {} of {} bytes in {} {}(s) took {}", pe.name, what, bytes, parts,
                     part_name, emu::format_time(launch.sched.now() - start));
  if (launch.tracing(pe))
    launch.trace_slice(
        pe, false, what, start, launch.sched.now(),
        fmt::format(
            R"({{"bytes":{},"address":"{}","{}":{},"shape":{},"{}":"{}"}})", bytes,
            program.segments().empty() ? hex_address(0) : hex_address(program.segments()[0].addr),
            parts_key, parts, shape.str(), type_key, type),
        flow);
}

// The atomics of the program's segments (planned by plan_access), waited for.
void atomic_segments(Program& program, AtomicOp op, int type, const Shape& shape,
                     const std::byte* operand, const std::byte* compare, std::byte* old) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  const char* what = atomic_op_name(op);
  const emu::Tick start = launch.sched.now();
  // One request per run of words on one cube and channel, at most a packet.
  struct Piece {
    std::uint64_t addr, bytes, tile_offset;
  };
  std::vector<Piece> pieces;
  const auto& map = launch.sys.address_map();
  const std::uint64_t packet = launch.sys.config().cube.noc.packet_bytes;
  std::uint64_t total = 0;
  for (const auto& s : program.segments()) {
    total += s.bytes;
    if (launch.log)
      launch.log->record(program.index(), program.epoch(), s.addr, s.addr + s.bytes, true, true);
    map.for_each_piece(s.addr, s.bytes, packet,
                       [&](std::uint64_t addr, components::Location, std::uint64_t len) {
                         pieces.push_back({addr, len, s.tile_offset + (addr - s.addr)});
                       });
  }
  emu::Completion done(launch.sched, what, std::max<std::size_t>(pieces.size(), 1));
  const std::uint64_t flow = launch.begin_trace_flow(pe);
  for (const Piece& p : pieces)
    launch.atomics->issue(pe.hw.global_pe(), op, static_cast<AtomicType>(type), p.addr, p.bytes,
                          operand ? operand + p.tile_offset : nullptr,
                          compare ? compare + p.tile_offset : nullptr,
                          old ? old + p.tile_offset : nullptr, operand ? launch.memory : nullptr,
                          [&done] { done.arrive(); });
  launch.end_trace_flow(flow);
  if (pieces.empty()) done.arrive();
  done.wait();
  memory_op_done(program, what, start, flow, total, pieces.size(), "request", "requests", shape,
                 "type", atomic_type_name(static_cast<AtomicType>(type)));
}

}  // namespace

Tile atomic_tile(Program& program, AtomicOp op, Ptr ptr, const Tile* compare, const Tile& values,
                 const AtomicOptions& o) {
  program.sync();
  const char* what = atomic_op_name(op);
  if (!values.valid()) program.fault(std::string(what) + ": the tile of values is empty");
  if (!program.owns(values))
    program.fault(std::string(what) + ": the tile belongs to another program");
  if (values.dtype() != DType::f32 && values.dtype() != DType::i32 && values.dtype() != DType::i64)
    program.fault(
        std::string(what) + ": a " + std::string(dtype_name(values.dtype())) +
        " tile; atomics work on f32, i32 and i64 words: convert the tile with .to(DType::f32)");
  if (compare) {
    if (!compare->valid() || !program.owns(*compare))
      program.fault(std::string(what) +
                    ": the compare tile is empty or belongs to another program");
    if (compare->shape() != values.shape() || compare->dtype() != values.dtype())
      program.fault(std::string(what) + ": the compare tile is " + compare->shape().str() + " " +
                    std::string(dtype_name(compare->dtype())) + " but the values are " +
                    values.shape().str() + " " + std::string(dtype_name(values.dtype())) +
                    "; they must match element for element");
  }
  const Shape shape = values.shape();
  const DType dtype = values.dtype();
  Tile old = program.make_tile(shape, dtype, /*values=*/values.has_values());
  const bool masked =
      plan_access(program, what, ptr, shape, dtype, o.row_stride, o.col_stride, o.mask);
  if (masked && old.has_values()) std::memset(TileAccess::raw(old), 0, old.bytes());
  const std::byte* operand = values.has_values() ? values.raw() : nullptr;
  const std::byte* cmp = compare && compare->has_values() ? compare->raw() : nullptr;
  if (compare && !cmp) operand = nullptr;  // values unknown: time only
  atomic_segments(program, op,
                  dtype == DType::f32   ? 0
                  : dtype == DType::i32 ? 1
                                        : 2,
                  shape, operand, cmp, old.has_values() ? TileAccess::raw(old) : nullptr);
  return old;
}

std::uint64_t atomic_bits(Program& program, AtomicOp op, Ptr ptr, int type, std::uint64_t compare,
                          std::uint64_t value) {
  LaunchState& launch = program.launch();
  program.sync();
  const char* what = atomic_op_name(op);
  const auto t = static_cast<AtomicType>(type);
  const std::uint32_t size = atomic_size(t);
  if (ptr.addr % size != 0)
    program.fault(std::string(what) + " at " + hex_address(ptr.addr) +
                  " is misaligned: " + atomic_type_name(t) +
                  " words need addresses that are multiples of " + std::to_string(size) +
                  " bytes; check the byte offsets of the pointer arithmetic");
  try {
    launch.sys.address_map().check_range(ptr.addr, size, what);
  } catch (const components::AddressError& e) {
    program.fault(std::string(e.what()) +
                  "; atomics work on words of HBM buffers allocated by the host");
  }
  if (!launch.allocations.contains(ptr.addr, size))
    program.fault(launch.allocations.describe_miss(ptr.addr, size, what));
  first_touch(program, ptr.addr, size);
  program.segments().assign(1, AccessSegment{ptr.addr, size, 0});
  std::uint64_t old = 0;
  // Values are always known for one word (a timing-only run keeps them in a shadow).
  atomic_segments(program, op, type, Shape{1}, reinterpret_cast<const std::byte*>(&value),
                  op == AtomicOp::cas ? reinterpret_cast<const std::byte*>(&compare) : nullptr,
                  reinterpret_cast<std::byte*>(&old));
  return old;
}

}  // namespace cubesim::ops
