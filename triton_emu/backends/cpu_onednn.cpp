#include "triton_emu/backends/cpu_onednn.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/cpu_integer_gemm.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

namespace cubesim::backends {
namespace {

using dnnl::memory;

// Everything a matmul primitive is specialised for. Pointers are not in it: one primitive serves
// any buffers of the same shape and strides.
struct Key {
  DType in, out;
  std::int64_t M, N, K, lda, ldb, ldc;
  bool trans_a, trans_b, accumulate;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = static_cast<std::size_t>(k.in) * 31 + static_cast<std::size_t>(k.out);
    for (std::int64_t v : {k.M, k.N, k.K, k.lda, k.ldb, k.ldc})
      h = h * 0x9E3779B97F4A7C15ull + static_cast<std::size_t>(v);
    return h * 8 + (k.trans_a ? 4u : 0u) + (k.trans_b ? 2u : 0u) + (k.accumulate ? 1u : 0u);
  }
};

struct Entry {
  dnnl::matmul prim;
  memory::desc a, b, c, scratch;
  bool dst_via_f32;  // oneDNN cannot write this C dtype from these inputs: write f32, convert
};

// Shapes seen in one simulation are few; a sweep may see many. Past this many the cache starts
// over (entries in use stay alive through their shared_ptr).
constexpr std::size_t kMaxCached = 4096;

memory::data_type dnnl_type(DType t) {
  switch (t) {
    case DType::f16:
      return memory::data_type::f16;
    case DType::bf16:
      return memory::data_type::bf16;
    case DType::f32:
      return memory::data_type::f32;
    case DType::i32:
      return memory::data_type::s32;
    case DType::i8:
      return memory::data_type::s8;
    default:  // f8 is converted to bf16 first, i64 never reaches oneDNN
      return memory::data_type::undef;
  }
  return memory::data_type::undef;
}

std::shared_ptr<const Entry> make_entry(const Key& k, const dnnl::engine& engine) {
  const memory::desc a({k.M, k.K}, dnnl_type(k.in),
                       k.trans_a ? memory::dims{1, k.lda} : memory::dims{k.lda, 1});
  const memory::desc b({k.K, k.N}, dnnl_type(k.in),
                       k.trans_b ? memory::dims{1, k.ldb} : memory::dims{k.ldb, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per-call scratchpad: thread-safe
  if (k.accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  auto try_make = [&](const memory::desc& c) -> std::shared_ptr<const Entry> {
    try {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine);
      return std::make_shared<const Entry>(
          Entry{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc(), false});
    } catch (const dnnl::error&) {
      return nullptr;
    }
  };
  if (dnnl_type(k.out) != memory::data_type::undef)  // f8: only through f32
    if (auto e = try_make(memory::desc({k.M, k.N}, dnnl_type(k.out), {k.ldc, 1}))) return e;
  if (k.out != DType::f32 && is_floating(k.out)) {
    if (auto e = try_make(memory::desc({k.M, k.N}, memory::data_type::f32, {k.N, 1}))) {
      auto via = std::make_shared<Entry>(*e);
      via->dst_via_f32 = true;
      return via;
    }
  }
  throw std::runtime_error("cpu-onednn gemm: oneDNN " + std::to_string(dnnl::version()->major) +
                           "." + std::to_string(dnnl::version()->minor) + " has no matmul for " +
                           std::string(dtype_name(k.in)) + " inputs on this CPU (ISA " +
                           CpuOnednnGemm::isa_name() + ")");
}

// Runs `e` on these buffers with a team of `threads`.
void execute(const Entry& e, const dnnl::engine& engine, const void* a, const void* b, void* c,
             int threads) {
  const std::size_t scratch_bytes = e.scratch.get_size();
  auto scratch = std::make_unique_for_overwrite<std::byte[]>(scratch_bytes);
  dnnl::stream stream(engine);
  // oneDNN only reads src and weights; its memory objects take non-const handles.
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(e.a, engine, const_cast<void*>(a))},
      {DNNL_ARG_WEIGHTS, memory(e.b, engine, const_cast<void*>(b))},
      {DNNL_ARG_DST, memory(e.c, engine, c)}};
  if (scratch_bytes > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(e.scratch, engine, scratch.get()));
  set_openmp_threads_for_this_thread(threads);
  e.prim.execute(stream, args);
  stream.wait();
}

}  // namespace

struct CpuOnednnGemm::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable std::mutex mutex;
  std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> cache;
  mutable std::array<std::once_flag, kDTypeCount> probed;
  mutable std::array<bool, kDTypeCount> supported{};

  std::shared_ptr<const Entry> entry(const Key& k) {
    {
      std::lock_guard lock(mutex);
      if (auto it = cache.find(k); it != cache.end()) return it->second;
    }
    // Created outside the lock, so that threads creating different primitives do not wait on
    // each other; two threads racing on one key both create it and the first insert wins.
    std::shared_ptr<const Entry> made = make_entry(k, engine);
    std::lock_guard lock(mutex);
    if (cache.size() >= kMaxCached) cache.clear();
    return cache.try_emplace(k, std::move(made)).first->second;
  }
};

CpuOnednnGemm::CpuOnednnGemm() : impl_(std::make_unique<Impl>()) {}
CpuOnednnGemm::~CpuOnednnGemm() = default;

int CpuOnednnGemm::preferred_concurrency() const {
  return cpu_cores_available();
}

bool CpuOnednnGemm::supports(DType in) const {
  if (is_integer(in)) return true;
  if (in == DType::f8e4m3 || in == DType::f8e5m2) return supports(DType::bf16);
  const auto i = static_cast<std::size_t>(in);
  std::call_once(impl_->probed[i], [&] {
    const Key probe{in, DType::f32, 16, 16, 16, 16, 16, 16, false, false, false};
    try {
      make_entry(probe, impl_->engine);
      impl_->supported[i] = true;
    } catch (const std::runtime_error&) {
      impl_->supported[i] = false;
    }
  });
  return impl_->supported[i];
}

bool CpuOnednnGemm::exact_int8() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

bool CpuOnednnGemm::uses_amx() {
  return dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
}

std::string CpuOnednnGemm::isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::all:
      return "all";
  }
  return "unknown";
}

std::size_t CpuOnednnGemm::cached_primitives() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->cache.size();
}

std::string CpuOnednnGemm::describe() const {
  const int fixed = threads_.fixed();
  return "oneDNN matmul (ISA " + isa_name() +
         "); f8: converted to bf16; i8: " + (exact_int8() ? "s8 matmul" : "blocked loop") +
         "; i32/i64: blocked loop; threads per call: " +
         (fixed > 0 ? std::to_string(fixed) : "cores / calls in flight");
}

void CpuOnednnGemm::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  const CallThreads::Scope scope(threads_);
  gemm_on_threads(d, scope.threads());
}

void CpuOnednnGemm::gemm_on_threads(const GemmDesc& d, int threads) {
  if (is_integer(d.in_dtype)) {
    if (d.in_dtype == DType::i8 && exact_int8() && d.K <= kMaxExactInt8K && d.M > 0 && d.N > 0 &&
        d.K > 0)
      return gemm_int8(d, threads);
    return cpu_integer_gemm(d, threads);
  }
  if (d.in_dtype == DType::f8e4m3 || d.in_dtype == DType::f8e5m2) return gemm_f8(d, threads);
  if (d.M == 0 || d.N == 0) return;
  if (d.K == 0) {       // oneDNN rejects empty reductions; op(A) op(B) is zero
    if (!d.accumulate)  // +0 is all-zero bits in every dtype
      for (std::int64_t i = 0; i < d.M; ++i)
        std::memset(static_cast<unsigned char*>(d.c) + i * d.ldc * dtype_size(d.out_dtype), 0,
                    static_cast<std::size_t>(d.N) * dtype_size(d.out_dtype));
    return;
  }
  const Key key{d.in_dtype, d.out_dtype, d.M,       d.N,       d.K,         d.lda,
                d.ldb,      d.ldc,       d.trans_a, d.trans_b, d.accumulate};
  const std::shared_ptr<const Entry> e = impl_->entry(key);

  std::unique_ptr<float[]> c_f32;
  void* c = d.c;
  if (e->dst_via_f32) {
    c_f32 = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(d.M * d.N));
    if (d.accumulate)
      convert_block(d.out_dtype, d.c, d.ldc, DType::f32, c_f32.get(), d.N, d.M, d.N);
    c = c_f32.get();
  }
  execute(*e, impl_->engine, d.a, d.b, c, threads);
  if (e->dst_via_f32) convert_block(DType::f32, c, d.N, d.out_dtype, d.c, d.ldc, d.M, d.N);
}

void CpuOnednnGemm::gemm_f8(const GemmDesc& d, int threads) {
  // Every f8 value is a bf16 value (3 and 2 mantissa bits against bf16's 7, a narrower exponent
  // range), so the bf16 matmul of the converted operands is the f8 product accumulated in f32.
  const std::int64_t a_rows = d.trans_a ? d.K : d.M, a_cols = d.trans_a ? d.M : d.K;
  const std::int64_t b_rows = d.trans_b ? d.N : d.K, b_cols = d.trans_b ? d.K : d.N;
  std::vector<std::uint16_t> a(static_cast<std::size_t>(a_rows * a_cols));
  std::vector<std::uint16_t> b(static_cast<std::size_t>(b_rows * b_cols));
  convert_block(d.in_dtype, d.a, d.lda, DType::bf16, a.data(), a_cols, a_rows, a_cols);
  convert_block(d.in_dtype, d.b, d.ldb, DType::bf16, b.data(), b_cols, b_rows, b_cols);
  GemmDesc wide = d;
  wide.in_dtype = DType::bf16;
  wide.a = a.data();
  wide.lda = std::max<std::int64_t>(a_cols, 1);
  wide.b = b.data();
  wide.ldb = std::max<std::int64_t>(b_cols, 1);
  gemm_on_threads(wide, threads);
}

void CpuOnednnGemm::gemm_int8(const GemmDesc& d, int threads) {
  // s8 x s8 -> s32 without a sum post-op: oneDNN may add the old C in f32, which is not exact
  // past 2^24. With accumulate the product goes to a buffer and is added here, wrapping.
  const Key key{d.in_dtype, DType::i32, d.M,  d.N, d.K, d.lda, d.ldb, d.accumulate ? d.N : d.ldc,
                d.trans_a,  d.trans_b,  false};
  const std::shared_ptr<const Entry> e = impl_->entry(key);
  std::vector<std::int32_t> product;
  void* c = d.c;
  if (d.accumulate) {
    product.resize(static_cast<std::size_t>(d.M * d.N));
    c = product.data();
  }
  execute(*e, impl_->engine, d.a, d.b, c, threads);
  if (!d.accumulate) return;
  auto* out = static_cast<std::int32_t*>(d.c);
  for (std::int64_t i = 0; i < d.M; ++i)
    for (std::int64_t j = 0; j < d.N; ++j) {
      std::int32_t& v = out[i * d.ldc + j];
      v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) +
                                    static_cast<std::uint32_t>(product[i * d.N + j]));
    }
}

}  // namespace cubesim::backends
