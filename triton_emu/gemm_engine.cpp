#include "triton_emu/gemm_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <optional>
#include <vector>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/held_gemms.hpp"
#include "triton_emu/launch_state.hpp"
#include "triton_emu/operand_cache.hpp"

namespace cubesim::tl {
struct HandleState {
  explicit HandleState(emu::Scheduler& s) : done(s, "composite gemm") {}
  emu::Completion done;
  std::uint32_t logged_op = 0;  // its accesses in the launch's AccessLog (0: not recorded)
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
  tl::CompositeOptions options;
  tl::Context::Operand a, b;
  Ptr out;
  // While running.
  std::vector<std::byte> a_buf, b_buf, c_buf;
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

 private:
  void on_start() override;
  void on_finish(emu::Tick started, emu::Tick ended) override;
};

struct OperandInfo {
  std::int64_t rows, cols, row_stride;
  DType dtype;
};

OperandInfo info(const tl::Context::Operand& op) {
  if (const auto* t = std::get_if<tl::Tile>(&op))
    return {t->shape().rows(), t->shape().cols(), t->shape().cols(), t->dtype()};
  const auto& r = std::get<tl::Ref>(op);
  return {r.shape.rows(), r.shape.cols(), r.row_stride, r.dtype};
}

// The operand's values: a tile's own storage, or a ref read from memory into `buf`.
const std::byte* values(const tl::Context::Operand& op, std::vector<std::byte>& buf,
                        FunctionalMemory& mem) {
  if (const auto* t = std::get_if<tl::Tile>(&op)) return t->raw();
  const auto& r = std::get<tl::Ref>(op);
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

// An f16 operand as f32: through the shared cache when its values are what memory holds at
// a known place (a ref, or a tile loaded from memory that nobody has written to since).
std::shared_ptr<const std::vector<float>> f16_operand_as_f32(const tl::Context::Operand& op,
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
std::optional<MatrixAt> in_memory(const tl::Context::Operand& op, FunctionalMemory& mem) {
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
  if (job.options.accumulate || job.m == 0 || job.n == 0 || job.k == 0) return nullptr;
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
  return held.hold(std::move(p));
}

// What the engine streams in for the operand: a ref's rows; nothing for a tile (in SRAM).
components::StridedBytes streamed(const tl::Context::Operand& op) {
  const auto* r = std::get_if<tl::Ref>(&op);
  if (!r) return {};
  const std::uint64_t size = dtype_size(r->dtype);
  const std::int64_t rows = r->shape.rows(), cols = r->shape.cols();
  if (r->row_stride == cols)
    return components::StridedBytes::contiguous(r->ptr.addr,
                                                static_cast<std::uint64_t>(rows * cols) * size);
  return {r->ptr.addr, static_cast<std::uint64_t>(cols) * size, static_cast<std::uint64_t>(rows),
          static_cast<std::uint64_t>(r->row_stride) * size};
}

void GemmJob::on_start() {
  LaunchState& L = *launch;
  auto* mem = L.memory;
  if (mem && L.gemm) L.gemm->ensure();
  if (mem && L.gemm) held = hold(*this, *mem, *L.gemm->held);
  if (mem && L.gemm && !held) {
    // Operands as they are now, when the engine starts; the product on a worker thread.
    const void* a_values = nullptr;
    const void* b_values = nullptr;
    DType compute_dtype = dtype;
    if (dtype == DType::f16) {
      // The backend computes f16 in f32 anyway; converting through the cache gives the same
      // numbers and converts an operand that many GEMMs share only once.
      a_f32 = f16_operand_as_f32(a, *mem, *L.gemm->cache);
      b_f32 = f16_operand_as_f32(b, *mem, *L.gemm->cache);
      a_values = a_f32->data();
      b_values = b_f32->data();
      compute_dtype = DType::f32;
    } else {
      a_values = values(a, a_buf, *mem);
      b_values = values(b, b_buf, *mem);
    }
    const std::uint64_t c_bytes =
        static_cast<std::uint64_t>(rows() * cols()) * dtype_size(out_dtype);
    c_buf.resize(c_bytes);
    if (options.accumulate) mem->read(out.addr, c_buf.data(), c_bytes);
    const OperandInfo ai = info(a), bi = info(b);
    backends::GemmDesc d;
    d.in_dtype = compute_dtype;
    d.out_dtype = out_dtype;
    d.M = rows();
    d.N = cols();
    d.K = depth();
    d.trans_a = options.trans_a;
    d.trans_b = options.trans_b;
    d.a = a_values;
    d.lda = ai.cols;  // gathered operands are contiguous
    d.b = b_values;
    d.ldb = bi.cols;
    d.c = c_buf.data();
    d.ldc = cols();
    d.accumulate = options.accumulate;
    auto* backend = L.gemm->backend.get();
    // Keep the operand tiles alive until the worker is done: the job holds them.
    numerics = L.gemm->pool->submit([backend, d] { backend->gemm(d); });
  }
}

void GemmJob::on_finish(emu::Tick started, emu::Tick ended) {
  LaunchState& L = *launch;
  if (held) {
    L.gemm->held->complete(*held);
  } else if (numerics.valid()) {
    numerics.get();  // rethrows a backend error into this callback
    L.memory->write(out.addr, c_buf.data(), c_buf.size());
  }
  if (L.tracing(*pe))
    L.trace_slice(*pe, true, "gemm", started, ended,
                  fmt::format(R"({{"M":{},"N":{},"K":{},"dtype":"{}","out_dtype":"{}"}})", m, n, k,
                              dtype_name(dtype), dtype_name(out_dtype)));
  // The engine drops the job next (this frees its buffers and operand tiles).
  handle->done.fire();
}

}  // namespace

std::shared_ptr<tl::HandleState> start_gemm(LaunchState& launch, PeState& pe, tl::Context& ctx,
                                            std::uint32_t program, std::uint32_t epoch,
                                            const tl::Context::Operand& a,
                                            const tl::Context::Operand& b, Ptr out,
                                            const tl::CompositeOptions& options) {
  const OperandInfo ai = info(a), bi = info(b);
  for (const auto* op : {&a, &b})
    if (const auto* t = std::get_if<tl::Tile>(op); t && &t->context() != &ctx)
      ctx.fault("composite: a tile of another program was passed");
  if (ai.dtype != bi.dtype)
    ctx.fault("composite gemm: a is " + std::string(dtype_name(ai.dtype)) + " but b is " +
              std::string(dtype_name(bi.dtype)) + "; cast one of them (tile.to(...))");
  const std::int64_t m = options.trans_a ? ai.cols : ai.rows;
  const std::int64_t ka = options.trans_a ? ai.rows : ai.cols;
  const std::int64_t kb = options.trans_b ? bi.cols : bi.rows;
  const std::int64_t n = options.trans_b ? bi.rows : bi.cols;
  if (ka != kb)
    ctx.fault("composite gemm: inner dimensions differ: a gives K = " + std::to_string(ka) +
              " but b gives K = " + std::to_string(kb) + " (check the shapes and trans_a/trans_b)");
  const DType out_dtype = options.out_dtype.value_or(ai.dtype);
  if ((ai.dtype == DType::i32) != (out_dtype == DType::i32))
    ctx.fault("composite gemm: i32 inputs need an i32 result and float inputs a float result");
  const std::uint64_t c_bytes = static_cast<std::uint64_t>(m * n) * dtype_size(out_dtype);
  if (out.addr % dtype_size(out_dtype) != 0)
    ctx.fault("composite gemm: the output at " + hex_address(out.addr) + " is misaligned for " +
              std::string(dtype_name(out_dtype)) + " elements");
  try {
    launch.sys.address_map().check_range(out.addr, c_bytes, "composite gemm output");
  } catch (const components::AddressError& e) {
    ctx.fault(e.what());
  }
  if (!launch.allocations.contains(out.addr, c_bytes))
    ctx.fault(launch.allocations.describe_miss(out.addr, c_bytes, "composite gemm output"));
  if (launch.sys.gemm_timing().peak_flops_per_s(ai.dtype) == 0)
    ctx.fault("composite gemm: the GEMM engine has no " + std::string(dtype_name(ai.dtype)) +
              " rate (system.pe.gemm.peak_TFLOPS." + std::string(dtype_name(ai.dtype)) + " is 0)");
  auto job = std::make_unique<GemmJob>();
  job->handle = std::make_shared<tl::HandleState>(launch.sched);
  if (launch.log) {
    // In flight until the program waits on it: the engine reads and writes at times of its own.
    const std::uint32_t logged = launch.log->begin_async();
    job->handle->logged_op = logged;
    for (const auto* op : {&a, &b})
      if (const auto* r = std::get_if<tl::Ref>(op)) {
        const std::uint32_t size = dtype_size(r->dtype);
        for (std::int64_t i = 0; i < r->shape.rows(); ++i) {
          const std::uint64_t begin =
              r->ptr.addr + static_cast<std::uint64_t>(i * r->row_stride) * size;
          launch.log->record_async(program, epoch, logged, begin,
                                   begin + static_cast<std::uint64_t>(r->shape.cols()) * size,
                                   false);
        }
      }
    if (options.accumulate)
      launch.log->record_async(program, epoch, logged, out.addr, out.addr + c_bytes, false);
    launch.log->record_async(program, epoch, logged, out.addr, out.addr + c_bytes, true);
  }
  job->launch = &launch;
  job->pe = &pe;
  job->m = static_cast<std::uint64_t>(m);
  job->n = static_cast<std::uint64_t>(n);
  job->k = static_cast<std::uint64_t>(ka);
  job->dtype = ai.dtype;
  job->operands[0] = streamed(a);
  job->operands[1] = streamed(b);
  job->result = components::StridedBytes::contiguous(out.addr, c_bytes);
  job->out_dtype = out_dtype;
  job->options = options;
  job->a = a;
  job->b = b;
  job->out = out;
  auto handle = job->handle;
  pe.gemm.submit(std::move(job));
  return handle;
}

void wait_gemm(LaunchState& launch, tl::HandleState& h, std::uint32_t program,
               std::uint32_t epoch) {
  h.done.wait();
  if (launch.log && h.logged_op) launch.log->waited(program, h.logged_op, epoch);
}

}  // namespace cubesim::detail
