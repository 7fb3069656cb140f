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

struct GemmJob {
  LaunchState* launch;
  PeState* pe;
  std::shared_ptr<tl::HandleState> handle;
  std::int64_t m, n, k;
  DType in, out_dtype;
  tl::CompositeOptions options;
  tl::Context::Operand a, b;
  Ptr out;
  // While running.
  emu::Tick started = 0;
  int pending = 0;
  std::vector<std::byte> a_buf, b_buf, c_buf;
  std::shared_ptr<const std::vector<float>> a_f32, b_f32;  // f16 operands, converted (shared)
  std::future<void> numerics;
  std::shared_ptr<HeldProduct> held;  // or computed when needed (held_gemms.hpp)
};

namespace {

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
  p.m = job.m;
  p.n = job.n;
  p.k = job.k;
  p.out = job.out.addr;
  p.out_dtype = job.out_dtype;
  return held.hold(std::move(p));
}

void finish_job(GemmJob& job);

void arrive(GemmJob& job) {
  if (--job.pending == 0) finish_job(job);
}

void stream_ref(GemmJob& job, const tl::Context::Operand& op) {
  const auto* r = std::get_if<tl::Ref>(&op);
  if (!r) return;
  const std::uint32_t size = dtype_size(r->dtype);
  const std::int64_t rows = r->shape.rows(), cols = r->shape.cols();
  auto& network = job.launch->sys.network();
  if (r->row_stride == cols) {
    ++job.pending;
    network.read(job.pe->global_pe, r->ptr.addr, static_cast<std::uint64_t>(rows * cols) * size,
                 [&job] { arrive(job); });
    return;
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    ++job.pending;
    network.read(job.pe->global_pe,
                 r->ptr.addr + static_cast<std::uint64_t>(i * r->row_stride) * size,
                 static_cast<std::uint64_t>(cols) * size, [&job] { arrive(job); });
  }
}

void start_job(const std::shared_ptr<GemmJob>& holder) {
  GemmJob& job = *holder;
  LaunchState& L = *job.launch;
  job.started = L.sched.now();
  const auto& timing = L.sys.gemm_timing();
  const emu::Tick compute =
      timing.compute_time(static_cast<std::uint64_t>(job.m), static_cast<std::uint64_t>(job.n),
                          static_cast<std::uint64_t>(job.k), job.in);
  auto* mem = L.memory;
  if (mem && L.gemm) L.gemm->ensure();
  if (mem && L.gemm) job.held = hold(job, *mem, *L.gemm->held);
  if (mem && L.gemm && !job.held) {
    // Operands as they are now, when the engine starts; the product on a worker thread.
    const void* a = nullptr;
    const void* b = nullptr;
    DType compute_dtype = job.in;
    if (job.in == DType::f16) {
      // The backend computes f16 in f32 anyway; converting through the cache gives the same
      // numbers and converts an operand that many GEMMs share only once.
      job.a_f32 = f16_operand_as_f32(job.a, *mem, *L.gemm->cache);
      job.b_f32 = f16_operand_as_f32(job.b, *mem, *L.gemm->cache);
      a = job.a_f32->data();
      b = job.b_f32->data();
      compute_dtype = DType::f32;
    } else {
      a = values(job.a, job.a_buf, *mem);
      b = values(job.b, job.b_buf, *mem);
    }
    const std::uint64_t c_bytes =
        static_cast<std::uint64_t>(job.m * job.n) * dtype_size(job.out_dtype);
    job.c_buf.resize(c_bytes);
    if (job.options.accumulate) mem->read(job.out.addr, job.c_buf.data(), c_bytes);
    const OperandInfo ai = info(job.a), bi = info(job.b);
    backends::GemmDesc d;
    d.in_dtype = compute_dtype;
    d.out_dtype = job.out_dtype;
    d.M = job.m;
    d.N = job.n;
    d.K = job.k;
    d.trans_a = job.options.trans_a;
    d.trans_b = job.options.trans_b;
    d.a = a;
    d.lda = ai.cols;  // gathered operands are contiguous
    d.b = b;
    d.ldb = bi.cols;
    d.c = job.c_buf.data();
    d.ldc = job.n;
    d.accumulate = job.options.accumulate;
    auto* backend = L.gemm->backend.get();
    // Keep the operand tiles alive until the worker is done: the job holds them.
    job.numerics = L.gemm->pool->submit([backend, d] { backend->gemm(d); });
  }
  // Start-up, then compute and streaming side by side.
  job.pending = 1;
  L.sched.schedule_in(
      timing.startup(),
      [holder, compute] {
        GemmJob& j = *holder;
        ++j.pending;  // the compute timer
        j.launch->sched.schedule_in(
            compute, [holder] { arrive(*holder); }, 0, "gemm compute");
        stream_ref(j, j.a);
        stream_ref(j, j.b);
        ++j.pending;
        j.launch->sys.network().write(
            j.pe->global_pe, j.out.addr,
            static_cast<std::uint64_t>(j.m * j.n) * dtype_size(j.out_dtype),
            [holder] { arrive(*holder); });
        arrive(j);  // the start-up
      },
      0, "gemm start");
}

void finish_job(GemmJob& job) {
  LaunchState& L = *job.launch;
  PeState& pe = *job.pe;
  const emu::Tick end = L.sched.now();
  if (job.held) {
    L.gemm->held->complete(*job.held);
  } else if (job.numerics.valid()) {
    job.numerics.get();  // rethrows a backend error into this callback
    L.memory->write(job.out.addr, job.c_buf.data(), job.c_buf.size());
  }
  pe.gemm_busy += end - job.started;
  pe.flops += components::GemmTimingModel::flops(static_cast<std::uint64_t>(job.m),
                                                 static_cast<std::uint64_t>(job.n),
                                                 static_cast<std::uint64_t>(job.k));
  if (L.tracing(pe))
    L.trace_slice(pe, true, "gemm", job.started, end,
                  fmt::format(R"({{"M":{},"N":{},"K":{},"dtype":"{}","out_dtype":"{}"}})", job.m,
                              job.n, job.k, dtype_name(job.in), dtype_name(job.out_dtype)));
  auto handle = job.handle;
  // Drop the finished job (this frees its buffers and operand tiles), then start the next.
  pe.gemm_queue.pop_front();
  handle->done.fire();
  if (!pe.gemm_queue.empty()) start_job(pe.gemm_queue.front());
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
  auto job = std::make_shared<GemmJob>();
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
  job->m = m;
  job->n = n;
  job->k = ka;
  job->in = ai.dtype;
  job->out_dtype = out_dtype;
  job->options = options;
  job->a = a;
  job->b = b;
  job->out = out;
  pe.gemm_queue.push_back(job);
  if (pe.gemm_queue.size() == 1) start_job(job);
  return job->handle;
}

void wait_gemm(LaunchState& launch, tl::HandleState& h, std::uint32_t program,
               std::uint32_t epoch) {
  h.done.wait();
  if (launch.log && h.logged_op) launch.log->waited(program, h.logged_op, epoch);
}

void drop_gemm_queue(PeState& pe) {
  for (const auto& job : pe.gemm_queue)
    if (job->numerics.valid()) job->numerics.wait();  // its errors do not matter any more
  pe.gemm_queue.clear();
}

}  // namespace cubesim::detail
