#include "triton_emu/ops/copies.hpp"

#include <fmt/format.h>

#include <string>

#include "emu/log.hpp"
#include "triton_emu/ops/access.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/element_codec.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::ops {

using components::hex_address;
using detail::AccessSegment;
using detail::Copy;
using detail::DeferredLoads;
using detail::LaunchState;
using detail::MatrixAt;
using detail::PeState;
using detail::Program;
using tl::LoadOptions;
using tl::Ref;
using tl::Shape;
using tl::StoreOptions;
using tl::Tile;
using tl::TileAccess;

namespace {

void copy_landed(Program& program, Copy& c);

// The transfers of `c` (its segments, planned by plan_access) are issued.
void issue_copy(Program& program, Copy& c) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  c.owner = &program;
  c.memory = launch.memory;
  c.start = launch.sched.now();
  c.in_flight = c.segments.size();
  if (c.deferred) {
    const auto& at = *c.tile.source();
    launch.deferred->defer(c.tile,
                           MatrixAt{at.addr, c.tile.shape().rows(), c.tile.shape().cols(),
                                    at.row_stride, c.tile.dtype()},
                           &c.dst);
  }
  const bool log_async = c.async && launch.log;
  if (log_async) c.logged_op = launch.log->begin_async();
  c.flow = launch.begin_trace_flow(pe);
  for (const auto& s : c.segments) {
    c.bytes += s.bytes;
    if (log_async)
      launch.log->record_copy(program.index(), program.epoch(), c.logged_op, s.addr,
                              s.addr + s.bytes, c.write, c.records);
    else if (launch.log)
      launch.log->record(program.index(), program.epoch(), s.addr, s.addr + s.bytes, c.write);
    const AccessSegment* seg = &s;
    Copy* copy = &c;
    if (c.write)
      launch.sys.network().write(pe.hw.global_pe(), s.addr, s.bytes, [copy, seg] {
        if (copy->src && copy->memory)
          copy->memory->write(seg->addr, copy->src + seg->tile_offset, seg->bytes);
        if (--copy->in_flight == 0) copy_landed(*copy->owner, *copy);
      });
    else
      launch.sys.network().read(pe.hw.global_pe(), s.addr, s.bytes, [copy, seg] {
        if (copy->dst) copy->memory->read(seg->addr, copy->dst + seg->tile_offset, seg->bytes);
        if (--copy->in_flight == 0) copy_landed(*copy->owner, *copy);
      });
  }
  launch.end_trace_flow(c.flow);
  if (c.segments.empty()) copy_landed(program, c);
}

// The last transfer of `c` landed.
void copy_landed(Program& program, Copy& c) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  if (c.deferred) launch.deferred->landed(c.tile);
  (c.write ? pe.hw.counters().bytes_stored : pe.hw.counters().bytes_loaded) += c.bytes;
  c.done.fire();
  if (!c.async) return;  // the blocked program records the rest
  if (c.lane >= 0) {
    const Shape& shape = c.tile.shape();
    launch.trace_copy(
        pe, c.lane, c.what, c.start, launch.sched.now(),
        fmt::format(R"({{"bytes":{},"address":"{}","segments":{},"shape":{},"dtype":"{}"}})",
                    c.bytes, hex_address(c.segments.empty() ? 0 : c.segments[0].addr),
                    c.segments.size(), shape.str(), dtype_name(c.tile.dtype())),
        c.flow);
    launch.release_copy_lane(pe, c.lane);
  }
  // Off the list of copies in flight (the last holder of a copy whose handle went: last step).
  auto& list = program.copies();
  const std::size_t i = c.index;
  if (i + 1 != list.size()) {
    list[i] = std::move(list.back());
    list[i]->index = i;
  }
  list.pop_back();
}

// Blocks until `c` has landed; an async copy counts and traces the time as `what`.
void wait_copy(Program& program, Copy& c, const char* what) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  const emu::Tick start = launch.sched.now();
  c.done.wait();
  const emu::Tick end = launch.sched.now();
  pe.hw.counters().memory_wait_ps += end - start;
  (c.write ? pe.hw.counters().store_wait_ps : pe.hw.counters().load_wait_ps) += end - start;
  if (c.async) {
    if (launch.log && c.logged_op)
      launch.log->copy_waited(c.records, program.index(), program.epoch());
    if (end > start && launch.tracing(pe))
      launch.trace_slice(pe, false, what, start, end, fmt::format(R"({{"copy":"{}"}})", c.what));
    return;
  }
  if (launch.trace_calls) [[unlikely]]
    emu::log().trace("{}: {} of {} bytes in {} transfer(s) took {}", pe.name, c.what, c.bytes,
                     c.segments.size(), emu::format_time(end - c.start));
  if (launch.tracing(pe))
    launch.trace_slice(
        pe, false, c.what, c.start, end,
        fmt::format(R"({{"bytes":{},"address":"{}","segments":{},"shape":{},"dtype":"{}"}})",
                    c.bytes, hex_address(c.segments.empty() ? 0 : c.segments[0].addr),
                    c.segments.size(), c.tile.shape().str(), dtype_name(c.tile.dtype())),
        c.flow);
}

// A copy's tile made and its transfers planned (into the program's segments), as load does.
void prepare_load(Program& program, Copy& c, Ptr ptr, Shape shape, DType dtype,
                  const LoadOptions& o, const char* what) {
  LaunchState& launch = program.launch();
  program.sync();
  if (o.mask) program.check_fill_value("load's `other`", o.other, dtype);
  const std::uint64_t bytes = program.tile_bytes(what, shape, dtype);
  const bool whole_rows =
      !o.mask && o.col_stride == 1 &&
      (o.plane_stride == 0 ||
       (shape.rank == 3 && o.plane_stride == shape[1] * (o.row_stride ? o.row_stride : shape[2])));
  // A large load of whole rows copies its values when they are first used (deferred_loads.hpp).
  c.deferred = whole_rows && launch.deferred && bytes >= DeferredLoads::kMinBytes;
  // The tile first: a shape that SRAM cannot hold is refused before its transfers are planned.
  // Timing-only: values unknown.
  c.tile = program.make_tile(shape, dtype, bytes, /*values=*/!program.timing_only() && !c.deferred);
  Tile& t = c.tile;
  const bool masked = plan_access(program, what, ptr, shape, dtype, o.row_stride, o.col_stride,
                                  o.mask, o.plane_stride);
  if (!program.timing_only()) {
    if (masked)  // masked-off elements read as `other`
      tl::fill_f64(TileAccess::raw(t), shape.numel(), dtype, o.other);
    if (whole_rows)
      TileAccess::set_source(t, Tile::Source{ptr.addr, o.row_stride ? o.row_stride : shape.cols(),
                                             launch.memory->write_generation()});
  }
  c.dst = TileAccess::raw(t);  // nullptr when it has no values
}

void prepare_store(Program& program, Copy& c, Ptr ptr, const Tile& tile, const StoreOptions& o,
                   const char* what) {
  program.sync();
  if (!tile.valid()) program.fault(std::string(what) + ": the tile is empty (made by Tile())");
  if (!program.owns(tile))
    program.fault(std::string(what) + ": the tile belongs to another program");
  plan_access(program, what, ptr, tile.shape(), tile.dtype(), o.row_stride, o.col_stride, o.mask,
              o.plane_stride);
  c.tile = tile;
  c.src = tile.has_values() ? tile.raw() : nullptr;
}

}  // namespace

Tile load(Program& program, Ptr ptr, Shape shape, DType dtype, const LoadOptions& o) {
  LaunchState& launch = program.launch();
  Copy c(launch.sched, "load", false);
  prepare_load(program, c, ptr, shape, dtype, o, "load");
  c.segments.swap(program.segments());  // the scratch, lent for the call
  issue_copy(program, c);
  wait_copy(program, c, "load");
  c.segments.swap(program.segments());
  return std::move(c.tile);
}

Ref ref(const Program& program, Ptr ptr, Shape shape, DType dtype, std::int64_t row_stride) {
  program.tile_bytes("ref", shape, dtype);  // no negative dimension, no more than 2^63 bytes
  const std::int64_t rs = row_stride ? row_stride : shape.cols();
  if (rs < shape.cols())
    program.fault("ref: row_stride " + std::to_string(rs) + " is smaller than a row of " +
                  std::to_string(shape.cols()) + " elements");
  std::uint64_t span = 0;
  if (shape.numel() != 0 &&
      (__builtin_mul_overflow(static_cast<std::uint64_t>(shape.rows() - 1),
                              static_cast<std::uint64_t>(rs), &span) ||
       __builtin_add_overflow(span, static_cast<std::uint64_t>(shape.cols()), &span) ||
       __builtin_mul_overflow(span, std::uint64_t{dtype_size(dtype)}, &span)))
    program.fault("ref of shape " + shape.str() + " with row_stride " + std::to_string(rs) +
                  " at " + hex_address(ptr.addr) + " spans more than 2^64 bytes");
  check_access(program, ptr, span, dtype, "ref");
  return Ref{ptr, shape, dtype, rs};
}

void store(Program& program, Ptr ptr, const Tile& tile, const StoreOptions& o) {
  LaunchState& launch = program.launch();
  Copy c(launch.sched, "store", true);
  prepare_store(program, c, ptr, tile, o, "store");
  c.segments.swap(program.segments());
  issue_copy(program, c);
  wait_copy(program, c, "store");
  c.segments.swap(program.segments());
}

// ---- Asynchronous copies ------------------------------------------------------------------------

namespace {

std::shared_ptr<Copy> new_async(Program& program, bool write, const char* what) {
  LaunchState& launch = program.launch();
  auto c = std::make_shared<Copy>(launch.sched, what, write);
  c->async = true;
  return c;
}

// An asynchronous copy, prepared: put on the list of copies in flight and issued.
void issue_async(Program& program, const std::shared_ptr<Copy>& c) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  c->segments = program.segments();  // planned by prepare_load / prepare_store
  c->index = program.copies().size();
  program.copies().push_back(c);
  c->lane = launch.tracing(pe) ? launch.take_copy_lane(pe) : -1;
  issue_copy(program, *c);
}

}  // namespace

std::shared_ptr<Copy> load_async(Program& program, Ptr ptr, Shape shape, DType dtype,
                                 const LoadOptions& o) {
  auto c = new_async(program, false, "load_async");
  prepare_load(program, *c, ptr, shape, dtype, o, "load_async");
  issue_async(program, c);
  return c;
}

std::shared_ptr<Copy> store_async(Program& program, Ptr ptr, const Tile& tile,
                                  const StoreOptions& o) {
  auto c = new_async(program, true, "store_async");
  prepare_store(program, *c, ptr, tile, o, "store_async");
  issue_async(program, c);
  return c;
}

void wait_async(Program& program, Copy* copy, bool store) {
  program.sync();
  const bool load = !store;
  const char* handle = load ? "LoadHandle" : "StoreHandle";
  const char* call = load ? "load_async" : "store_async";
  if (copy == nullptr)
    program.fault(
        fmt::format("wait on {}: the {} came from no {}", program.pe_name(), handle, call));
  program.require_this_launch(copy->tile, handle, call, "a copy lands within its launch");
  if (copy->owner != &program)
    program.fault(fmt::format("wait on {}: the {} belongs to another program's {}",
                              program.pe_name(), handle, call));
  wait_copy(program, *copy, load ? "wait load_async" : "wait store_async");
}

void finish_copies(Program& program) {
  while (!program.copies().empty()) {
    const std::shared_ptr<Copy> c = program.copies().back();  // it leaves the list as it lands
    wait_copy(program, *c, "copies in flight");
  }
}

}  // namespace cubesim::ops
