#pragma once
// The "cpu" GEMM backend: for each input dtype, the fastest measured CPU implementation on this
// machine (docs/performance.md, "GEMM backend (CPU)"):
//   f32  -> OpenBLAS sgemm (oneDNN's f32 matmul is no faster)
//   f16  -> vectorised conversion + sgemm (oneDNN 2.6 has no fast f16 matmul on any CPU)
//   bf16 -> oneDNN matmul where it runs on AMX (400-615 GFLOP/s on 2 cores against sgemm's
//           156-169, TOOLCHAIN.md), else conversion + sgemm (without AVX512-BF16 / AMX
//           oneDNN 2.6 has no bf16 matmul at all)
//   f8e4m3, f8e5m2 -> as bf16: oneDNN on the bf16 operands they convert to exactly, where bf16
//           goes to oneDNN; else table conversion to f32 + sgemm
//   i8   -> oneDNN's s8 matmul where it is exact (VNNI or AMX, cpu_onednn.hpp), else the loop
//   i32, i64 -> the blocked integer loop (cpu_integer_gemm.hpp)

#include <array>
#include <cstdint>

#include "triton_emu/backends/cpu_onednn.hpp"
#include "triton_emu/backends/cpu_openblas.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

enum class CpuGemmPath : std::uint8_t { openblas, onednn, integer_loop };

std::string_view cpu_gemm_path_name(CpuGemmPath path);

class CpuGemmBackend final : public GemmBackend {
 public:
  CpuGemmBackend();

  std::string_view name() const override { return "cpu"; }
  void gemm(const GemmDesc& d) override;
  int preferred_concurrency() const override;
  void set_threads_per_call(int threads) override { threads_.set_fixed(threads); }
  std::string describe() const override;

  // The implementation gemm() uses for `in` inputs.
  CpuGemmPath path(DType in) const { return paths_[static_cast<std::size_t>(in)]; }

 private:
  CpuOpenblasGemm openblas_;
  CpuOnednnGemm onednn_;
  std::array<CpuGemmPath, kDTypeCount> paths_{};
  CallThreads threads_;  // one count of calls in flight, whichever path they take
};

}  // namespace cubesim::backends
