#include "triton_emu/backends/cpu_backend.hpp"

#include <string>

#include "triton_emu/backends/cpu_i32_gemm.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

namespace cubesim::backends {

std::string_view cpu_gemm_path_name(CpuGemmPath path) {
  switch (path) {
    case CpuGemmPath::openblas:
      return "openblas";
    case CpuGemmPath::onednn:
      return "onednn";
    case CpuGemmPath::i32_loop:
      return "i32-loop";
  }
  return "?";
}

CpuGemmBackend::CpuGemmBackend() {
  paths_[static_cast<std::size_t>(DType::f32)] = CpuGemmPath::openblas;
  paths_[static_cast<std::size_t>(DType::f16)] = CpuGemmPath::openblas;
  // Measured faster only on AMX; on AVX512-BF16 without AMX it is unmeasured, so the known path.
  const bool onednn_bf16 = CpuOnednnGemm::uses_amx() && onednn_.supports(DType::bf16);
  paths_[static_cast<std::size_t>(DType::bf16)] =
      onednn_bf16 ? CpuGemmPath::onednn : CpuGemmPath::openblas;
  paths_[static_cast<std::size_t>(DType::i32)] = CpuGemmPath::i32_loop;
}

void CpuGemmBackend::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  const CallThreads::Scope scope(threads_);
  switch (path(d.in_dtype)) {
    case CpuGemmPath::openblas:
      return openblas_.gemm_on_threads(d, scope.threads());
    case CpuGemmPath::onednn:
      return onednn_.gemm_on_threads(d, scope.threads());
    case CpuGemmPath::i32_loop:
      return cpu_i32_gemm(d, scope.threads());
  }
}

int CpuGemmBackend::preferred_concurrency() const {
  return openblas_.preferred_concurrency();
}

std::string CpuGemmBackend::describe() const {
  std::string s = "cpu:";
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::i32}) {  // the dtypes it takes
    s += std::string(" ") + std::string(dtype_name(t)) + "=" +
         std::string(cpu_gemm_path_name(path(t)));
    if (path(t) == CpuGemmPath::openblas && t != DType::f32)
      s += "+" + std::string(convert_isa_name(best_convert_isa()));
  }
  const int fixed = threads_.fixed();
  return s + "; oneDNN ISA " + CpuOnednnGemm::isa_name() + "; threads per call: " +
         (fixed > 0 ? std::to_string(fixed)
                    : std::to_string(cpu_cores_available()) + " cores / calls in flight");
}

}  // namespace cubesim::backends
