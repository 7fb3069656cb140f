#include "triton_emu/backends/cpu_integer_gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

namespace cubesim::backends {
namespace {

constexpr std::int64_t kKBlock = 256;  // rows of B per pass
constexpr std::int64_t kNBlock = 512;  // columns per accumulator row: 256 KiB of i32 B per block

// C[i, 0..nb) (+)= sum_k ap[i, k] * bp[k, 0..nb) for every row i, in wrapping unsigned `Acc`.
// ap is M x kb (row stride kb), bp is kb x nb (row stride ldbp). Inlined into the clones below.
template <class Acc, class Out>
[[gnu::always_inline]] inline void block_kernel(const Acc* ap, std::int64_t m, std::int64_t kb,
                                                const Acc* bp, std::int64_t ldbp, std::int64_t nb,
                                                Out* c, std::int64_t ldc, bool load_c) {
  Acc acc[kNBlock];
  for (std::int64_t i = 0; i < m; ++i) {
    Out* crow = c + i * ldc;
    for (std::int64_t j = 0; j < nb; ++j) acc[j] = load_c ? static_cast<Acc>(crow[j]) : 0;
    const Acc* arow = ap + i * kb;
    for (std::int64_t k = 0; k < kb; ++k) {
      const Acc a = arow[k];
      const Acc* brow = bp + k * ldbp;
      for (std::int64_t j = 0; j < nb; ++j) acc[j] += a * brow[j];
    }
    // Unsigned -> signed is modular since C++20: the two's complement reading of the wrapped sum.
    for (std::int64_t j = 0; j < nb; ++j) crow[j] = static_cast<Out>(acc[j]);
  }
}

// Cloned for AVX2 (8 lanes of vpmulld for i32) with a generic fallback chosen at load time.
__attribute__((target_clones("avx2", "default"))) void block_kernel_32(
    const std::uint32_t* ap, std::int64_t m, std::int64_t kb, const std::uint32_t* bp,
    std::int64_t ldbp, std::int64_t nb, std::int32_t* c, std::int64_t ldc, bool load_c) {
  block_kernel(ap, m, kb, bp, ldbp, nb, c, ldc, load_c);
}
__attribute__((target_clones("avx2", "default"))) void block_kernel_64(
    const std::uint64_t* ap, std::int64_t m, std::int64_t kb, const std::uint64_t* bp,
    std::int64_t ldbp, std::int64_t nb, std::int64_t* c, std::int64_t ldc, bool load_c) {
  block_kernel(ap, m, kb, bp, ldbp, nb, c, ldc, load_c);
}
void run_block(const std::uint32_t* ap, std::int64_t m, std::int64_t kb, const std::uint32_t* bp,
               std::int64_t ldbp, std::int64_t nb, std::int32_t* c, std::int64_t ldc, bool load_c) {
  block_kernel_32(ap, m, kb, bp, ldbp, nb, c, ldc, load_c);
}
void run_block(const std::uint64_t* ap, std::int64_t m, std::int64_t kb, const std::uint64_t* bp,
               std::int64_t ldbp, std::int64_t nb, std::int64_t* c, std::int64_t ldc, bool load_c) {
  block_kernel_64(ap, m, kb, bp, ldbp, nb, c, ldc, load_c);
}

// In: the input element type; Acc: the unsigned accumulator of Out's width.
template <class In, class Acc, class Out>
void integer_gemm(const GemmDesc& d, int threads) {
  const std::int64_t M = d.M, N = d.N, K = d.K;
  if (M == 0 || N == 0) return;
  auto* c = static_cast<Out*>(d.c);
  if (K == 0) {
    if (!d.accumulate)
      for (std::int64_t i = 0; i < M; ++i) std::fill_n(c + i * d.ldc, N, Out{0});
    return;
  }
  const auto* a = static_cast<const In*>(d.a);
  const auto* b = static_cast<const In*>(d.b);
  const std::int64_t kb_max = std::min(K, kKBlock);
  // A thread per 2^21 multiply-adds at least (a parallel region costs microseconds), one per row
  // at most.
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const int parts = static_cast<int>(std::max(
      1.0, std::min({static_cast<double>(threads), macs / 2097152.0, static_cast<double>(M)})));
  // Packed as unsigned so that the kernel's arithmetic wraps instead of overflowing; a signed
  // input converts to it modulo 2^n, which is its value in the wrapping arithmetic.
  auto ap = std::make_unique_for_overwrite<Acc[]>(static_cast<std::size_t>(M * kb_max));
  auto bp = std::make_unique_for_overwrite<Acc[]>(static_cast<std::size_t>(kb_max * N));

  for (std::int64_t k0 = 0; k0 < K; k0 += kKBlock) {
    const std::int64_t kb = std::min(kKBlock, K - k0);
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t k = 0; k < kb; ++k)
        ap[i * kb + k] =
            static_cast<Acc>(d.trans_a ? a[(k0 + k) * d.lda + i] : a[i * d.lda + k0 + k]);
    for (std::int64_t k = 0; k < kb; ++k)
      for (std::int64_t j = 0; j < N; ++j)
        bp[k * N + j] =
            static_cast<Acc>(d.trans_b ? b[j * d.ldb + k0 + k] : b[(k0 + k) * d.ldb + j]);
    const bool load_c = k0 > 0 || d.accumulate;
    // Rows of C in one contiguous range per thread; the packed blocks are shared, read-only.
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int p = 0; p < parts; ++p) {
      const std::int64_t r0 = M * p / parts, r1 = M * (p + 1) / parts;
      for (std::int64_t j0 = 0; j0 < N; j0 += kNBlock)
        run_block(ap.get() + r0 * kb, r1 - r0, kb, bp.get() + j0, N, std::min(kNBlock, N - j0),
                  c + r0 * d.ldc + j0, d.ldc, load_c);
    }
  }
}

}  // namespace

void cpu_integer_gemm(const GemmDesc& d, int threads) {
  switch (d.in_dtype) {
    case DType::i8:
      return integer_gemm<std::int8_t, std::uint32_t, std::int32_t>(d, threads);
    case DType::i64:
      return integer_gemm<std::int64_t, std::uint64_t, std::int64_t>(d, threads);
    default:  // i32 (validate_gemm_desc admits no other integer input)
      return integer_gemm<std::int32_t, std::uint32_t, std::int32_t>(d, threads);
  }
}

}  // namespace cubesim::backends
