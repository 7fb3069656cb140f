#include "triton_emu/backends/cpu_openblas.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "triton_emu/backends/cpu_i32_gemm.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

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
      throw std::invalid_argument("cpu-openblas gemm: size or leading dimension " +
                                  std::to_string(v) +
                                  " exceeds 2^31 - 1, the largest OpenBLAS's 32-bit interface takes");
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

}  // namespace

CpuOpenblasGemm::CpuOpenblasGemm() : CpuOpenblasGemm(Options{}) {}

CpuOpenblasGemm::CpuOpenblasGemm(Options options) : options_(options) { set_concurrency(1); }

int CpuOpenblasGemm::preferred_concurrency() const { return cpu_cores_available(); }

void CpuOpenblasGemm::set_concurrency(int callers) {
  threads_per_call_ = threads_per_call(callers);
  set_openblas_threads(threads_per_call_);
}

std::string CpuOpenblasGemm::describe() const {
  return "f32: OpenBLAS sgemm; f16/bf16: " + std::string(convert_isa_name(options_.isa)) +
         " conversion + sgemm; i32: blocked loop; " + std::to_string(threads_per_call_.load()) +
         " thread(s) per call";
}

std::int64_t CpuOpenblasGemm::panel_rows(const GemmDesc& d) const {
  const bool converts = d.in_dtype != DType::f32 || d.out_dtype != DType::f32;
  if (!converts || options_.panel_bytes <= 0 || d.M <= 0) return d.M;
  // Rows whose f32 A and C parts fit the budget, but at least N: every sgemm call re-packs all of
  // B (K x N), which costs about what converting N/2 rows of A through memory would.
  const std::int64_t row_bytes = 4 * (d.K + d.N);
  std::int64_t rows = std::max({options_.panel_bytes / std::max<std::int64_t>(row_bytes, 1), d.N,
                                std::int64_t{16}});
  rows = (rows + 15) / 16 * 16;  // whole register tiles for sgemm's kernels
  return std::min(rows, d.M);
}

void CpuOpenblasGemm::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  if (d.in_dtype == DType::i32) return cpu_i32_gemm(d);
  check_blas_int(d);
  gemm_float(d);
}

void CpuOpenblasGemm::gemm_float(const GemmDesc& d) const {
  const std::int64_t M = d.M, N = d.N, K = d.K;
  if (M == 0 || N == 0) return;
  if (K == 0) {  // op(A) op(B) is all zeros: C keeps its value or becomes +0 (all-zero bits)
    if (!d.accumulate)
      for (std::int64_t i = 0; i < M; ++i)
        std::memset(at(d.c, d.out_dtype, i * d.ldc), 0, N * dtype_size(d.out_dtype));
    return;
  }
  const float beta = d.accumulate ? 1.0f : 0.0f;
  if (d.in_dtype == DType::f32 && d.out_dtype == DType::f32) {
    sgemm(d.trans_a, d.trans_b, M, N, K, static_cast<const float*>(d.a), d.lda,
          static_cast<const float*>(d.b), d.ldb, beta, static_cast<float*>(d.c), d.ldc);
    return;
  }

  // B is converted whole: every panel's sgemm reads all of it.
  const float* bf = static_cast<const float*>(d.b);
  std::int64_t ldbf = d.ldb;
  std::unique_ptr<float[]> b_buf;
  if (d.in_dtype != DType::f32) {
    const std::int64_t rows = d.trans_b ? N : K, cols = d.trans_b ? K : N;
    b_buf = f32_buffer(rows * cols);
    convert_block(d.in_dtype, d.b, d.ldb, DType::f32, b_buf.get(), cols, rows, cols,
                  options_.isa);
    bf = b_buf.get();
    ldbf = cols;
  }

  const std::int64_t mp = panel_rows(d);
  std::unique_ptr<float[]> a_buf, c_buf;
  if (d.in_dtype != DType::f32) a_buf = f32_buffer(mp * K);
  if (d.out_dtype != DType::f32) c_buf = f32_buffer(mp * N);

  for (std::int64_t i0 = 0; i0 < M; i0 += mp) {
    const std::int64_t m = std::min(mp, M - i0);
    // Rows i0 .. i0 + m of op(A): a row block of A, or a column block of A stored K x M.
    const void* a_panel = at(d.a, d.in_dtype, d.trans_a ? i0 : i0 * d.lda);
    const float* af = static_cast<const float*>(a_panel);
    std::int64_t ldaf = d.lda;
    if (a_buf) {
      if (d.trans_a) {
        convert_block(d.in_dtype, a_panel, d.lda, DType::f32, a_buf.get(), m, K, m, options_.isa);
        ldaf = m;
      } else {
        convert_block(d.in_dtype, a_panel, d.lda, DType::f32, a_buf.get(), K, m, K, options_.isa);
        ldaf = K;
      }
      af = a_buf.get();
    }
    void* c_panel = at(d.c, d.out_dtype, i0 * d.ldc);
    float* cf = static_cast<float*>(c_panel);
    std::int64_t ldcf = d.ldc;
    if (c_buf) {
      cf = c_buf.get();
      ldcf = N;
      if (d.accumulate)
        convert_block(d.out_dtype, c_panel, d.ldc, DType::f32, cf, N, m, N, options_.isa);
    }
    sgemm(d.trans_a, d.trans_b, m, N, K, af, ldaf, bf, ldbf, beta, cf, ldcf);
    if (c_buf) convert_block(DType::f32, cf, N, d.out_dtype, c_panel, d.ldc, m, N, options_.isa);
  }
}

}  // namespace cubesim::backends
