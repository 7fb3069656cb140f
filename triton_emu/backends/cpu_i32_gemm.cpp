#include "triton_emu/backends/cpu_i32_gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

namespace cubesim::backends {
namespace {

constexpr std::int64_t kKBlock = 256;  // rows of B per pass
constexpr std::int64_t kNBlock = 512;  // columns per accumulator row: 256 KiB of B per block

// C[i, 0..nb) (+)= sum_k ap[i, k] * bp[k, 0..nb) for every row i, in wrapping uint32.
// ap is M x kb (row stride kb), bp is kb x nb (row stride ldbp). Cloned for AVX2 (8 lanes of
// vpmulld) with a generic fallback chosen at load time.
__attribute__((target_clones("avx2", "default"))) void block_kernel(
    const std::uint32_t* ap, std::int64_t m, std::int64_t kb, const std::uint32_t* bp,
    std::int64_t ldbp, std::int64_t nb, std::int32_t* c, std::int64_t ldc, bool load_c) {
  std::uint32_t acc[kNBlock];
  for (std::int64_t i = 0; i < m; ++i) {
    std::int32_t* crow = c + i * ldc;
    for (std::int64_t j = 0; j < nb; ++j) acc[j] = load_c ? static_cast<std::uint32_t>(crow[j]) : 0;
    const std::uint32_t* arow = ap + i * kb;
    for (std::int64_t k = 0; k < kb; ++k) {
      const std::uint32_t a = arow[k];
      const std::uint32_t* brow = bp + k * ldbp;
      for (std::int64_t j = 0; j < nb; ++j) acc[j] += a * brow[j];
    }
    // uint32 -> int32 is modular since C++20: the two's complement reading of the wrapped sum.
    for (std::int64_t j = 0; j < nb; ++j) crow[j] = static_cast<std::int32_t>(acc[j]);
  }
}

}  // namespace

void cpu_i32_gemm(const GemmDesc& d, int threads) {
  const std::int64_t M = d.M, N = d.N, K = d.K;
  if (M == 0 || N == 0) return;
  auto* c = static_cast<std::int32_t*>(d.c);
  if (K == 0) {
    if (!d.accumulate)
      for (std::int64_t i = 0; i < M; ++i) std::fill_n(c + i * d.ldc, N, 0);
    return;
  }
  const auto* a = static_cast<const std::int32_t*>(d.a);
  const auto* b = static_cast<const std::int32_t*>(d.b);
  const std::int64_t kb_max = std::min(K, kKBlock);
  // A thread per 2^21 multiply-adds at least (a parallel region costs microseconds), one per row
  // at most.
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const int parts = static_cast<int>(std::max(
      1.0, std::min({static_cast<double>(threads), macs / 2097152.0, static_cast<double>(M)})));
  // Packed as uint32 so that the kernel's arithmetic wraps instead of overflowing.
  auto ap = std::make_unique_for_overwrite<std::uint32_t[]>(static_cast<std::size_t>(M * kb_max));
  auto bp = std::make_unique_for_overwrite<std::uint32_t[]>(static_cast<std::size_t>(kb_max * N));

  for (std::int64_t k0 = 0; k0 < K; k0 += kKBlock) {
    const std::int64_t kb = std::min(kKBlock, K - k0);
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t k = 0; k < kb; ++k)
        ap[i * kb + k] =
            static_cast<std::uint32_t>(d.trans_a ? a[(k0 + k) * d.lda + i] : a[i * d.lda + k0 + k]);
    for (std::int64_t k = 0; k < kb; ++k)
      for (std::int64_t j = 0; j < N; ++j)
        bp[k * N + j] =
            static_cast<std::uint32_t>(d.trans_b ? b[j * d.ldb + k0 + k] : b[(k0 + k) * d.ldb + j]);
    const bool load_c = k0 > 0 || d.accumulate;
    // Rows of C in one contiguous range per thread; the packed blocks are shared, read-only.
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int p = 0; p < parts; ++p) {
      const std::int64_t r0 = M * p / parts, r1 = M * (p + 1) / parts;
      for (std::int64_t j0 = 0; j0 < N; j0 += kNBlock)
        block_kernel(ap.get() + r0 * kb, r1 - r0, kb, bp.get() + j0, N, std::min(kNBlock, N - j0),
                     c + r0 * d.ldc + j0, d.ldc, load_c);
    }
  }
}

}  // namespace cubesim::backends
