#pragma once
// GEMM on oneDNN's matmul primitive. Its worth here is bf16 on CPUs with AMX (Sapphire Rapids:
// 400-615 GFLOP/s on 2 cores against sgemm's 156-169); on CPUs without AVX512-BF16 or AMX,
// oneDNN 2.6 has no bf16 or f16 matmul at all, and its f16 path elsewhere converts inside at
// 11-39 GFLOP/s. Primitives are slow to create (the implementation search), so they are cached
// by everything that shapes them; the cache is shared by all calling threads.
//
// f8 operands are converted to bf16 (exactly) for the bf16 matmul. i8 runs on oneDNN's s8 matmul
// where it is exact (VNNI or AMX: without them oneDNN sums pairs of products in saturating 16-bit
// lanes) and K <= kMaxExactInt8K, else on cpu_integer_gemm, as i32 and i64 always do.

#include <cstdint>
#include <memory>

#include "triton_emu/backends/cpu_threads.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

class CpuOnednnGemm final : public GemmBackend {
 public:
  CpuOnednnGemm();
  ~CpuOnednnGemm() override;
  CpuOnednnGemm(const CpuOnednnGemm&) = delete;
  CpuOnednnGemm& operator=(const CpuOnednnGemm&) = delete;

  std::string_view name() const override { return "cpu-onednn"; }
  // Throws std::runtime_error when oneDNN has no matmul for the dtypes on this CPU.
  void gemm(const GemmDesc& d) override;
  // gemm() with a team of `threads`; `d` already validated.
  void gemm_on_threads(const GemmDesc& d, int threads);
  int preferred_concurrency() const override;
  void set_threads_per_call(int threads) override { threads_.set_fixed(threads); }
  std::string describe() const override;

  // Whether gemm() computes `in` inputs on this CPU: integers always (the loop where oneDNN has
  // none), floating-point dtypes when oneDNN has a matmul for them here (probed once per dtype;
  // f8 when it has bf16).
  bool supports(DType in) const;
  // Whether oneDNN's s8 matmul is exact here (its ISA has VNNI or AMX).
  static bool exact_int8();
  // The longest K for which no partial sum of i8 products (even with oneDNN's +128 shift of a
  // signed source, |255 * 128| per product) can leave 32 bits.
  static constexpr std::int64_t kMaxExactInt8K = 65536;
  // Whether oneDNN runs on AMX here (its effective ISA is avx512_core_amx).
  static bool uses_amx();
  // oneDNN's effective ISA, for logs.
  static std::string isa_name();
  // Primitives in the cache.
  std::size_t cached_primitives() const;

 private:
  void gemm_f8(const GemmDesc& d, int threads);
  void gemm_int8(const GemmDesc& d, int threads);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  CallThreads threads_;
};

}  // namespace cubesim::backends
