#include "triton_emu/backends/cpu_backend.hpp"

#include <string>

#include "triton_emu/backends/cpu_i32_gemm.hpp"
#include "triton_emu/backends/cpu_threads.hpp"

namespace cubesim::backends {

std::string_view cpu_gemm_path_name(CpuGemmPath path) {
  switch (path) {
    case CpuGemmPath::openblas: return "openblas";
    case CpuGemmPath::onednn: return "onednn";
    case CpuGemmPath::i32_loop: return "i32-loop";
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
  set_concurrency(1);
}

void CpuGemmBackend::gemm(const GemmDesc& d) {
  validate_gemm_desc(d, name());
  switch (path(d.in_dtype)) {
    case CpuGemmPath::openblas: return openblas_.gemm(d);
    case CpuGemmPath::onednn: return onednn_.gemm(d);
    case CpuGemmPath::i32_loop: return cpu_i32_gemm(d);
  }
}

int CpuGemmBackend::preferred_concurrency() const { return openblas_.preferred_concurrency(); }

void CpuGemmBackend::set_concurrency(int callers) {
  callers_ = callers;
  openblas_.set_concurrency(callers);
  onednn_.set_concurrency(callers);
}

std::string CpuGemmBackend::describe() const {
  std::string s = "cpu:";
  for (DType t : kAllDTypes) {
    s += std::string(" ") + std::string(dtype_name(t)) + "=" +
         std::string(cpu_gemm_path_name(path(t)));
    if (path(t) == CpuGemmPath::openblas && t != DType::f32)
      s += "+" + std::string(convert_isa_name(best_convert_isa()));
  }
  return s + "; oneDNN ISA " + CpuOnednnGemm::isa_name() + "; " +
         std::to_string(threads_per_call(callers_)) + " thread(s) per call";
}

}  // namespace cubesim::backends
