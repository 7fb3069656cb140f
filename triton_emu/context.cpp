#include "triton_emu/context.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <vector>

#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/gemm_engine.hpp"
#include "triton_emu/launch_state.hpp"

namespace cubesim::tl {

using components::hex_address;

Context::Context(detail::LaunchState& launch, detail::PeState& pe, std::uint32_t program)
    : launch_(launch), pe_(pe), program_(program) {}

// ---- Where the program runs -----------------------------------------------------------------

std::int64_t Context::program_id(int axis) const {
  if (axis < 0 || axis > 2)
    fault("program_id(" + std::to_string(axis) +
          "): no such axis; valid axes are 0 (PE within its cube), 1 (cube within its SIP) and "
          "2 (SIP)");
  return launch_.coords[program_].id[axis];
}

std::int64_t Context::num_programs(int axis) const {
  if (axis < 0 || axis > 2)
    fault("num_programs(" + std::to_string(axis) +
          "): no such axis; valid axes are 0 (PEs per cube), 1 (cubes per SIP) and 2 (SIPs)");
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
  return pe_.sram->capacity - pe_.sram->used;
}

void Context::fault(const std::string& what) const {
  throw KernelFault(what);
}

// ---- Vector unit ------------------------------------------------------------------------------

void Context::charge_vector(std::uint64_t element_ops) {
  const std::uint64_t cycles = (element_ops + launch_.vector_lanes - 1) / launch_.vector_lanes +
                               launch_.vector_latency_cycles;
  pending_ += launch_.sys.config().pe.clock.cycles_to_ticks(emu::Cycles{cycles});
}

void Context::sync() {
  if (pending_ == 0) return;
  const emu::Tick t = pending_;
  const emu::Tick start = launch_.sched.now();
  pending_ = 0;
  pe_.vector_busy += t;
  launch_.sched.wait_for(t);
  launch_.trace_slice(pe_, false, "vector", start, start + t);
}

Tile Context::make_tile(Shape shape, DType dtype, bool values) {
  if (shape.dims[0] < 0 || (shape.rank == 2 && shape.dims[1] < 0))
    fault("tile shape " + shape.str() + " has a negative dimension");
  const std::uint64_t bytes = static_cast<std::uint64_t>(shape.numel()) * dtype_size(dtype);
  auto& sram = *pe_.sram;
  if (bytes > sram.capacity - sram.used)
    fault("SRAM overflow on " + pe_.name + ": a " + std::string(dtype_name(dtype)) +
          " tile of shape " + shape.str() + " needs " + std::to_string(bytes) + " bytes but only " +
          std::to_string(sram.capacity - sram.used) + " of " + std::to_string(sram.capacity) +
          " bytes are free; work on smaller blocks, let tiles go out of scope, or raise "
          "system.pe.sram_KiB");
  Tile t;
  t.ctx_ = this;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.data_ = new Tile::Data;  // default-initialised: the values are written by the caller
  t.data_->sram = pe_.sram;
  t.data_->held = bytes;
  sram.used += bytes;
  sram.peak = std::max(sram.peak, sram.used);
  // Timing-only runs keep values of i32 tiles only (index math and masks; see tile.cpp).
  if (values && (!timing_only() || dtype == DType::i32)) t.data_->bytes.assign_uninitialised(bytes);
  return t;
}

Tile Context::arange(std::int64_t start, std::int64_t end) {
  if (end < start)
    fault("arange(" + std::to_string(start) + ", " + std::to_string(end) + "): end < start");
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
  std::byte one[4];
  switch (dtype) {
    case DType::f16: {
      const auto h = Eigen::half(static_cast<float>(value));
      std::memcpy(one, &h, 2);
      break;
    }
    case DType::bf16: {
      const auto h = Eigen::bfloat16(static_cast<float>(value));
      std::memcpy(one, &h, 2);
      break;
    }
    case DType::f32: {
      const auto f = static_cast<float>(value);
      std::memcpy(one, &f, 4);
      break;
    }
    case DType::i32: {
      const auto i = static_cast<std::int32_t>(value);
      std::memcpy(one, &i, 4);
      break;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(p + i * size, one, size);
}
}  // namespace

Tile Context::full(Shape shape, double value, DType dtype) {
  Tile t = make_tile(shape, dtype);
  charge_vector(static_cast<std::uint64_t>(shape.numel()));
  if (!t.data_->bytes.empty()) fill_value(t.data_->bytes.data(), shape.numel(), dtype, value);
  return t;
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
}

bool Context::plan_access(const char* what, Ptr ptr, const Shape& shape, DType dtype,
                          std::int64_t row_stride, std::int64_t col_stride, const Tile* mask) {
  const Layout l{shape.rows(), shape.cols(), row_stride ? row_stride : shape.cols(), col_stride};
  if (l.row_stride < 0 || l.col_stride < 1)
    fault(std::string(what) + ": strides must be positive (row_stride " +
          std::to_string(l.row_stride) + ", col_stride " + std::to_string(l.col_stride) + ")");
  std::vector<std::int32_t> mask_values;
  if (mask) {
    if (mask->numel() != shape.numel())
      fault(std::string(what) + ": the mask has shape " + mask->shape().str() + " but the tile " +
            shape.str());
    if (mask->has_values()) mask_values = mask->to_i32();
  }
  const bool masked = !mask_values.empty();
  segments(l, ptr, dtype_size(dtype), masked ? &mask_values : nullptr, segments_);
  for (const auto& s : segments_) check_access(Ptr{s.addr}, s.bytes, dtype, what);
  return masked;
}

void Context::move_segments(bool write, const Shape& shape, DType dtype, const std::byte* src,
                            std::byte* dst, Tile* deferred) {
  const char* what = write ? "store" : "load";
  const emu::Tick start = launch_.sched.now();
  // What the transfer callbacks need, on this fiber's stack (it outlives them: we wait).
  struct Pending {
    emu::Completion done;
    components::SparseMemory* memory;
    const std::byte* src;  // store: the tile's values; nullptr when there are none
    std::byte* dst;        // load: the tile's storage; nullptr in timing-only runs
  } pending{emu::Completion(launch_.sched, what, std::max<std::size_t>(segments_.size(), 1)),
            launch_.sys.memory(), src, dst};
  if (deferred) {
    const auto& at = *deferred->data_->source;
    launch_.deferred->defer(
        *deferred,
        detail::MatrixAt{at.addr, deferred->shape().rows(), deferred->shape().cols(), at.row_stride,
                         deferred->dtype()},
        &pending.dst);
  }
  std::uint64_t total = 0;
  const std::uint64_t flow = launch_.begin_trace_flow(pe_);
  for (const auto& s : segments_) {
    total += s.bytes;
    if (launch_.log) launch_.log->record(program_, epoch_, s.addr, s.addr + s.bytes, write);
    const Segment* seg = &s;
    if (write)
      launch_.sys.fabric().write(pe_.global_pe, s.addr, s.bytes, [&pending, seg] {
        if (pending.src && pending.memory)
          pending.memory->write(seg->addr, pending.src + seg->tile_offset, seg->bytes);
        pending.done.arrive();
      });
    else
      launch_.sys.fabric().read(pe_.global_pe, s.addr, s.bytes, [&pending, seg] {
        if (pending.dst)
          pending.memory->read(seg->addr, pending.dst + seg->tile_offset, seg->bytes);
        pending.done.arrive();
      });
  }
  launch_.end_trace_flow(flow);
  if (segments_.empty()) pending.done.arrive();
  pending.done.wait();
  if (deferred) launch_.deferred->landed(*deferred);
  (write ? pe_.bytes_stored : pe_.bytes_loaded) += total;
  pe_.memory_wait += launch_.sched.now() - start;
  if (launch_.tracing(pe_))
    launch_.trace_slice(
        pe_, false, what, start, launch_.sched.now(),
        fmt::format(R"({{"bytes":{},"address":"{}","segments":{},"shape":{},"dtype":"{}"}})", total,
                    segments_.empty() ? hex_address(0) : hex_address(segments_[0].addr),
                    segments_.size(), shape.str(), dtype_name(dtype)),
        flow);
}

Tile Context::load(Ptr ptr, Shape shape, DType dtype, const LoadOptions& o) {
  sync();
  const bool masked = plan_access("load", ptr, shape, dtype, o.row_stride, o.col_stride, o.mask);
  const bool whole_rows = !o.mask && o.col_stride == 1;
  // A large load of whole rows copies its values when they are first used (deferred_loads.hpp).
  const bool defer = whole_rows && launch_.deferred &&
                     static_cast<std::uint64_t>(shape.numel()) * dtype_size(dtype) >=
                         detail::DeferredLoads::kMinBytes;
  // Timing-only: values unknown.
  Tile t = make_tile(shape, dtype, /*values=*/!timing_only() && !defer);
  if (!timing_only()) {
    if (masked)  // masked-off elements read as `other`
      fill_value(t.data_->bytes.data(), shape.numel(), dtype, o.other);
    if (whole_rows)
      t.data_->source = Tile::Source{ptr.addr, o.row_stride ? o.row_stride : shape.cols(),
                                     launch_.sys.memory()->write_generation()};
  }
  move_segments(false, shape, dtype, nullptr,
                t.data_->bytes.empty() ? nullptr : t.data_->bytes.data(), defer ? &t : nullptr);
  return t;
}

Ref Context::ref(Ptr ptr, Shape shape, DType dtype, std::int64_t row_stride) {
  const std::int64_t rs = row_stride ? row_stride : shape.cols();
  if (rs < shape.cols())
    fault("ref: row_stride " + std::to_string(rs) + " is smaller than a row of " +
          std::to_string(shape.cols()) + " elements");
  const std::uint64_t span =
      shape.numel() == 0
          ? 0
          : static_cast<std::uint64_t>((shape.rows() - 1) * rs + shape.cols()) * dtype_size(dtype);
  check_access(ptr, span, dtype, "ref");
  return Ref{ptr, shape, dtype, rs};
}

void Context::store(Ptr ptr, const Tile& tile, const StoreOptions& o) {
  sync();
  if (tile.ctx_ != this) fault("store: the tile belongs to another program");
  plan_access("store", ptr, tile.shape(), tile.dtype(), o.row_stride, o.col_stride, o.mask);
  move_segments(true, tile.shape(), tile.dtype(), tile.has_values() ? tile.raw() : nullptr,
                nullptr);
}

// ---- Composite operations
// ------------------------------------------------------------------------

Handle Context::composite(Op op, const Operand& a, const Operand& b, Ptr out,
                          const CompositeOptions& options) {
  sync();
  if (op != Op::gemm) fault("composite: unknown operation");
  Handle h;
  h.state_ = detail::start_gemm(launch_, pe_, *this, program_, epoch_, a, b, out, options);
  return h;
}

void Context::wait(Handle& handle) {
  sync();
  if (!handle.valid()) fault("wait: the handle was not returned by composite()");
  const emu::Tick start = launch_.sched.now();
  detail::wait_gemm(*handle.state_);
  pe_.gemm_wait += launch_.sched.now() - start;
}

void Context::barrier() {
  sync();
  emu::Completion& c = launch_.barrier(epoch_);
  ++epoch_;
  c.arrive();
  c.wait();
}

}  // namespace cubesim::tl
