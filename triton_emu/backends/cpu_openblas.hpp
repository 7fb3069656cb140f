#pragma once
// GEMM on OpenBLAS's sgemm. f16, bf16 and f8 operands are converted to f32 (cpu_convert.hpp) and
// a C of those dtypes is converted back; integer GEMMs go to cpu_integer_gemm.
//
// A is converted in panels of rows that stay in cache, each multiplied as soon as it is ready,
// instead of converting all of A first: for the skinny GEMMs of a sharded problem (N = 64) a
// whole-A conversion writes and re-reads an f32 copy of A through memory, which costs as much as
// the multiplication itself (128 flops per element of A).
//
// Threads: by default the call splits C into one block of rows (or columns, when N > M) per
// thread and runs single-threaded sgemm on each block, so the conversions run in parallel too
// and the thread count is per call (OpenBLAS's own count is process-wide, so it could not follow
// the calls in flight). OpenBLAS is therefore set to one thread, for the whole process.

#include <cstdint>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/backends/cpu_threads.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {

class CpuOpenblasGemm final : public GemmBackend {
 public:
  struct Options {
    // Bytes of f32 A-panel + C-panel rows converted per sgemm call; 0 converts whole blocks.
    std::int64_t panel_bytes = std::int64_t{1} << 20;
    ConvertIsa isa = best_convert_isa();
    // false: one block, panels one after another, OpenBLAS's own threads (set process-wide to
    // the call's thread count). Kept to measure against; not thread-count-safe for concurrent
    // calls that want different counts.
    bool own_threads = true;
  };

  CpuOpenblasGemm();
  explicit CpuOpenblasGemm(Options options);

  std::string_view name() const override { return "cpu-openblas"; }
  void gemm(const GemmDesc& d) override;
  // gemm() on exactly `threads` threads (fewer for small products); `d` already validated.
  void gemm_on_threads(const GemmDesc& d, int threads);
  int preferred_concurrency() const override;
  void set_threads_per_call(int threads) override { threads_.set_fixed(threads); }
  std::string describe() const override;

  // Rows of op(A) per sgemm call for this shape and block width (M when it does not split).
  std::int64_t panel_rows(const GemmDesc& d, std::int64_t rows, std::int64_t cols) const;

 private:
  void gemm_float(const GemmDesc& d, int threads) const;

  Options options_;
  CallThreads threads_;
};

}  // namespace cubesim::backends
