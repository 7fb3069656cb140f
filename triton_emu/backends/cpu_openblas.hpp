#pragma once
// GEMM on OpenBLAS's sgemm. f16 and bf16 operands are converted to f32 (vectorised, see
// cpu_convert.hpp) and an f16 or bf16 C is converted back; i32 goes to cpu_i32_gemm.
//
// A is converted in panels of rows that stay in cache, each multiplied as soon as it is ready,
// instead of converting all of A first: for the skinny GEMMs of a sharded problem (N = 64) a
// whole-A conversion writes and re-reads an f32 copy of A from memory, which costs as much as
// the multiplication itself (128 flops per element of A).

#include <atomic>
#include <cstdint>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

class CpuOpenblasGemm final : public GemmBackend {
 public:
  struct Options {
    // Bytes of f32 A-panel + C-panel rows converted per sgemm call; 0 converts whole matrices.
    std::int64_t panel_bytes = std::int64_t{1} << 20;
    ConvertIsa isa = best_convert_isa();
  };

  CpuOpenblasGemm();
  explicit CpuOpenblasGemm(Options options);

  std::string_view name() const override { return "cpu-openblas"; }
  void gemm(const GemmDesc& d) override;
  int preferred_concurrency() const override;
  void set_concurrency(int callers) override;
  std::string describe() const override;

  // Rows of op(A) per sgemm call for this shape (M when it does not split).
  std::int64_t panel_rows(const GemmDesc& d) const;

 private:
  void gemm_float(const GemmDesc& d) const;

  Options options_;
  std::atomic<int> threads_per_call_{1};
};

}  // namespace cubesim::backends
