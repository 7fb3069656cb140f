#include "triton_emu/backends/cpu_backend.hpp"

#include <string>

#include "triton_emu/backends/cpu_integer_gemm.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

namespace cubesim::backends {

std::string_view cpu_gemm_path_name(CpuGemmPath path) {
  switch (path) {
    case CpuGemmPath::openblas:
      return "openblas";
    case CpuGemmPath::onednn:
      return "onednn";
    case CpuGemmPath::integer_loop:
      return "integer-loop";
  }
  return "?";
}

CpuGemmBackend::CpuGemmBackend() {
  paths_[static_cast<std::size_t>(DType::f32)] = CpuGemmPath::openblas;
  paths_[static_cast<std::size_t>(DType::f16)] = CpuGemmPath::openblas;
  // Measured faster only on AMX; on AVX512-BF16 without AMX it is unmeasured, so the known path.
  const bool onednn_bf16 = CpuOnednnGemm::uses_amx() && onednn_.supports(DType::bf16);
  const CpuGemmPath bf16 = onednn_bf16 ? CpuGemmPath::onednn : CpuGemmPath::openblas;
  paths_[static_cast<std::size_t>(DType::bf16)] = bf16;
  paths_[static_cast<std::size_t>(DType::f8e4m3)] = bf16;
  paths_[static_cast<std::size_t>(DType::f8e5m2)] = bf16;
  paths_[static_cast<std::size_t>(DType::i8)] =
      CpuOnednnGemm::exact_int8() ? CpuGemmPath::onednn : CpuGemmPath::integer_loop;
  paths_[static_cast<std::size_t>(DType::i32)] = CpuGemmPath::integer_loop;
  paths_[static_cast<std::size_t>(DType::i64)] = CpuGemmPath::integer_loop;
}

void CpuGemmBackend::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  const CallThreads::Scope scope(threads_);
  switch (path(d.in_dtype)) {
    case CpuGemmPath::openblas:
      return openblas_.gemm_on_threads(d, scope.threads());
    case CpuGemmPath::onednn:
      return onednn_.gemm_on_threads(d, scope.threads());
    case CpuGemmPath::integer_loop:
      return cpu_integer_gemm(d, scope.threads());
  }
}

int CpuGemmBackend::preferred_concurrency() const {
  return openblas_.preferred_concurrency();
}

std::string CpuGemmBackend::describe() const {
  std::string s = "cpu:";
  for (DType t : kAllDTypes) {
    if (!gemm_input_supported(t)) continue;
    s += std::string(" ") + std::string(dtype_name(t)) + "=" +
         std::string(cpu_gemm_path_name(path(t)));
    if (path(t) == CpuGemmPath::openblas && (t == DType::f16 || t == DType::bf16))
      s += "+" + std::string(convert_isa_name(best_convert_isa()));
  }
  const int fixed = threads_.fixed();
  return s + "; oneDNN ISA " + CpuOnednnGemm::isa_name() + "; threads per call: " +
         (fixed > 0 ? std::to_string(fixed)
                    : std::to_string(cpu_cores_available()) + " cores / calls in flight");
}

}  // namespace cubesim::backends
