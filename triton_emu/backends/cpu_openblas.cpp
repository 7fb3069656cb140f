#include "triton_emu/backends/cpu_openblas.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "triton_emu/backends/cpu_integer_gemm.hpp"

namespace cubesim::backends {
namespace {

const void* at(const void* p, DType t, std::int64_t elements) {
  return static_cast<const unsigned char*>(p) + elements * dtype_size(t);
}
void* at(void* p, DType t, std::int64_t elements) {
  return static_cast<unsigned char*>(p) + elements * dtype_size(t);
}

std::unique_ptr<float[]> f32_buffer(std::int64_t elements) {
  return std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(elements));
}

// Debian's OpenBLAS takes 32-bit sizes (blasint is int).
void check_blas_int(const GemmDesc& d) {
  for (std::int64_t v : {d.M, d.N, d.K, d.lda, d.ldb, d.ldc})
    if (v > INT_MAX)
      throw std::invalid_argument(
          "cpu-openblas gemm: size or leading dimension " + std::to_string(v) +
          " exceeds 2^31 - 1, the largest OpenBLAS's 32-bit interface takes");
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

// Below this many flops a call stays on one thread: a parallel region costs a few microseconds.
constexpr double kMinFlopsPerThread = 4e6;

// A block of C: rows [i0, i1), columns [j0, j1).
struct Block {
  std::int64_t i0, i1, j0, j1;
};

// The f32 view of B that every block reads (converted once, shared).
struct F32B {
  const float* data;
  std::int64_t ld;
};

// One block of C, panel by panel of op(A) rows. Scratch buffers come from the caller so that
// nothing allocates (or throws) inside a parallel region.
void run_block(const GemmDesc& d, const F32B& b, const Block& blk, std::int64_t mp, float* a_buf,
               float* c_buf, ConvertIsa isa) {
  const std::int64_t K = d.K, n = blk.j1 - blk.j0;
  const float beta = d.accumulate ? 1.0f : 0.0f;
  // Columns j0.. of op(B): columns of B, or rows of B stored N x K.
  const float* bf = b.data + (d.trans_b ? blk.j0 * b.ld : blk.j0);
  for (std::int64_t i0 = blk.i0; i0 < blk.i1; i0 += mp) {
    const std::int64_t m = std::min(mp, blk.i1 - i0);
    // Rows i0.. of op(A): a row block of A, or a column block of A stored K x M.
    const void* a_panel = at(d.a, d.in_dtype, d.trans_a ? i0 : i0 * d.lda);
    const float* af = static_cast<const float*>(a_panel);
    std::int64_t ldaf = d.lda;
    if (a_buf != nullptr) {
      if (d.trans_a) {
        convert_block(d.in_dtype, a_panel, d.lda, DType::f32, a_buf, m, K, m, isa);
        ldaf = m;
      } else {
        convert_block(d.in_dtype, a_panel, d.lda, DType::f32, a_buf, K, m, K, isa);
        ldaf = K;
      }
      af = a_buf;
    }
    void* c_panel = at(d.c, d.out_dtype, i0 * d.ldc + blk.j0);
    float* cf = static_cast<float*>(c_panel);
    std::int64_t ldcf = d.ldc;
    if (c_buf != nullptr) {
      cf = c_buf;
      ldcf = n;
      if (d.accumulate) convert_block(d.out_dtype, c_panel, d.ldc, DType::f32, cf, n, m, n, isa);
    }
    sgemm(d.trans_a, d.trans_b, m, n, K, af, ldaf, bf, b.ld, beta, cf, ldcf);
    if (c_buf != nullptr) convert_block(DType::f32, cf, n, d.out_dtype, c_panel, d.ldc, m, n, isa);
  }
}

// Splits [0, extent) into `parts` ranges whose starts are multiples of 16 (whole register tiles).
std::vector<std::int64_t> split(std::int64_t extent, int parts) {
  std::vector<std::int64_t> cuts{0};
  for (int p = 1; p < parts; ++p)
    cuts.push_back(std::min(extent, (extent * p / parts + 15) / 16 * 16));
  cuts.push_back(extent);
  return cuts;
}

}  // namespace

CpuOpenblasGemm::CpuOpenblasGemm() : CpuOpenblasGemm(Options{}) {}

CpuOpenblasGemm::CpuOpenblasGemm(Options options) : options_(options) {
  if (options_.own_threads) set_openblas_threads(1);
}

int CpuOpenblasGemm::preferred_concurrency() const {
  return cpu_cores_available();
}

std::string CpuOpenblasGemm::describe() const {
  const int fixed = threads_.fixed();
  return "f32: OpenBLAS sgemm; f16/bf16: " + std::string(convert_isa_name(options_.isa)) +
         " conversion + sgemm; f8: table conversion + sgemm; i8/i32/i64: blocked loop; threads "
         "per call: " +
         (fixed > 0 ? std::to_string(fixed) : "cores / calls in flight");
}

std::int64_t CpuOpenblasGemm::panel_rows(const GemmDesc& d, std::int64_t rows,
                                         std::int64_t cols) const {
  const bool converts = d.in_dtype != DType::f32 || d.out_dtype != DType::f32;
  if (!converts || options_.panel_bytes <= 0 || rows <= 0) return std::max<std::int64_t>(rows, 1);
  // Rows whose f32 A and C parts fit the budget, but at least `cols`: every sgemm call re-packs
  // its K x cols of B, which costs about what converting cols/2 rows of A through memory would.
  const std::int64_t row_bytes = 4 * (d.K + cols);
  std::int64_t mp = std::max(
      {options_.panel_bytes / std::max<std::int64_t>(row_bytes, 1), cols, std::int64_t{16}});
  mp = (mp + 15) / 16 * 16;
  return std::min(mp, rows);
}

void CpuOpenblasGemm::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  const CallThreads::Scope scope(threads_);
  gemm_on_threads(d, scope.threads());
}

void CpuOpenblasGemm::gemm_on_threads(const GemmDesc& d, int threads) {
  const double flops =
      2.0 * static_cast<double>(d.M) * static_cast<double>(d.N) * static_cast<double>(d.K);
  threads = std::max(1, std::min<int>(threads, static_cast<int>(flops / kMinFlopsPerThread)));
  if (is_integer(d.in_dtype)) return cpu_integer_gemm(d, threads);
  check_blas_int(d);
  if (!options_.own_threads) {
    set_openblas_threads(threads);
    threads = 1;
  }
  gemm_float(d, threads);
}

void CpuOpenblasGemm::gemm_float(const GemmDesc& d, int threads) const {
  const std::int64_t M = d.M, N = d.N, K = d.K;
  if (M == 0 || N == 0) return;
  if (K == 0) {  // op(A) op(B) is all zeros: C keeps its value or becomes +0 (all-zero bits)
    if (!d.accumulate)
      for (std::int64_t i = 0; i < M; ++i)
        std::memset(at(d.c, d.out_dtype, i * d.ldc), 0,
                    static_cast<std::size_t>(N) * dtype_size(d.out_dtype));
    return;
  }

  // One block of C per thread, cut along the longer side: threads then share neither rows of A
  // (converted per block) nor columns of C. Cutting N makes each block convert all of A, which
  // is the smaller operand exactly when N > M.
  const bool split_rows = M >= N;
  const std::vector<std::int64_t> cuts = split(split_rows ? M : N, threads);
  std::vector<Block> blocks;
  for (std::size_t p = 0; p + 1 < cuts.size(); ++p) {
    if (cuts[p] == cuts[p + 1]) continue;
    blocks.push_back(split_rows ? Block{cuts[p], cuts[p + 1], 0, N}
                                : Block{0, M, cuts[p], cuts[p + 1]});
  }
  const int parts = static_cast<int>(blocks.size());

  // Scratch for every block, allocated here: nothing may throw inside the parallel region.
  const bool convert_a = d.in_dtype != DType::f32, convert_c = d.out_dtype != DType::f32;
  std::vector<std::int64_t> mp(blocks.size());
  std::vector<std::unique_ptr<float[]>> a_bufs(blocks.size()), c_bufs(blocks.size());
  for (std::size_t p = 0; p < blocks.size(); ++p) {
    const Block& blk = blocks[p];
    mp[p] = panel_rows(d, blk.i1 - blk.i0, blk.j1 - blk.j0);
    if (convert_a) a_bufs[p] = f32_buffer(mp[p] * K);
    if (convert_c) c_bufs[p] = f32_buffer(mp[p] * (blk.j1 - blk.j0));
  }
  F32B b{static_cast<const float*>(d.b), d.ldb};
  std::unique_ptr<float[]> b_buf;
  const std::int64_t b_rows = d.trans_b ? N : K, b_cols = d.trans_b ? K : N;
  if (convert_a) {
    b_buf = f32_buffer(b_rows * b_cols);
    b = {b_buf.get(), b_cols};
  }

  auto convert_b_rows = [&](std::int64_t r0, std::int64_t r1) {
    convert_block(d.in_dtype, at(d.b, d.in_dtype, r0 * d.ldb), d.ldb, DType::f32,
                  b_buf.get() + r0 * b_cols, b_cols, r1 - r0, b_cols, options_.isa);
  };
  auto block = [&](int p) {
    const auto i = static_cast<std::size_t>(p);
    run_block(d, b, blocks[i], mp[i], a_bufs[i].get(), c_bufs[i].get(), options_.isa);
  };
  if (parts == 1) {
    if (convert_a) convert_b_rows(0, b_rows);
    block(0);
    return;
  }
#pragma omp parallel num_threads(parts)
  {
    // The runtime may give fewer threads than asked (OMP_THREAD_LIMIT, nesting): stride by the
    // team's real size so that every block still runs.
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    if (convert_a) {  // every block reads all of B: convert it together first
      convert_b_rows(b_rows * t / team, b_rows * (t + 1) / team);
#pragma omp barrier
    }
    for (int p = t; p < parts; p += team) block(p);
  }
}

}  // namespace cubesim::backends
