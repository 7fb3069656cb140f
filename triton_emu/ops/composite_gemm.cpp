#include "triton_emu/ops/composite_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <vector>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/gemm/held_gemms.hpp"
#include "triton_emu/gemm/operand_cache.hpp"
#include "triton_emu/ops/access.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::tl {
struct HandleState {
  HandleState(emu::Scheduler& s, const detail::Program& issuer, std::uint64_t launch_id)
      : done(s, "composite gemm"), owner(&issuer), launch(launch_id) {}
  emu::Completion done;
  const detail::Program* owner;  // the program that issued the composite (gone after `launch`)
  std::uint64_t launch;          // the launch it was issued in (its SRAM's tenant then)
  std::uint32_t logged_op = 0;   // its accesses in the launch's AccessLog (0: not recorded)
  Tile result;                   // a composite to a tile: its result, reserved when issued
  bool passed_on = false;        // the result went on to a later composite as its accumulator
  bool handed_out = false;       // wait() gave the result to the program
};
}  // namespace cubesim::tl

namespace cubesim::detail {

using components::hex_address;

namespace {

// A composite GEMM as the PE's engine (components/pe/gemm_engine.hpp) runs it, with what its
// numbers need: the engine says when it starts (operands are read as they are then) and ends.
struct GemmJob final : components::GemmEngine::Job {
  LaunchState* launch = nullptr;
  PeState* pe = nullptr;
  std::shared_ptr<tl::HandleState> handle;
  DType out_dtype = DType::f32;
  tl::CompositeOptions options;  // its bias tile, if any, stays alive with it
  tl::Operand a, b;
  Ptr out;                      // a memory result
  std::int64_t out_stride = 0;  //   its row stride in elements
  tl::Tile out_tile;            // an SRAM result (the same tile as acc when in place)
  std::optional<tl::Tile> acc;  // an accumulator tile, read when the engine starts
  // While running.
  std::vector<std::byte> a_buf, b_buf, c_buf, scratch;
  std::vector<float> product, acc_f32, bias_f32;           // with an epilogue: f32 until the cast
  std::shared_ptr<const std::vector<float>> a_f32, b_f32;  // f16 operands, converted (shared)
  std::future<void> numerics;
  std::shared_ptr<HeldProduct> held;  // or computed when needed (held_gemms.hpp)

  // A job dropped while its numbers are computed (a run that stopped early) waits for the
  // worker, which uses its buffers; its errors do not matter any more.
  ~GemmJob() override {
    if (numerics.valid()) numerics.wait();
  }
  std::int64_t rows() const { return static_cast<std::int64_t>(m); }
  std::int64_t cols() const { return static_cast<std::int64_t>(n); }
  std::int64_t depth() const { return static_cast<std::int64_t>(k); }
  tl::Ref out_ref() const { return {out, tl::Shape{rows(), cols()}, out_dtype, out_stride}; }

 private:
  void compute(FunctionalMemory& mem, GemmResources& gemm);
  void on_start() override;
  void on_finish(emu::Tick started, emu::Tick ended) override;
};

struct OperandInfo {
  std::int64_t rows, cols, row_stride;
  DType dtype;
};

tl::Shape shape_of(const tl::Operand& op) {
  if (const auto* t = std::get_if<tl::Tile>(&op)) return t->shape();
  return std::get<tl::Ref>(op).shape;
}

OperandInfo info(const tl::Operand& op) {
  if (const auto* t = std::get_if<tl::Tile>(&op))
    return {t->shape().rows(), t->shape().cols(), t->shape().cols(), t->dtype()};
  const auto& r = std::get<tl::Ref>(op);
  return {r.shape.rows(), r.shape.cols(), r.row_stride, r.dtype};
}

// The values of memory named by a ref, read into `buf` (rows made contiguous).
const std::byte* values(const tl::Ref& r, std::vector<std::byte>& buf, FunctionalMemory& mem) {
  const std::uint32_t size = dtype_size(r.dtype);
  const std::int64_t rows = r.shape.rows(), cols = r.shape.cols();
  buf.resize(static_cast<std::size_t>(rows * cols) * size);
  if (r.row_stride == cols) {
    mem.read(r.ptr.addr, buf.data(), buf.size());
  } else {
    for (std::int64_t i = 0; i < rows; ++i)
      mem.read(r.ptr.addr + static_cast<std::uint64_t>(i * r.row_stride) * size,
               buf.data() + i * cols * size, static_cast<std::uint64_t>(cols) * size);
  }
  return buf.data();
}

// The operand's values: a tile's own storage, or a ref read from memory into `buf`.
const std::byte* values(const tl::Operand& op, std::vector<std::byte>& buf, FunctionalMemory& mem) {
  if (const auto* t = std::get_if<tl::Tile>(&op)) return t->raw();
  return values(std::get<tl::Ref>(op), buf, mem);
}

// An f16 operand as f32: through the shared cache when its values are what memory holds at
// a known place (a ref, or a tile loaded from memory that nobody has written to since).
std::shared_ptr<const std::vector<float>> f16_operand_as_f32(const tl::Operand& op,
                                                             FunctionalMemory& mem,
                                                             OperandCache& cache) {
  if (const auto* r = std::get_if<tl::Ref>(&op))
    return cache.f16_as_f32(mem, r->ptr.addr, r->shape.rows(), r->shape.cols(), r->row_stride);
  const auto& t = std::get<tl::Tile>(op);
  const std::int64_t rows = t.shape().rows(), cols = t.shape().cols();
  if (const auto& src = t.source()) {
    const std::uint64_t span =
        rows == 0 ? 0 : static_cast<std::uint64_t>((rows - 1) * src->row_stride + cols) * 2;
    if (mem.newest_write(src->addr, span) <= src->as_of)
      return cache.f16_as_f32(mem, src->addr, rows, cols, src->row_stride);
  }
  auto data = std::make_shared<std::vector<float>>(static_cast<std::size_t>(rows * cols));
  if (!data->empty())
    backends::convert_block(DType::f16, t.raw(), cols, DType::f32, data->data(), cols, rows, cols);
  return data;
}

// Where the operand's values are in memory now: a ref, or a tile loaded from memory that
// nobody has written to since. Nothing for a tile computed in SRAM.
std::optional<MatrixAt> in_memory(const tl::Operand& op, FunctionalMemory& mem) {
  if (const auto* r = std::get_if<tl::Ref>(&op))
    return MatrixAt{r->ptr.addr, r->shape.rows(), r->shape.cols(), r->row_stride, r->dtype};
  const auto& t = std::get<tl::Tile>(op);
  const auto& src = t.source();
  if (!src) return std::nullopt;
  const MatrixAt m{src->addr, t.shape().rows(), t.shape().cols(), src->row_stride, t.dtype()};
  if (mem.newest_write(m.addr, m.span_bytes()) > src->as_of) return std::nullopt;
  return m;
}

// Holds the job's product until something needs it, when its operands are in memory.
std::shared_ptr<HeldProduct> hold(const GemmJob& job, FunctionalMemory& mem, HeldGemms& held) {
  if (job.options.accumulate || job.out_tile.valid() || job.out_stride != job.cols() ||
      job.epilogue_steps != 0 || job.m == 0 || job.n == 0 || job.k == 0)
    return nullptr;
  const auto a = in_memory(job.a, mem);
  if (!a) return nullptr;
  const auto b = in_memory(job.b, mem);
  if (!b) return nullptr;
  HeldProduct p;
  p.a = *a;
  p.b = *b;
  p.trans_a = job.options.trans_a;
  p.trans_b = job.options.trans_b;
  p.m = job.rows();
  p.n = job.cols();
  p.k = job.depth();
  p.out = job.out.addr;
  p.out_dtype = job.out_dtype;
  p.pe = job.pe->name;
  return held.hold(std::move(p));
}

// What the engine streams for memory named by a ref: one transfer when its rows are
// contiguous, else one per row.
components::StridedBytes streamed(const tl::Ref& r) {
  const std::uint64_t size = dtype_size(r.dtype);
  const std::int64_t rows = r.shape.rows(), cols = r.shape.cols();
  if (r.row_stride == cols)
    return components::StridedBytes::contiguous(r.ptr.addr,
                                                static_cast<std::uint64_t>(rows * cols) * size);
  return {r.ptr.addr, static_cast<std::uint64_t>(cols) * size, static_cast<std::uint64_t>(rows),
          static_cast<std::uint64_t>(r.row_stride) * size};
}

// An operand given as a ref is streamed in; a tile is in SRAM already.
components::StridedBytes streamed(const tl::Operand& op) {
  const auto* r = std::get_if<tl::Ref>(&op);
  return r ? streamed(*r) : components::StridedBytes{};
}

// The epilogue on f32 values, in place: alpha * p + beta * acc + bias[col], then the activation.
void apply_epilogue(const tl::CompositeOptions& o, float* p, const float* acc, const float* bias,
                    std::int64_t m, std::int64_t n) {
  const auto alpha = static_cast<float>(o.alpha), beta = static_cast<float>(o.beta);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float& v = p[i * n + j];
      v *= alpha;
      if (acc) v += beta * acc[i * n + j];
      if (bias) v += bias[j];
      switch (o.activation) {
        case tl::Activation::none:
          break;
        case tl::Activation::relu:
          v = v < 0.0f ? 0.0f : v;  // NaN stays NaN, as in torch
          break;
        case tl::Activation::gelu:
          v = 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>));
          break;
      }
    }
}

// Epilogue steps that change values: each passes every output element once on the engine.
std::uint32_t epilogue_steps(const tl::CompositeOptions& o) {
  return (o.alpha != 1.0) + (o.accumulate && o.beta != 1.0) + o.bias.has_value() +
         (o.activation != tl::Activation::none);
}

// m x n values of `dtype` at `src` (row stride ld) as f32.
std::vector<float> as_f32(DType dtype, const std::byte* src, std::int64_t ld, std::int64_t m,
                          std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(m * n));
  if (!v.empty()) backends::convert_block(dtype, src, ld, DType::f32, v.data(), n, m, n);
  return v;
}

void GemmJob::on_start() {
  LaunchState& L = *launch;
  if (!L.memory || !L.gemm) return;  // timing-only
  L.gemm->ensure();
  held = hold(*this, *L.memory, *L.gemm->held);
  if (!held) compute(*L.memory, *L.gemm);
}

// Operands, accumulator and bias as they are now, when the engine starts; the product and the
// epilogue on a worker thread.
void GemmJob::compute(FunctionalMemory& mem, GemmResources& gemm) {
  const void* a_values = nullptr;
  const void* b_values = nullptr;
  DType compute_dtype = dtype;
  if (dtype == DType::f16) {
    // The backend computes f16 in f32 anyway; converting through the cache gives the same
    // numbers and converts an operand that many GEMMs share only once.
    a_f32 = f16_operand_as_f32(a, mem, *gemm.cache);
    b_f32 = f16_operand_as_f32(b, mem, *gemm.cache);
    a_values = a_f32->data();
    b_values = b_f32->data();
    compute_dtype = DType::f32;
  } else {
    a_values = values(a, a_buf, mem);
    b_values = values(b, b_buf, mem);
  }
  const std::int64_t mn = rows() * cols();
  c_buf.resize(static_cast<std::size_t>(mn) * dtype_size(out_dtype));
  // The accumulator's values: a tile's, or what memory holds at the output.
  const DType acc_dtype = acc ? acc->dtype() : out_dtype;
  const std::byte* acc_values = nullptr;
  if (options.accumulate) acc_values = acc ? acc->raw() : values(out_ref(), scratch, mem);
  const OperandInfo ai = info(a), bi = info(b);
  backends::GemmDesc d;
  d.in_dtype = compute_dtype;
  d.M = rows();
  d.N = cols();
  d.K = depth();
  d.trans_a = options.trans_a;
  d.trans_b = options.trans_b;
  d.a = a_values;
  d.lda = ai.cols;  // gathered operands are contiguous
  d.b = b_values;
  d.ldb = bi.cols;
  d.ldc = cols();
  auto* backend = gemm.backend.get();
  // Keep the operand tiles alive until the worker is done: the job holds them.
  if (epilogue_steps == 0 && acc_dtype == out_dtype) {  // the backend adds into C itself
    if (options.accumulate && !c_buf.empty()) std::memcpy(c_buf.data(), acc_values, c_buf.size());
    d.out_dtype = out_dtype;
    d.c = c_buf.data();
    d.accumulate = options.accumulate;
    numerics = gemm.pool->submit([backend, d] { backend->gemm(d); });
    return;
  }
  // An epilogue, or an accumulator of another dtype: the f32 product, then the epilogue, then
  // one rounding to out_dtype.
  product.resize(static_cast<std::size_t>(mn));
  if (options.accumulate) acc_f32 = as_f32(acc_dtype, acc_values, cols(), rows(), cols());
  if (options.bias) {
    std::vector<std::byte> buf;
    bias_f32 =
        as_f32(info(*options.bias).dtype, values(*options.bias, buf, mem), cols(), 1, cols());
  }
  d.out_dtype = DType::f32;
  d.c = product.data();
  d.accumulate = false;
  numerics = gemm.pool->submit([this, backend, d] {
    backend->gemm(d);
    apply_epilogue(options, product.data(), acc_f32.empty() ? nullptr : acc_f32.data(),
                   bias_f32.empty() ? nullptr : bias_f32.data(), rows(), cols());
    if (!product.empty())
      backends::convert_block(DType::f32, product.data(), cols(), out_dtype, c_buf.data(), cols(),
                              rows(), cols());
  });
}

void GemmJob::on_finish(emu::Tick started, emu::Tick ended) {
  LaunchState& L = *launch;
  if (held) {
    L.gemm->held->complete(*held);
  } else if (numerics.valid()) {
    try {
      numerics.get();
    } catch (const std::exception& e) {  // a backend error, told with the composite it ended
      throw std::runtime_error(
          fmt::format("composite gemm on {} ({} x {} x {}, {} inputs, {} "
                      "result): {}",
                      pe->name, m, n, k, dtype_name(dtype), dtype_name(out_dtype), e.what()));
    }
    if (out_tile.valid()) {
      // The tile is this job's alone until wait() hands it out (or a later job in this
      // engine's FIFO takes it as its accumulator), so its values are written here.
      if (!c_buf.empty())
        std::memcpy(const_cast<std::byte*>(out_tile.raw()), c_buf.data(), c_buf.size());
    } else if (out_stride == cols()) {
      L.memory->write(out.addr, c_buf.data(), c_buf.size());
    } else {
      const std::uint64_t size = dtype_size(out_dtype), row_bytes = n * size;
      for (std::uint64_t i = 0; i < m; ++i)
        L.memory->write(out.addr + i * static_cast<std::uint64_t>(out_stride) * size,
                        c_buf.data() + i * row_bytes, row_bytes);
    }
  }
  if (L.tracing(*pe))
    L.trace_slice(
        *pe, true, "gemm", started, ended,
        fmt::format(
            R"({{"M":{},"N":{},"K":{},"dtype":"{}","out_dtype":"{}","out":"{}","epilogue_steps":{}}})",
            m, n, k, dtype_name(dtype), dtype_name(out_dtype), out_tile.valid() ? "tile" : "memory",
            epilogue_steps));
  // The engine drops the job next (this frees its buffers and operand tiles).
  handle->done.fire();
}

}  // namespace

namespace {

std::string name(DType t) {
  return std::string(dtype_name(t));
}

// Logs the reads or writes of the rows of memory named by `r`.
void record_rows(AccessLog& log, std::uint32_t program, std::uint32_t epoch, std::uint32_t op,
                 const tl::Ref& r, bool write) {
  const std::uint32_t size = dtype_size(r.dtype);
  for (std::int64_t i = 0; i < r.shape.rows(); ++i) {
    const std::uint64_t begin = r.ptr.addr + static_cast<std::uint64_t>(i * r.row_stride) * size;
    log.record_async(program, epoch, op, begin,
                     begin + static_cast<std::uint64_t>(r.shape.cols()) * size, write);
  }
}

// The accumulator tile of a composite to a tile (nullopt: none), checked; `in_place` when it is
// the result of a composite still unseen by the program, whose tile the new job can add into.
std::optional<tl::Tile> accumulator(Program& caller, const GemmOut& out,
                                    const tl::CompositeOptions& options, bool& in_place) {
  in_place = false;
  if (!out.acc && !out.acc_job) {
    if (options.accumulate)
      caller.fault(
          "composite gemm: .accumulate = true to a new tile has nothing to add to; pass the "
          "accumulator tile (or the TileHandle of the composite that makes it) instead of "
          "tl::to_tile");
    return std::nullopt;
  }
  if (!options.accumulate)
    caller.fault(
        "composite gemm: an accumulator was passed without .accumulate = true; set it to add "
        "a . b to the accumulator, or pass tl::to_tile for a new result");
  if (out.acc) {
    if (!out.acc->valid()) caller.fault("composite gemm: the accumulator tile is empty (Tile())");
    if (!caller.owns(*out.acc))
      caller.fault("composite gemm: the accumulator tile belongs to another program");
    return *out.acc;
  }
  tl::HandleState& prev = *out.acc_job;
  if (prev.passed_on || !prev.result.valid())
    caller.fault(
        "composite gemm: the accumulator handle was already passed to a later composite; pass "
        "the handle that composite returned (acc = tl.composite(..., acc, ...))");
  if (!caller.owns(prev.result))
    caller.fault("composite gemm: the accumulator handle belongs to another program");
  in_place = !prev.handed_out;
  prev.passed_on = true;
  tl::Tile t = std::move(prev.result);
  prev.result = tl::Tile{};
  return t;
}

// A composite GEMM's call as the checks settle it: an m x k by k x n product of `in` inputs to
// a result of `out_dtype`, its accumulator tile (if any) and its epilogue steps.
struct GemmCall {
  std::int64_t m = 0, n = 0, k = 0;
  DType in = DType::f32;
  DType out_dtype = DType::f32;
  std::optional<tl::Tile> acc;
  bool in_place = false;  // acc is the unseen result of an earlier composite: add into it
  std::uint32_t steps = 0;
  tl::Ref out_mem{};  // a result in memory (unused for a tile)
};

// The operands: both this program's, of one dtype the engine multiplies, inner dimensions equal.
GemmCall check_operands(const Program& caller, const tl::Operand& a, const tl::Operand& b,
                        const GemmOut& out, const tl::CompositeOptions& options) {
  const OperandInfo ai = info(a), bi = info(b);
  for (const auto* op : {&a, &b})
    if (const auto* t = std::get_if<tl::Tile>(op); t && !caller.owns(*t))
      caller.fault("composite: a tile of another program was passed");
  if (ai.dtype != bi.dtype)
    caller.fault("composite gemm: a is " + name(ai.dtype) + " but b is " + name(bi.dtype) +
                 "; cast one of them (tile.to(...))");
  GemmCall call;
  call.in = ai.dtype;
  call.m = options.trans_a ? ai.cols : ai.rows;
  call.k = options.trans_a ? ai.rows : ai.cols;
  const std::int64_t kb = options.trans_b ? bi.cols : bi.rows;
  call.n = options.trans_b ? bi.rows : bi.cols;
  if (call.k != kb)
    caller.fault("composite gemm: inner dimensions differ: a gives K = " + std::to_string(call.k) +
                 " but b gives K = " + std::to_string(kb) +
                 " (check the shapes and trans_a/trans_b)");
  if (!backends::gemm_input_supported(ai.dtype)) {
    std::optional<DType> asked = options.out_dtype;
    if (!asked && out.acc && out.acc->valid()) asked = out.acc->dtype();
    caller.fault("composite gemm: a and b are " + name(ai.dtype) +
                 (asked ? " (for a " + name(*asked) + " result)" : std::string()) +
                 "; the GEMM engine multiplies no " + name(ai.dtype) +
                 " masks: cast them to i8 (tile.to(DType::i8)) for an i32 count");
  }
  return call;
}

// The accumulator and the result's dtype: pairs the backends compute, an accumulator of the
// product's shape.
void check_result(Program& caller, const GemmOut& out, const tl::CompositeOptions& options,
                  GemmCall& call) {
  if (out.to_tile) {
    if (options.out_row_stride != 0)
      caller.fault(
          "composite gemm: out_row_stride applies to a result in memory, not to a tile; "
          "leave it 0");
    call.acc = accumulator(caller, out, options, call.in_place);
  }
  const DType in = call.in;
  const auto& acc = call.acc;
  if (acc && !backends::gemm_pair_supported(in, acc->dtype()))
    caller.fault("composite gemm: the accumulator tile is " + name(acc->dtype()) + " but a is " +
                 name(in) + "; use an " +
                 (is_integer(in) ? name(backends::gemm_default_out(in)) : std::string("f32")) +
                 " accumulator");
  call.out_dtype = options.out_dtype.value_or(acc ? acc->dtype() : backends::gemm_default_out(in));
  if (!backends::gemm_pair_supported(in, call.out_dtype))
    caller.fault("composite gemm: " + name(in) + " inputs cannot give a " + name(call.out_dtype) +
                 " result; " + name(in) + " inputs take a result of " +
                 backends::gemm_outputs_for(in) + " (set CompositeOptions::out_dtype)");
  if (acc && (acc->shape().rows() != call.m || acc->shape().cols() != call.n))
    caller.fault("composite gemm: the accumulator tile has shape " + acc->shape().str() +
                 " but the product is " + std::to_string(call.m) + " x " + std::to_string(call.n) +
                 "; pass an accumulator of shape [" + std::to_string(call.m) + ", " +
                 std::to_string(call.n) + "]");
}

// A bias: this program's tile or a ref, one float row of the result's width.
void check_bias(const Program& caller, const tl::Operand& bias, std::int64_t n) {
  const OperandInfo info_of_bias = info(bias);
  if (const auto* t = std::get_if<tl::Tile>(&bias)) {
    if (!t->valid()) caller.fault("composite gemm: the bias tile is empty (Tile())");
    if (!caller.owns(*t)) caller.fault("composite gemm: the bias tile belongs to another program");
  }
  if (info_of_bias.rows != 1 || info_of_bias.cols != n)
    caller.fault("composite gemm: the bias has shape " + shape_of(bias).str() +
                 " but the result has N = " + std::to_string(n) +
                 " columns; pass a bias of shape [" + std::to_string(n) + "] (or [1, " +
                 std::to_string(n) + "])");
  if (is_integer(info_of_bias.dtype))
    caller.fault("composite gemm: the bias is " + name(info_of_bias.dtype) +
                 ": an integer bias is not supported; cast it to f32, f16 or bf16 "
                 "(tile.to(DType::f32))");
}

// The epilogue (alpha, beta, bias, activation): meaningful values, on a float GEMM only.
void check_epilogue(const Program& caller, const tl::CompositeOptions& options, GemmCall& call) {
  if (!std::isfinite(options.alpha) || !std::isfinite(options.beta))
    caller.fault("composite gemm: alpha and beta must be finite (alpha = " +
                 std::to_string(options.alpha) + ", beta = " + std::to_string(options.beta) + ")");
  if (options.beta != 1.0 && !options.accumulate)
    caller.fault(
        "composite gemm: beta scales the accumulator, but .accumulate is not set; set "
        ".accumulate = true or leave beta at 1");
  if (static_cast<int>(options.activation) > static_cast<int>(tl::Activation::gelu))
    caller.fault("composite gemm: unknown activation " +
                 std::to_string(static_cast<int>(options.activation)) +
                 "; use Activation::none, relu or gelu");
  if (options.bias) check_bias(caller, *options.bias, call.n);
  call.steps = epilogue_steps(options);
  if (is_integer(call.in) && call.steps != 0)
    caller.fault("composite gemm: an integer GEMM (" + name(call.in) + " inputs, " +
                 name(call.out_dtype) +
                 " result) has no epilogue (alpha, beta, bias, activation); compute it on the "
                 "vector unit after the GEMM");
}

// A result in memory: rows that do not overlap, aligned, inside the address map and inside
// one allocated buffer.
void check_memory_result(const LaunchState& launch, const Program& caller, const GemmOut& out,
                         const GemmCall& call) {
  const std::int64_t m = call.m, n = call.n, out_stride = call.out_mem.row_stride;
  const std::uint32_t out_size = dtype_size(call.out_dtype);
  if (out_stride < n)
    caller.fault("composite gemm: out_row_stride " + std::to_string(out_stride) +
                 " is smaller than a row of the result (N = " + std::to_string(n) +
                 " elements); rows would overlap");
  if (out.ptr.addr % out_size != 0)
    caller.fault("composite gemm: the output at " + hex_address(out.ptr.addr) +
                 " is misaligned for " + name(call.out_dtype) + " elements");
  __extension__ using u128 = unsigned __int128;
  const u128 span = m * n == 0 ? 0 : (u128(m - 1) * u128(out_stride) + u128(n)) * out_size;
  if (span >> 63)
    caller.fault("composite gemm: an output of " + std::to_string(m) + " rows " +
                 std::to_string(out_stride) + " elements apart spans more than 2^63 bytes");
  try {
    launch.sys.address_map().check_range(out.ptr.addr, static_cast<std::uint64_t>(span),
                                         "composite gemm output");
  } catch (const components::AddressError& e) {
    caller.fault(e.what());
  }
  if (!launch.allocations.contains(out.ptr.addr, static_cast<std::uint64_t>(span)))
    caller.fault(launch.allocations.describe_miss(out.ptr.addr, static_cast<std::uint64_t>(span),
                                                  "composite gemm output"));
  ops::first_touch(caller, out.ptr.addr, static_cast<std::uint64_t>(span));
}

// A result in SRAM: the accumulator's tile when the engine can add into it, else a new tile.
tl::Tile result_tile(Program& caller, const GemmCall& call) {
  if (call.in_place && call.acc->dtype() == call.out_dtype) return *call.acc;
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(call.m * call.n) * dtype_size(call.out_dtype);
  if (bytes > caller.pe().hw.sram().available())
    caller.fault("composite gemm: its " + std::to_string(call.m) + " x " + std::to_string(call.n) +
                 " " + name(call.out_dtype) + " result tile needs " + std::to_string(bytes) +
                 " bytes of SRAM but only " + std::to_string(caller.pe().hw.sram().available()) +
                 " are free on " + caller.pe_name() +
                 "; compute smaller blocks, let tiles go out of scope, or raise "
                 "system.pe.sram_KiB");
  tl::Tile t = caller.make_tile(tl::Shape{call.m, call.n}, call.out_dtype);
  // i32 tiles keep values in timing-only runs (index math), where no GEMM computes them.
  if (caller.timing_only() && t.raw() && bytes != 0)
    std::memset(const_cast<std::byte*>(t.raw()), 0, bytes);
  return t;
}

// The composite's accesses, in flight until the program waits on it: the engine reads and
// writes at times of its own.
void log_accesses(AccessLog& log, tl::HandleState& handle, std::uint32_t program,
                  std::uint32_t epoch, const GemmJob& job, const GemmOut& out,
                  const tl::Ref& out_mem) {
  const std::uint32_t logged = log.begin_async();
  handle.logged_op = logged;
  for (const auto* op : {&job.a, &job.b})
    if (const auto* r = std::get_if<tl::Ref>(op))
      record_rows(log, program, epoch, logged, *r, false);
  if (job.options.bias)
    if (const auto* r = std::get_if<tl::Ref>(&*job.options.bias))
      record_rows(log, program, epoch, logged, *r, false);
  if (!out.to_tile) {
    if (job.options.accumulate) record_rows(log, program, epoch, logged, out_mem, false);
    record_rows(log, program, epoch, logged, out_mem, true);
  }
}

// The engine's job for a checked call: what it computes and what it streams.
std::unique_ptr<GemmJob> make_job(LaunchState& launch, PeState& pe, const tl::Operand& a,
                                  const tl::Operand& b, const GemmOut& out,
                                  const tl::CompositeOptions& options, GemmCall& call) {
  auto job = std::make_unique<GemmJob>();
  job->launch = &launch;
  job->pe = &pe;
  job->m = static_cast<std::uint64_t>(call.m);
  job->n = static_cast<std::uint64_t>(call.n);
  job->k = static_cast<std::uint64_t>(call.k);
  job->dtype = call.in;
  job->epilogue_steps = call.steps;
  job->operands[0] = streamed(a);
  job->operands[1] = streamed(b);
  if (options.bias) job->operands[2] = streamed(*options.bias);
  if (!out.to_tile) {
    if (options.accumulate) job->operands[3] = streamed(call.out_mem);
    job->result = streamed(call.out_mem);
  }
  job->out_dtype = call.out_dtype;
  job->options = options;
  job->a = a;
  job->b = b;
  job->out = out.ptr;
  job->out_stride = call.out_mem.row_stride;
  job->acc = std::move(call.acc);
  return job;
}

}  // namespace

std::shared_ptr<tl::HandleState> start_gemm(Program& caller, const tl::Operand& a,
                                            const tl::Operand& b, const GemmOut& out,
                                            const tl::CompositeOptions& options) {
  LaunchState& launch = caller.launch();
  PeState& pe = caller.pe();
  GemmCall call = check_operands(caller, a, b, out, options);
  check_result(caller, out, options, call);
  check_epilogue(caller, options, call);
  const std::int64_t out_stride = options.out_row_stride != 0 ? options.out_row_stride : call.n;
  call.out_mem = {out.ptr, tl::Shape{call.m, call.n}, call.out_dtype, out_stride};
  if (!out.to_tile) check_memory_result(launch, caller, out, call);
  if (launch.sys.gemm_timing().peak_flops_per_s(call.in) == 0)
    caller.fault("composite gemm: the GEMM engine has no " + name(call.in) +
                 " rate: the spec does not give system.pe.gemm.peak_TFLOPS." + name(call.in) +
                 "; add it (TFLOP/s) to run " + name(call.in) +
                 " composites, or convert the operands to a dtype the engine has");
  auto handle = std::make_shared<tl::HandleState>(launch.sched, caller, pe.hw.sram().tenant);
  tl::Tile result = out.to_tile ? result_tile(caller, call) : tl::Tile{};
  auto job = make_job(launch, pe, a, b, out, options, call);
  job->handle = handle;
  if (out.to_tile) handle->result = job->out_tile = std::move(result);
  if (launch.log)
    log_accesses(*launch.log, *handle, caller.index(), caller.epoch(), *job, out, call.out_mem);
  pe.hw.gemm().submit(std::move(job));
  return handle;
}

void wait_gemm(const Program& caller, tl::HandleState& h) {
  h.done.wait();
  LaunchState& launch = caller.launch();
  if (launch.log && h.logged_op) launch.log->waited(caller.index(), h.logged_op, caller.epoch());
}

}  // namespace cubesim::detail

namespace cubesim::detail {

void check_result_handle(const Program& caller, const tl::HandleState& h) {
  if (h.passed_on)
    caller.fault(
        "wait: this handle's tile was passed on as the accumulator of a later composite; wait "
        "on the handle that composite returned");
}

void check_handle_owner(const Program& caller, const tl::HandleState& h) {
  if (h.launch !=
      caller.pe().hw.sram().tenant)  // its program is gone: not even its name is left to read
    caller.fault(fmt::format(
        "wait on {}: the handle comes from a composite of an earlier launch; a composite "
        "finishes within its launch (its result is in memory, or was a tile of that launch)",
        caller.pe_name()));
  if (h.owner != &caller)
    caller.fault(fmt::format(
        "wait on {}: the handle belongs to {}'s composite; a program waits only on the handles "
        "its own composites returned (pass results between programs through memory or "
        "send/recv)",
        caller.pe_name(), h.owner->pe_name()));
}

tl::Tile gemm_result(tl::HandleState& h) {
  h.handed_out = true;
  return h.result;
}

}  // namespace cubesim::detail
