#include "triton_emu/backends/gemm_backend.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "triton_emu/backends/cpu_backend.hpp"

namespace cubesim::backends {

bool gemm_input_supported(DType in) {
  return in != DType::boolean;
}

DType gemm_default_out(DType in) {
  if (in == DType::i8) return DType::i32;
  if (in == DType::f8e4m3 || in == DType::f8e5m2) return DType::f32;
  return in;
}

bool gemm_pair_supported(DType in, DType out) {
  if (!gemm_input_supported(in) || !gemm_input_supported(out)) return false;
  if (is_floating(in)) return is_floating(out);
  return out == gemm_default_out(in);  // i8 and i32 -> i32, i64 -> i64
}

std::string gemm_outputs_for(DType in) {
  if (!gemm_input_supported(in)) return "none";
  if (is_floating(in)) return "f16, bf16, f32, f8e4m3 or f8e5m2";
  return std::string(dtype_name(gemm_default_out(in)));
}

namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

[[noreturn]] void fail(std::string_view backend, const std::string& what) {
  throw std::invalid_argument(std::string(backend) + " gemm: " + what);
}

// One operand: `rows` x `cols` as stored, row stride `ld`.
void check_operand(std::string_view backend, const char* name, const void* ptr, std::int64_t ld,
                   std::int64_t rows, std::int64_t cols, DType t, const char* shape) {
  const std::int64_t min_ld = cols > 1 ? cols : 1;
  if (ld < min_ld)
    fail(backend, std::string("ld") + name + " = " + std::to_string(ld) + " is less than " +
                      std::to_string(min_ld) + ", the row length of " + name + " stored " + shape +
                      " (" + std::to_string(rows) + " x " + std::to_string(cols) + ")");
  if (rows == 0 || cols == 0) return;
  if (ptr == nullptr)
    fail(backend, std::string(name) + " is null but has " + std::to_string(rows) + " x " +
                      std::to_string(cols) + " elements");
  if (reinterpret_cast<std::uintptr_t>(ptr) % dtype_size(t) != 0)
    fail(backend, std::string(name) + " is not aligned to its element size (" +
                      std::to_string(dtype_size(t)) + " bytes for " + dtype_str(t) + ")");
  // The last element's byte offset must fit in 64 bits: (rows - 1) * ld + cols elements.
  std::int64_t span = 0;
  if (__builtin_mul_overflow(rows - 1, ld, &span) || __builtin_add_overflow(span, cols, &span) ||
      __builtin_mul_overflow(span, std::int64_t{dtype_size(t)}, &span))
    fail(backend, std::string(name) + " spans more than 2^63 bytes (" + std::to_string(rows) +
                      " rows of stride " + std::to_string(ld) + ")");
}

}  // namespace

void validate_gemm_desc(const GemmDesc& d, std::string_view backend) {
  if (d.M < 0 || d.N < 0 || d.K < 0)
    fail(backend, "sizes must be >= 0, got M = " + std::to_string(d.M) +
                      ", N = " + std::to_string(d.N) + ", K = " + std::to_string(d.K));
  if (!gemm_input_supported(d.in_dtype))
    fail(backend, "unsupported dtype pair: " + dtype_str(d.in_dtype) + " inputs with a " +
                      dtype_str(d.out_dtype) +
                      " result: a GEMM takes no bool inputs (cast masks to i8)");
  if (!gemm_pair_supported(d.in_dtype, d.out_dtype))
    fail(backend, "unsupported dtype pair: " + dtype_str(d.in_dtype) + " inputs with a " +
                      dtype_str(d.out_dtype) + " result; " + dtype_str(d.in_dtype) +
                      " inputs take a result of " + gemm_outputs_for(d.in_dtype));
  if (d.trans_a)
    check_operand(backend, "a", d.a, d.lda, d.K, d.M, d.in_dtype, "K x M (trans_a)");
  else
    check_operand(backend, "a", d.a, d.lda, d.M, d.K, d.in_dtype, "M x K");
  if (d.trans_b)
    check_operand(backend, "b", d.b, d.ldb, d.N, d.K, d.in_dtype, "N x K (trans_b)");
  else
    check_operand(backend, "b", d.b, d.ldb, d.K, d.N, d.in_dtype, "K x N");
  check_operand(backend, "c", d.c, d.ldc, d.M, d.N, d.out_dtype, "M x N");
}

namespace {

std::unique_ptr<GemmBackend> make_cpu() {
  return std::make_unique<CpuGemmBackend>();
}

// Every backend cubesim knows, built here or not, so that a missing one is told apart from a typo.
constexpr std::string_view kKnownBackends[] = {"cpu", "cuda", "metal"};

}  // namespace

const emu::NameTable<MakeGemmBackend>& gemm_backends() {
  // A cuda or metal build adds its row here.
  static const emu::NameTable<MakeGemmBackend> table(
      "GEMM backend", {{"cpu", &make_cpu, "OpenBLAS or oneDNN, whichever is faster per dtype"}});
  return table;
}

std::string gemm_backend_refusal(std::string_view name) {
  if (gemm_backends().find(name) != nullptr) return {};
  for (std::string_view known : kKnownBackends)
    if (known == name)
      return "GEMM backend '" + std::string(name) + "' is not built in this binary; " +
             gemm_backends().known();
  return gemm_backends().unknown(name);
}

std::unique_ptr<GemmBackend> make_gemm_backend(std::string_view name) {
  const std::string refusal = gemm_backend_refusal(name);
  if (!refusal.empty()) throw std::invalid_argument(refusal);
  return gemm_backends().at(name)();
}

}  // namespace cubesim::backends
