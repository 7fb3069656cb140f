#include "triton_emu/context.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "emu/log.hpp"
#include "triton_emu/atomics.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/composite_gemm.hpp"
#include "triton_emu/copy.hpp"
#include "triton_emu/element_codec.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/launch_state.hpp"
#include "triton_emu/messages.hpp"

namespace cubesim::tl {

using components::hex_address;

Context::Context(detail::LaunchState& launch, detail::PeState& pe, std::uint32_t program)
    : launch_(launch), pe_(pe), program_(program) {}

// ---- Where the program runs -----------------------------------------------------------------

std::int64_t Context::program_id(int axis) const {
  if (axis < 0 || axis > 2)
    fault("program_id(" + std::to_string(axis) +
          "): no such axis; valid axes are 0, 1 and 2 (on the hardware grid: PE within its "
          "cube, cube within its SIP, SIP)");
  return launch_.coords[program_].id[axis];
}

std::int64_t Context::num_programs(int axis) const {
  if (axis < 0 || axis > 2)
    fault("num_programs(" + std::to_string(axis) +
          "): no such axis; valid axes are 0, 1 and 2 (on the hardware grid: PEs per cube, "
          "cubes per SIP, SIPs)");
  return launch_.grid[axis];
}

PeCoord Context::pe() const {
  return pe_.coord;
}
std::string Context::pe_name() const {
  return pe_.name;
}
emu::Tick Context::now() const {
  return launch_.sched.now() + pending_;
}
bool Context::timing_only() const {
  return launch_.sys.timing_only();
}
std::uint64_t Context::sram_free() const {
  return pe_.hw.sram().available();
}

void Context::fault(const std::string& what) const {
  throw KernelFault(what);
}

// ---- Vector unit ------------------------------------------------------------------------------

void Context::charge_vector(std::uint64_t elements, components::VectorOp op) {
  pending_ += pe_.hw.vector().time(elements, op);
  pending_elements_ += elements;
  pending_ops_ |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(op));
}

void Context::sync() {
  if (pending_ == 0) return;
  const emu::Tick t = pending_;
  const emu::Tick start = launch_.sched.now();
  const std::uint64_t elements = pending_elements_;
  const std::uint8_t ops = pending_ops_;
  pending_ = 0;
  pending_elements_ = 0;
  pending_ops_ = 0;
  pe_.hw.counters().vector_busy_ps += t;
  launch_.sched.wait_for(t);
  if (launch_.tracing(pe_)) {
    // The work paid for since the last sync: its elements and the kinds of op among them.
    std::string names;
    for (const auto op : components::kAllVectorOps)
      if (ops & (1u << static_cast<unsigned>(op)))
        names += (names.empty() ? "" : ", ") + std::string(components::vector_op_name(op));
    launch_.trace_slice(pe_, false, "vector", start, start + t,
                        fmt::format(R"({{"elements":{},"ops":"{}"}})", elements, names));
  }
}

std::uint64_t Context::tile_bytes(const char* what, const Shape& shape, DType dtype) const {
  std::int64_t rows = shape.rows();
  const std::int64_t cols = shape.cols();
  std::uint64_t n = 0, bytes = 0;
  if (shape.rank == 3 && (shape[0] < 0 || shape[1] < 0 ||
                          __builtin_mul_overflow(shape[0], shape[1], &rows))) [[unlikely]]
    bad_shape(what, shape, dtype);
  if ((rows | cols) < 0 ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols),
                             &n) ||
      __builtin_mul_overflow(n, std::uint64_t{dtype_size(dtype)}, &bytes) ||
      bytes > static_cast<std::uint64_t>(INT64_MAX)) [[unlikely]]
    bad_shape(what, shape, dtype);
  return bytes;
}

void Context::bad_shape(const char* what, const Shape& shape, DType dtype) const {
  if (shape[0] < 0 || (shape.rank > 1 && shape[1] < 0) || (shape.rank > 2 && shape[2] < 0))
    fault(std::string(what) + ": shape " + shape.str() +
          " has a negative dimension; dimensions are element counts (0 or more)");
  fault(std::string(what) + ": a " + std::string(dtype_name(dtype)) + " tile of shape " +
        shape.str() + " has more than 2^63 bytes; no PE's SRAM (" +
        std::to_string(pe_.hw.sram().capacity()) + " bytes on " + pe_.name +
        ") holds it: work on smaller blocks");
}

Tile Context::make_tile(Shape shape, DType dtype, bool values) {
  return make_tile(shape, dtype, tile_bytes("make_tile", shape, dtype), values);
}

Tile Context::make_tile(Shape shape, DType dtype, std::uint64_t bytes, bool values) {
  auto& sram = pe_.hw.sram();
  if (!sram.allocate(bytes))
    fault("SRAM overflow on " + pe_.name + ": a " + std::string(dtype_name(dtype)) +
          " tile of shape " + shape.str() + " needs " + std::to_string(bytes) + " bytes but only " +
          std::to_string(sram.available()) + " of " + std::to_string(sram.capacity()) +
          " bytes are free; work on smaller blocks, let tiles go out of scope, or raise "
          "system.pe.sram_KiB");
  Tile t;
  t.ctx_ = this;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.data_ = new Tile::Data;  // default-initialised: the values are written by the caller
  t.data_->sram = pe_.hw.shared_sram();
  t.data_->held = bytes;
  t.data_->launch = sram.tenant;
  // Timing-only runs keep values of integer and bool tiles only (index math and masks; see
  // tile.cpp).
  if (values && (!timing_only() || is_integer(dtype))) t.data_->bytes.assign_uninitialised(bytes);
  return t;
}

Tile Context::arange(std::int64_t start, std::int64_t end) {
  if (end < start)
    fault("arange(" + std::to_string(start) + ", " + std::to_string(end) + "): end < start");
  if (start < INT32_MIN || end - 1 > INT32_MAX)
    fault("arange(" + std::to_string(start) + ", " + std::to_string(end) +
          "): the values do not fit the i32 index tile (-2^31 .. 2^31-1); index from the block "
          "instead: offset the pointer by the block's start in bytes and take arange(0, block)");
  Tile t = make_tile(Shape{end - start}, DType::i32);
  charge_vector(static_cast<std::uint64_t>(end - start));
  {
    auto* p = reinterpret_cast<std::int32_t*>(t.data_->bytes.data());
    for (std::int64_t i = start; i < end; ++i) p[i - start] = static_cast<std::int32_t>(i);
  }
  return t;
}

namespace {
// Fills n elements of dtype with one value, converted once.
void fill_value(std::byte* p, std::int64_t n, DType dtype, double value) {
  const std::uint32_t size = dtype_size(dtype);
  std::byte one[8];
  // Callers check the range of integers (full() faults, load's `other` too): exact.
  encode_f64(&value, 1, dtype, one);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(p + i * size, one, size);
}
}  // namespace

void Context::check_fill_value(const char* what, double value, DType dtype) const {
  if (!is_integer(dtype)) return;
  const double lo = dtype == DType::boolean ? 0
                    : dtype == DType::i8    ? -128
                    : dtype == DType::i32   ? INT32_MIN
                                            : -0x1p63;
  const double hi = dtype == DType::boolean ? 1
                    : dtype == DType::i8    ? 127
                    : dtype == DType::i32   ? INT32_MAX
                                            : 0x1p63;
  if (!(std::nearbyint(value) == value && value >= lo &&
        (dtype == DType::i64 ? value < hi : value <= hi)))
    fault(
        fmt::format("{}: {} is not a {} value (an integer in {} .. {}); use a float tile or an "
                    "integer in range",
                    what, value, dtype_name(dtype), lo,
                    dtype == DType::i64 ? "2^63-1" : fmt::format("{}", hi)));
}

Tile Context::full(Shape shape, double value, DType dtype) {
  return filled("full", shape, value, dtype);
}

Tile Context::filled(const char* what, Shape shape, double value, DType dtype) {
  check_fill_value(what, value, dtype);
  Tile t = make_tile(shape, dtype, tile_bytes(what, shape, dtype), true);
  charge_vector(static_cast<std::uint64_t>(shape.numel()));
  if (!t.data_->bytes.empty()) fill_value(t.data_->bytes.data(), shape.numel(), dtype, value);
  return t;
}

// ---- Debugging ---------------------------------------------------------------------------------

namespace {
// "[[1, 2], [3, 4]]": the values of a tile, nested by its dimensions.
std::string tile_text(const Tile& t) {
  if (!t.valid()) return "<an empty tile (made by Tile())>";
  if (!t.has_values() && t.numel() > 0)
    return fmt::format("<{} {} tile: no values in a timing-only run>", t.shape().str(),
                       dtype_name(t.dtype()));
  const auto v = t.to_f64();
  const Shape& s = t.shape();
  std::string out;
  std::size_t next = 0;
  auto emit = [&](auto& self, int axis) -> void {
    out += '[';
    for (std::int64_t i = 0; i < s[axis]; ++i) {
      if (i) out += ", ";
      if (axis + 1 < s.rank)
        self(self, axis + 1);
      else
        out += fmt::format("{}", v[next++]);
    }
    out += ']';
  };
  emit(emit, 0);
  return out;
}
}  // namespace

void Context::device_print(std::string_view prefix, const Tile& tile) const {
  const auto& id = launch_.coords[program_].id;
  fmt::print("[program ({}, {}, {}) on {} at {}] {}: {}\n", id[0], id[1], id[2], pe_.name,
             emu::format_time(now()), prefix, tile_text(tile));
  std::fflush(stdout);
}

void Context::device_assert(const Tile& condition, std::string_view message) const {
  if (!condition.valid()) fault("device_assert: the condition is an empty tile (made by Tile())");
  if (!condition.has_values()) {
    if (condition.numel() == 0) return;
    fault(
        fmt::format("device_assert(\"{}\"): the condition was computed from loaded values, "
                    "which a timing-only run does not have; run without --timing-only",
                    message));
  }
  const auto m = condition.to_mask();
  const auto bad = std::find(m.begin(), m.end(), 0);
  if (bad == m.end()) return;
  const auto flat = bad - m.begin();
  const Shape& s = condition.shape();
  std::string at;
  for (std::int64_t rest = flat, i = s.rank - 1; i >= 0; --i) {
    const std::int64_t d = s[static_cast<int>(i)];
    at = std::to_string(d ? rest % d : 0) + (at.empty() ? "" : ", ") + at;
    rest = d ? rest / d : 0;
  }
  const auto& id = launch_.coords[program_].id;
  fault(
      fmt::format("device_assert failed: \"{}\" in program ({}, {}, {}) on {}: element ({}) "
                  "of the {} condition is false ({} of {} elements false)",
                  message, id[0], id[1], id[2], pe_.name, at, s.str(),
                  std::count(m.begin(), m.end(), 0), m.size()));
}

// ---- Memory -----------------------------------------------------------------------------------

namespace {

using Segment = detail::AccessSegment;

struct Layout {
  std::int64_t rows, cols, row_stride, col_stride;
};

// Fills `out` (cleared first) with the transfers of an access.
void segments(const Layout& l, Ptr base, std::uint32_t size, const std::vector<std::int32_t>* mask,
              std::vector<Segment>& out) {
  out.clear();
  auto add = [&](std::uint64_t addr, std::uint64_t tile_off) {
    if (!out.empty() && out.back().addr + out.back().bytes == addr &&
        out.back().tile_offset + out.back().bytes == tile_off) {
      out.back().bytes += size;
      return;
    }
    out.push_back({addr, size, tile_off});
  };
  if (!mask && l.col_stride == 1) {  // whole rows: one segment per row at most
    for (std::int64_t i = 0; i < l.rows; ++i) {
      const std::uint64_t addr = base.addr + static_cast<std::uint64_t>(i * l.row_stride) * size;
      const std::uint64_t off = static_cast<std::uint64_t>(i * l.cols) * size;
      const std::uint64_t bytes = static_cast<std::uint64_t>(l.cols) * size;
      if (!out.empty() && out.back().addr + out.back().bytes == addr &&
          out.back().tile_offset + out.back().bytes == off)
        out.back().bytes += bytes;
      else if (bytes > 0)
        out.push_back({addr, bytes, off});
    }
    return;
  }
  for (std::int64_t i = 0; i < l.rows; ++i)
    for (std::int64_t j = 0; j < l.cols; ++j) {
      const std::int64_t e = i * l.cols + j;
      if (mask && !(*mask)[static_cast<std::size_t>(e)]) continue;
      const std::uint64_t addr =
          base.addr + static_cast<std::uint64_t>(i * l.row_stride + j * l.col_stride) * size;
      if (l.col_stride != 1) {
        out.push_back({addr, size, static_cast<std::uint64_t>(e) * size});  // a gather
        continue;
      }
      add(addr, static_cast<std::uint64_t>(e) * size);
    }
}

}  // namespace

void Context::check_access(Ptr ptr, std::uint64_t bytes, DType dtype, const char* what) const {
  if (ptr.addr % dtype_size(dtype) != 0)
    fault(std::string(what) + " at " + hex_address(ptr.addr) +
          " is misaligned: " + std::string(dtype_name(dtype)) +
          " elements need addresses that are multiples of " + std::to_string(dtype_size(dtype)) +
          " bytes; check the byte offsets of the pointer "
          "arithmetic");
  try {
    launch_.sys.address_map().check_range(ptr.addr, bytes, what);
  } catch (const components::AddressError& e) {
    fault(std::string(e.what()) + "; check the offsets and shapes against the buffers allocated");
  }
  if (!launch_.allocations.contains(ptr.addr, bytes))
    fault(launch_.allocations.describe_miss(ptr.addr, bytes, what));
}

bool Context::plan_access(const char* what, Ptr ptr, const Shape& shape, DType dtype,
                          std::int64_t row_stride, std::int64_t col_stride, const Tile* mask,
                          std::int64_t plane_stride) {
  Layout l{shape.rows(), shape.cols(), row_stride ? row_stride : shape.cols(), col_stride};
  if (l.row_stride < 0 || l.col_stride < 1)
    fault(std::string(what) + ": strides must be positive (row_stride " +
          std::to_string(l.row_stride) + ", col_stride " + std::to_string(l.col_stride) + ")");
  if (plane_stride < 0 || (plane_stride != 0 && shape.rank != 3))
    fault(
        fmt::format("{}: plane_stride {} needs a 3D tile of planes 0 or more elements apart "
                    "(the shape is {})",
                    what, plane_stride, shape.str()));
  // Planes one after another are rows of one 2D layout; others are planned plane by plane.
  const std::int64_t planes =
      shape.rank == 3 && plane_stride != 0 && plane_stride != shape[1] * l.row_stride ? shape[0]
                                                                                      : 1;
  if (planes > 1) l.rows = shape[1];
  std::vector<std::int32_t> mask_values;
  if (mask) {
    if (!(mask->shape() == shape))
      fault(std::string(what) + ": the mask has shape " + mask->shape().str() + " but the tile " +
            shape.str() + "; make the mask of the tile's shape (reshape() or broadcast_to())");
    if (mask->has_values()) {
      mask_values = mask->to_mask();
    } else if (mask->numel() > 0) {
      // Timing-only runs keep index math only; a mask computed from loaded values would be
      // guessed, and which elements move is what the time depends on.
      fault(std::string(what) + " at " + hex_address(ptr.addr) +
            ": the mask was computed from loaded values, which a timing-only run does not have, "
            "so it cannot tell which elements move (and the time depends on it); run without "
            "--timing-only (SimOptions::timing_only), or build the mask from index math only "
            "(arange, program_id, constants)");
    }
  }
  const bool masked = !mask_values.empty();
  if (shape.numel() == 0) {
    segments_.clear();
    return masked;
  }
  // The whole access must be addressable before it is cut into transfers. One contiguous row
  // spans the tile's own bytes, which tile_bytes() bounded; strides need the check.
  const std::uint32_t size = dtype_size(dtype);
  if (l.rows > 1 || l.col_stride != 1 || planes > 1) {
    std::uint64_t last = 0, span = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(planes - 1),
                               static_cast<std::uint64_t>(plane_stride), &last) ||
        __builtin_add_overflow(
            last, static_cast<std::uint64_t>(l.rows - 1) * static_cast<std::uint64_t>(l.row_stride),
            &last) ||
        __builtin_add_overflow(
            last, static_cast<std::uint64_t>(l.cols - 1) * static_cast<std::uint64_t>(l.col_stride),
            &last) ||
        __builtin_mul_overflow(last + 1, std::uint64_t{size}, &span) || ptr.addr + span < ptr.addr)
        [[unlikely]]
      fault(std::string(what) + " of shape " + shape.str() + " at " + hex_address(ptr.addr) +
            " with row_stride " + std::to_string(l.row_stride) + " and col_stride " +
            std::to_string(l.col_stride) + " reaches past the end of the 64-bit address space");
  }
  if (planes == 1) {
    segments(l, ptr, size, masked ? &mask_values : nullptr, segments_);
  } else {
    const std::int64_t per_plane = l.rows * l.cols;
    std::vector<Segment> plane;
    std::vector<std::int32_t> plane_mask;
    segments_.clear();
    for (std::int64_t p = 0; p < planes; ++p) {
      if (masked)
        plane_mask.assign(mask_values.begin() + p * per_plane,
                          mask_values.begin() + (p + 1) * per_plane);
      segments(l, ptr + p * plane_stride * size, size, masked ? &plane_mask : nullptr, plane);
      for (Segment seg : plane) {
        seg.tile_offset += static_cast<std::uint64_t>(p * per_plane) * size;
        segments_.push_back(seg);
      }
    }
  }
  for (const auto& s : segments_) check_access(Ptr{s.addr}, s.bytes, dtype, what);
  return masked;
}

void Context::issue_copy(detail::Copy& c) {
  c.owner = this;
  c.memory = launch_.memory;
  c.start = launch_.sched.now();
  c.in_flight = c.segments.size();
  if (c.deferred) {
    const auto& at = *c.tile.data_->source;
    launch_.deferred->defer(c.tile,
                            detail::MatrixAt{at.addr, c.tile.shape().rows(), c.tile.shape().cols(),
                                             at.row_stride, c.tile.dtype()},
                            &c.dst);
  }
  const bool log_async = c.async && launch_.log;
  if (log_async) c.logged_op = launch_.log->begin_async();
  c.flow = launch_.begin_trace_flow(pe_);
  for (const auto& s : c.segments) {
    c.bytes += s.bytes;
    if (log_async)
      launch_.log->record_copy(program_, epoch_, c.logged_op, s.addr, s.addr + s.bytes, c.write,
                               c.records);
    else if (launch_.log)
      launch_.log->record(program_, epoch_, s.addr, s.addr + s.bytes, c.write);
    const detail::AccessSegment* seg = &s;
    detail::Copy* copy = &c;
    if (c.write)
      launch_.sys.network().write(pe_.hw.global_pe(), s.addr, s.bytes, [copy, seg] {
        if (copy->src && copy->memory)
          copy->memory->write(seg->addr, copy->src + seg->tile_offset, seg->bytes);
        if (--copy->in_flight == 0) copy->owner->copy_landed(*copy);
      });
    else
      launch_.sys.network().read(pe_.hw.global_pe(), s.addr, s.bytes, [copy, seg] {
        if (copy->dst) copy->memory->read(seg->addr, copy->dst + seg->tile_offset, seg->bytes);
        if (--copy->in_flight == 0) copy->owner->copy_landed(*copy);
      });
  }
  launch_.end_trace_flow(c.flow);
  if (c.segments.empty()) copy_landed(c);
}

void Context::copy_landed(detail::Copy& c) {
  if (c.deferred) launch_.deferred->landed(c.tile);
  (c.write ? pe_.hw.counters().bytes_stored : pe_.hw.counters().bytes_loaded) += c.bytes;
  c.done.fire();
  if (!c.async) return;  // the blocked program records the rest
  if (c.lane >= 0) {
    const Shape& shape = c.tile.shape();
    launch_.trace_copy(
        pe_, c.lane, c.what, c.start, launch_.sched.now(),
        fmt::format(R"({{"bytes":{},"address":"{}","segments":{},"shape":{},"dtype":"{}"}})",
                    c.bytes, hex_address(c.segments.empty() ? 0 : c.segments[0].addr),
                    c.segments.size(), shape.str(), dtype_name(c.tile.dtype())),
        c.flow);
    launch_.release_copy_lane(pe_, c.lane);
  }
  // Off the list of copies in flight (the last holder of a copy whose handle went: last step).
  auto& list = copies_;
  const std::size_t i = c.index;
  if (i + 1 != list.size()) {
    list[i] = std::move(list.back());
    list[i]->index = i;
  }
  list.pop_back();
}

void Context::wait_copy(detail::Copy& c, const char* what) {
  const emu::Tick start = launch_.sched.now();
  c.done.wait();
  const emu::Tick end = launch_.sched.now();
  pe_.hw.counters().memory_wait_ps += end - start;
  if (c.async) {
    if (launch_.log && c.logged_op) launch_.log->copy_waited(c.records, program_, epoch_);
    if (end > start && launch_.tracing(pe_))
      launch_.trace_slice(pe_, false, what, start, end, fmt::format(R"({{"copy":"{}"}})", c.what));
    return;
  }
  if (launch_.trace_calls) [[unlikely]]
    emu::log().trace("{}: {} of {} bytes in {} transfer(s) took {}", pe_.name, c.what, c.bytes,
                     c.segments.size(), emu::format_time(end - c.start));
  if (launch_.tracing(pe_))
    launch_.trace_slice(
        pe_, false, c.what, c.start, end,
        fmt::format(R"({{"bytes":{},"address":"{}","segments":{},"shape":{},"dtype":"{}"}})",
                    c.bytes, hex_address(c.segments.empty() ? 0 : c.segments[0].addr),
                    c.segments.size(), c.tile.shape().str(), dtype_name(c.tile.dtype())),
        c.flow);
}

void Context::memory_op_done(const char* what, emu::Tick start, std::uint64_t flow,
                             std::uint64_t bytes, std::size_t parts, const char* part_name,
                             const char* parts_key, const Shape& shape, const char* type_key,
                             std::string_view type) {
  pe_.hw.counters().memory_wait_ps += launch_.sched.now() - start;
  if (launch_.trace_calls) [[unlikely]]
    emu::log().trace("{}: {} of {} bytes in {} {}(s) took {}", pe_.name, what, bytes, parts,
                     part_name, emu::format_time(launch_.sched.now() - start));
  if (launch_.tracing(pe_))
    launch_.trace_slice(
        pe_, false, what, start, launch_.sched.now(),
        fmt::format(R"({{"bytes":{},"address":"{}","{}":{},"shape":{},"{}":"{}"}})", bytes,
                    segments_.empty() ? hex_address(0) : hex_address(segments_[0].addr), parts_key,
                    parts, shape.str(), type_key, type),
        flow);
}

void Context::prepare_load(detail::Copy& c, Ptr ptr, Shape shape, DType dtype, const LoadOptions& o,
                           const char* what) {
  sync();
  if (o.mask) check_fill_value("load's `other`", o.other, dtype);
  const std::uint64_t bytes = tile_bytes(what, shape, dtype);
  const bool whole_rows =
      !o.mask && o.col_stride == 1 &&
      (o.plane_stride == 0 ||
       (shape.rank == 3 && o.plane_stride == shape[1] * (o.row_stride ? o.row_stride : shape[2])));
  // A large load of whole rows copies its values when they are first used (deferred_loads.hpp).
  c.deferred = whole_rows && launch_.deferred && bytes >= detail::DeferredLoads::kMinBytes;
  // The tile first: a shape that SRAM cannot hold is refused before its transfers are planned.
  // Timing-only: values unknown.
  c.tile = make_tile(shape, dtype, bytes, /*values=*/!timing_only() && !c.deferred);
  Tile& t = c.tile;
  const bool masked =
      plan_access(what, ptr, shape, dtype, o.row_stride, o.col_stride, o.mask, o.plane_stride);
  if (!timing_only()) {
    if (masked)  // masked-off elements read as `other`
      fill_value(t.data_->bytes.data(), shape.numel(), dtype, o.other);
    if (whole_rows)
      t.data_->source = Tile::Source{ptr.addr, o.row_stride ? o.row_stride : shape.cols(),
                                     launch_.memory->write_generation()};
  }
  c.dst = t.data_->bytes.empty() ? nullptr : t.data_->bytes.data();
}

void Context::prepare_store(detail::Copy& c, Ptr ptr, const Tile& tile, const StoreOptions& o,
                            const char* what) {
  sync();
  if (!tile.valid()) fault(std::string(what) + ": the tile is empty (made by Tile())");
  if (&tile.context() != this) fault(std::string(what) + ": the tile belongs to another program");
  plan_access(what, ptr, tile.shape(), tile.dtype(), o.row_stride, o.col_stride, o.mask,
              o.plane_stride);
  c.tile = tile;
  c.src = tile.has_values() ? tile.raw() : nullptr;
}

Tile Context::load(Ptr ptr, Shape shape, DType dtype, const LoadOptions& o) {
  detail::Copy c(launch_.sched, "load", false);
  prepare_load(c, ptr, shape, dtype, o, "load");
  c.segments.swap(segments_);  // the scratch, lent for the call
  issue_copy(c);
  wait_copy(c, "load");
  c.segments.swap(segments_);
  return std::move(c.tile);
}

Ref Context::ref(Ptr ptr, Shape shape, DType dtype, std::int64_t row_stride) {
  tile_bytes("ref", shape, dtype);  // no negative dimension, no more than 2^63 bytes
  const std::int64_t rs = row_stride ? row_stride : shape.cols();
  if (rs < shape.cols())
    fault("ref: row_stride " + std::to_string(rs) + " is smaller than a row of " +
          std::to_string(shape.cols()) + " elements");
  std::uint64_t span = 0;
  if (shape.numel() != 0 &&
      (__builtin_mul_overflow(static_cast<std::uint64_t>(shape.rows() - 1),
                              static_cast<std::uint64_t>(rs), &span) ||
       __builtin_add_overflow(span, static_cast<std::uint64_t>(shape.cols()), &span) ||
       __builtin_mul_overflow(span, std::uint64_t{dtype_size(dtype)}, &span)))
    fault("ref of shape " + shape.str() + " with row_stride " + std::to_string(rs) + " at " +
          hex_address(ptr.addr) + " spans more than 2^64 bytes");
  check_access(ptr, span, dtype, "ref");
  return Ref{ptr, shape, dtype, rs};
}

void Context::store(Ptr ptr, const Tile& tile, const StoreOptions& o) {
  detail::Copy c(launch_.sched, "store", true);
  prepare_store(c, ptr, tile, o, "store");
  c.segments.swap(segments_);
  issue_copy(c);
  wait_copy(c, "store");
  c.segments.swap(segments_);
}

// ---- Asynchronous copies ------------------------------------------------------------------------

std::shared_ptr<detail::Copy> Context::new_async(bool write, const char* what) {
  auto c = std::make_shared<detail::Copy>(launch_.sched, what, write);
  c->async = true;
  return c;
}

void Context::issue_async(const std::shared_ptr<detail::Copy>& c) {
  c->segments = segments_;  // planned by prepare_load / prepare_store
  c->index = copies_.size();
  copies_.push_back(c);
  c->lane = launch_.tracing(pe_) ? launch_.take_copy_lane(pe_) : -1;
  issue_copy(*c);
}

LoadHandle Context::load_async(Ptr ptr, Shape shape, DType dtype, const LoadOptions& o) {
  auto c = new_async(false, "load_async");
  prepare_load(*c, ptr, shape, dtype, o, "load_async");
  issue_async(c);
  LoadHandle h;
  h.state_ = std::move(c);
  return h;
}

LoadHandle Context::load_async(const Ref& r) {
  return load_async(r.ptr, r.shape, r.dtype, {.row_stride = r.row_stride});
}

StoreHandle Context::store_async(Ptr ptr, const Tile& tile, const StoreOptions& o) {
  auto c = new_async(true, "store_async");
  prepare_store(*c, ptr, tile, o, "store_async");
  issue_async(c);
  StoreHandle h;
  h.state_ = std::move(c);
  return h;
}

void Context::require_this_launch(const Tile& t, const char* handle, const char* call,
                                  const char* why) const {
  if (t.data_->launch != pe_.hw.sram().tenant)
    fault(fmt::format("wait on {}: the {} comes from a {} of an earlier launch; {}", pe_.name,
                      handle, call, why));
}

Tile Context::wait(LoadHandle& handle) {
  sync();
  if (!handle.valid()) fault("wait on " + pe_.name + ": the LoadHandle came from no load_async");
  require_this_launch(handle.state_->tile, "LoadHandle", "load_async",
                      "a copy lands within its launch");
  if (handle.state_->owner != this)
    fault("wait on " + pe_.name + ": the LoadHandle belongs to another program's load_async");
  wait_copy(*handle.state_, "wait load_async");
  return handle.state_->tile;
}

void Context::wait(StoreHandle& handle) {
  sync();
  if (!handle.valid()) fault("wait on " + pe_.name + ": the StoreHandle came from no store_async");
  require_this_launch(handle.state_->tile, "StoreHandle", "store_async",
                      "a copy lands within its launch");
  if (handle.state_->owner != this)
    fault("wait on " + pe_.name + ": the StoreHandle belongs to another program's store_async");
  wait_copy(*handle.state_, "wait store_async");
}

void Context::finish_copies() {
  while (!copies_.empty()) {
    const std::shared_ptr<detail::Copy> c = copies_.back();  // it leaves the list as it lands
    wait_copy(*c, "copies in flight");
  }
}

// ---- Composite operations
// ------------------------------------------------------------------------

std::shared_ptr<HandleState> Context::issue(Op op, const Operand& a, const Operand& b,
                                            const detail::GemmOut& out,
                                            const CompositeOptions& options) {
  sync();
  if (op != Op::gemm) fault("composite: unknown operation");
  auto state = detail::start_gemm(launch_, pe_, *this, program_, epoch_, a, b, out, options);
  if (launch_.trace_calls)
    emu::log().trace(
        "{}: composite gemm issued, output {}", pe_.name,
        out.to_tile ? std::string("to an SRAM tile") : "at " + hex_address(out.ptr.addr));
  return state;
}

Handle Context::composite(Op op, const Operand& a, const Operand& b, Ptr out,
                          const CompositeOptions& options) {
  Handle h;
  h.state_ = issue(op, a, b, detail::GemmOut{.ptr = out}, options);
  return h;
}

TileHandle Context::composite(Op op, const Operand& a, const Operand& b, ToTile,
                              const CompositeOptions& options) {
  TileHandle h;
  h.handle_.state_ = issue(op, a, b, detail::GemmOut{.to_tile = true}, options);
  return h;
}

TileHandle Context::composite(Op op, const Operand& a, const Operand& b, const Tile& acc,
                              const CompositeOptions& options) {
  TileHandle h;
  h.handle_.state_ = issue(op, a, b, detail::GemmOut{.to_tile = true, .acc = &acc}, options);
  return h;
}

TileHandle Context::composite(Op op, const Operand& a, const Operand& b, const TileHandle& acc,
                              const CompositeOptions& options) {
  if (!acc.valid())
    fault("composite: the accumulator handle was not returned by a composite to a tile");
  TileHandle h;
  h.handle_.state_ =
      issue(op, a, b, detail::GemmOut{.to_tile = true, .acc_job = acc.handle_.state_}, options);
  return h;
}

void Context::wait(Handle& handle) {
  sync();
  if (!handle.valid()) fault("wait: the handle was not returned by composite()");
  detail::check_handle_owner(*this, pe_.hw.sram().tenant, *handle.state_);
  const emu::Tick start = launch_.sched.now();
  detail::wait_gemm(launch_, *handle.state_, program_, epoch_);
  pe_.hw.counters().gemm_wait_ps += launch_.sched.now() - start;
  if (launch_.trace_calls)
    emu::log().trace("{}: waited {} for a composite", pe_.name,
                     emu::format_time(launch_.sched.now() - start));
}

Tile Context::wait(TileHandle& handle) {
  if (handle.valid()) {
    detail::check_handle_owner(*this, pe_.hw.sram().tenant, *handle.handle_.state_);
    detail::check_result_handle(*this, *handle.handle_.state_);
  }
  wait(handle.handle_);
  return detail::gemm_result(*handle.handle_.state_);
}

void Context::barrier(Scope scope) {
  sync();
  const int level = static_cast<int>(scope);
  if (level < 0 || level > 2)
    fault("barrier: unknown scope " + std::to_string(level) +
          "; use Scope::cube, Scope::sip or Scope::all");
  require_one_wave("barrier");
  const auto& me = launch_.coords[program_].id;
  const std::int64_t per_cube = launch_.grid[0], per_sip = per_cube * launch_.grid[1];
  const std::int64_t group = launch_.barrier_group(level, launch_.coords[program_]);
  std::size_t members = launch_.coords.size();
  if (scope == Scope::cube)
    members = static_cast<std::size_t>(per_cube);
  else if (scope == Scope::sip)
    members = static_cast<std::size_t>(per_sip);
  const std::uint32_t generation = scoped_barriers_[level]++;
  const std::string name =
      scope == Scope::all ? "barrier " + std::to_string(generation)
      : scope == Scope::cube
          ? fmt::format("barrier(cube) {} of cube ({}, {})", generation, me[1], me[2])
          : fmt::format("barrier(sip) {} of SIP {}", generation, me[2]);
  emu::Completion& c = launch_.barrier(level, group, generation, members, name, program_);
  if (launch_.trace_calls) emu::log().trace("{}: arrives at {}", pe_.name, name);
  ++epoch_;
  if (launch_.log)
    launch_.log->barrier(program_, level, group, generation, static_cast<std::uint32_t>(members));
  const emu::Tick arrived = launch_.sched.now();
  c.arrive();
  c.wait();
  if (launch_.log) launch_.log->returned(program_);
  if (launch_.sched.now() > arrived && launch_.tracing(pe_))
    launch_.trace_slice(pe_, false, "barrier", arrived, launch_.sched.now(),
                        fmt::format(R"({{"barrier":"{}","members":{}}})", name, members));
}

// ---- Atomics ----------------------------------------------------------------------------------

void Context::atomic_segments(AtomicOp op, int type, const Shape& shape, const std::byte* operand,
                              const std::byte* compare, std::byte* old) {
  const char* what = detail::atomic_op_name(op);
  const emu::Tick start = launch_.sched.now();
  // One request per run of words on one cube and channel, at most a packet.
  struct Piece {
    std::uint64_t addr, bytes, tile_offset;
  };
  std::vector<Piece> pieces;
  const auto& map = launch_.sys.address_map();
  const std::uint64_t packet = launch_.sys.config().cube.noc.packet_bytes;
  std::uint64_t total = 0;
  for (const auto& s : segments_) {
    total += s.bytes;
    if (launch_.log) launch_.log->record(program_, epoch_, s.addr, s.addr + s.bytes, true, true);
    map.for_each_piece(s.addr, s.bytes, packet,
                       [&](std::uint64_t addr, components::Location, std::uint64_t len) {
                         pieces.push_back({addr, len, s.tile_offset + (addr - s.addr)});
                       });
  }
  emu::Completion done(launch_.sched, what, std::max<std::size_t>(pieces.size(), 1));
  const std::uint64_t flow = launch_.begin_trace_flow(pe_);
  for (const Piece& p : pieces)
    launch_.atomics->issue(pe_.hw.global_pe(), op, static_cast<detail::AtomicType>(type), p.addr,
                           p.bytes, operand ? operand + p.tile_offset : nullptr,
                           compare ? compare + p.tile_offset : nullptr,
                           old ? old + p.tile_offset : nullptr, operand ? launch_.memory : nullptr,
                           [&done] { done.arrive(); });
  launch_.end_trace_flow(flow);
  if (pieces.empty()) done.arrive();
  done.wait();
  memory_op_done(what, start, flow, total, pieces.size(), "request", "requests", shape, "type",
                 detail::atomic_type_name(static_cast<detail::AtomicType>(type)));
}

Tile Context::atomic_tile(AtomicOp op, Ptr ptr, const Tile* compare, const Tile& values,
                          const AtomicOptions& o) {
  sync();
  const char* what = detail::atomic_op_name(op);
  if (!values.valid()) fault(std::string(what) + ": the tile of values is empty");
  if (&values.context() != this) fault(std::string(what) + ": the tile belongs to another program");
  if (values.dtype() != DType::f32 && values.dtype() != DType::i32 && values.dtype() != DType::i64)
    fault(std::string(what) + ": a " + std::string(dtype_name(values.dtype())) +
          " tile; atomics work on f32, i32 and i64 words: convert the tile with .to(DType::f32)");
  if (compare) {
    if (!compare->valid() || &compare->context() != this)
      fault(std::string(what) + ": the compare tile is empty or belongs to another program");
    if (compare->shape() != values.shape() || compare->dtype() != values.dtype())
      fault(std::string(what) + ": the compare tile is " + compare->shape().str() + " " +
            std::string(dtype_name(compare->dtype())) + " but the values are " +
            values.shape().str() + " " + std::string(dtype_name(values.dtype())) +
            "; they must match element for element");
  }
  const Shape shape = values.shape();
  const DType dtype = values.dtype();
  Tile old = make_tile(shape, dtype, /*values=*/values.has_values());
  const bool masked = plan_access(what, ptr, shape, dtype, o.row_stride, o.col_stride, o.mask);
  if (masked && old.has_values()) std::memset(old.data_->bytes.data(), 0, old.bytes());
  const std::byte* operand = values.has_values() ? values.raw() : nullptr;
  const std::byte* cmp = compare && compare->has_values() ? compare->raw() : nullptr;
  if (compare && !cmp) operand = nullptr;  // values unknown: time only
  atomic_segments(op,
                  dtype == DType::f32   ? 0
                  : dtype == DType::i32 ? 1
                                        : 2,
                  shape, operand, cmp, old.has_values() ? old.data_->bytes.data() : nullptr);
  return old;
}

Tile Context::atomic_add(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  return atomic_tile(AtomicOp::add, ptr, nullptr, values, o);
}
Tile Context::atomic_max(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  return atomic_tile(AtomicOp::max, ptr, nullptr, values, o);
}
Tile Context::atomic_min(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  return atomic_tile(AtomicOp::min, ptr, nullptr, values, o);
}
Tile Context::atomic_xchg(Ptr ptr, const Tile& values, const AtomicOptions& o) {
  return atomic_tile(AtomicOp::xchg, ptr, nullptr, values, o);
}
Tile Context::atomic_cas(Ptr ptr, const Tile& compare, const Tile& values, const AtomicOptions& o) {
  return atomic_tile(AtomicOp::cas, ptr, &compare, values, o);
}

std::uint64_t Context::atomic_bits(AtomicOp op, Ptr ptr, int type, std::uint64_t compare,
                                   std::uint64_t value) {
  sync();
  const char* what = detail::atomic_op_name(op);
  const auto t = static_cast<detail::AtomicType>(type);
  const std::uint32_t size = detail::atomic_size(t);
  if (ptr.addr % size != 0)
    fault(std::string(what) + " at " + hex_address(ptr.addr) + " is misaligned: " +
          detail::atomic_type_name(t) + " words need addresses that are multiples of " +
          std::to_string(size) + " bytes; check the byte offsets of the pointer arithmetic");
  try {
    launch_.sys.address_map().check_range(ptr.addr, size, what);
  } catch (const components::AddressError& e) {
    fault(std::string(e.what()) + "; atomics work on words of HBM buffers allocated by the host");
  }
  if (!launch_.allocations.contains(ptr.addr, size))
    fault(launch_.allocations.describe_miss(ptr.addr, size, what));
  segments_.assign(1, detail::AccessSegment{ptr.addr, size, 0});
  std::uint64_t old = 0;
  // Values are always known for one word (a timing-only run keeps them in a shadow).
  atomic_segments(op, type, Shape{1}, reinterpret_cast<const std::byte*>(&value),
                  op == AtomicOp::cas ? reinterpret_cast<const std::byte*>(&compare) : nullptr,
                  reinterpret_cast<std::byte*>(&old));
  return old;
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

void Context::require_one_wave(const std::string& what) const {
  if (launch_.waves <= 1) return;
  fault(fmt::format(
      "{} on {}: this launch runs its {} programs in {} waves on {} PEs, so programs of later "
      "waves start only as earlier ones end and cannot be waited for; barriers and messages "
      "need every program running at once: launch at most {} programs (a grid that fits one "
      "wave), or coordinate through memory and atomics",
      what, pe_.name, launch_.coords.size(), launch_.waves, launch_.pes_used, launch_.pes_used));
}

void Context::send(const Peer& dst, const Tile& tile) {
  sync();
  if (launch_.waves > 1) require_one_wave("send(" + dst.str() + ")");  // names built only then
  if (!tile.valid()) fault("send(" + dst.str() + ") on " + pe_.name + ": the tile is empty");
  if (&tile.context() != this)
    fault("send(" + dst.str() + ") on " + pe_.name + ": the tile belongs to another program");
  detail::Messages& m = *launch_.messages;
  const std::uint32_t to = m.resolve(*this, program_, dst, "send");
  if (launch_.trace_calls)
    emu::log().trace("{}: send {} bytes to {}", pe_.name, tile.bytes(), dst.str());
  const emu::Tick t0 = launch_.sched.now();
  if (launch_.log) launch_.log->sent(program_, to);
  m.send(*this, program_, to, tile, launch_.tracing(pe_) ? &launch_ : nullptr);
  pe_.hw.counters().send_wait_ps += launch_.sched.now() - t0;
  // A send takes time on the program's own track only while it waits for a free slot.
  // (its arguments are built only then: most sends never wait).
  if (launch_.sched.now() > t0 && launch_.tracing(pe_))
    launch_.trace_slice(pe_, false, "send (waiting for a slot)", t0, launch_.sched.now(),
                        fmt::format(R"({{"to":"{}","bytes":{}}})", m.pe_name(to), tile.bytes()));
  ++pe_.hw.counters().messages_sent;
  pe_.hw.counters().bytes_sent += tile.bytes();
}

Tile Context::recv(const Peer& src, Shape shape, DType dtype) {
  RecvHandle h = recv_async(src, shape, dtype);
  return wait_recv(h, "recv");
}

RecvHandle Context::recv_async(const Peer& src, Shape shape, DType dtype) {
  sync();
  if (launch_.waves > 1) require_one_wave("recv(" + src.str() + ")");
  detail::Messages& m = *launch_.messages;
  const std::uint32_t from = m.resolve(*this, program_, src, "recv");
  // Its SRAM is taken now, as the DMA writes into it.
  Tile t = make_tile(shape, dtype, tile_bytes("recv", shape, dtype), true);
  RecvHandle h;
  h.state_ = m.recv(*this, program_, from, std::move(t));
  h.state_->owner = program_;
  if (launch_.log) launch_.log->recv_posted(program_, from);
  return h;
}

Tile Context::wait(RecvHandle& handle) {
  return wait_recv(handle, "recv_async wait");
}

Tile Context::wait_recv(RecvHandle& handle, const char* what) {
  sync();
  if (!handle.valid()) fault("wait on " + pe_.name + ": the RecvHandle came from no recv_async");
  detail::Receipt& r = *handle.state_;
  require_this_launch(r.tile, "RecvHandle", "recv_async",
                      "its message was received (or missed) in that launch");
  if (r.owner != program_)
    fault("wait on " + pe_.name + ": the RecvHandle belongs to another program's recv_async");
  if (r.taken) return r.tile;  // waited on before: counted and logged then
  const emu::Tick t0 = launch_.sched.now();
  if (launch_.log) launch_.log->recv_done(program_, r.from, r.seq);
  launch_.messages->wait(program_, r);
  if (launch_.log) launch_.log->returned(program_);
  pe_.hw.counters().recv_wait_ps += launch_.sched.now() - t0;
  if (!r.error.empty()) fault("recv on " + pe_.name + ": " + r.error);
  Tile t = r.tile;
  if (launch_.sched.now() > t0 && launch_.tracing(pe_))
    launch_.trace_slice(pe_, false, what, t0, launch_.sched.now(),
                        fmt::format(R"({{"from":"{}","bytes":{},"channel":"{}","seq":{}}})",
                                    launch_.messages->pe_name(r.from), t.bytes(),
                                    launch_.messages->channel_name(r.channel), r.seq));
  ++pe_.hw.counters().messages_received;
  pe_.hw.counters().bytes_received += t.bytes();
  if (!r.values.empty() && t.data_ && !t.data_->bytes.empty())
    std::memcpy(t.data_->bytes.data(), r.values.data(),
                std::min<std::size_t>(r.values.size(), t.data_->bytes.size()));
  r.values.clear();
  r.taken = true;
  return t;
}

}  // namespace cubesim::tl
