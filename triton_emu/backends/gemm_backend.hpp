#pragma once
// The numeric side of composite(Op::gemm): one small interface, one implementation per place the
// numbers can be computed (cpu always; cuda and metal when built). Simulated time never depends
// on which backend computed the numbers.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "components/dtype.hpp"
#include "emu/name_table.hpp"

namespace cubesim::backends {

// The dtype pairs every backend computes (gemm_pair_supported):
//   float inputs (f16, bf16, f32, f8e4m3, f8e5m2) with a C of any of those five: products
//     accumulate in f32 and C is rounded once;
//   i8 or i32 inputs with an i32 C, i64 inputs with an i64 C: exact products summed modulo 2^32
//     or 2^64, as an integer MAC array with an accumulator of C's width (cpu_integer_gemm.hpp).
// bool is no GEMM dtype (a mask is cast to i8 first).
bool gemm_pair_supported(DType in, DType out);
// The C dtype when the caller names none: i32 for i8 inputs and f32 for f8 inputs (Triton's
// tl.dot), else the input dtype. Only meaningful where gemm_input_supported(in).
DType gemm_default_out(DType in);
bool gemm_input_supported(DType in);
// "f16, bf16, f32, f8e4m3 or f8e5m2" for float inputs, "i32" for i8 / i32, ...: the C dtypes
// that `in` inputs take, for messages.
std::string gemm_outputs_for(DType in);

// C = op(A) op(B) (or C += ... with accumulate), all matrices row-major with a row stride.
struct GemmDesc {
  DType in_dtype = DType::f32;   // dtype of A and B
  DType out_dtype = DType::f32;  // dtype of C
  std::int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;  // A stored K x M instead of M x K
  bool trans_b = false;  // B stored N x K instead of K x N
  const void* a = nullptr;
  std::int64_t lda = 0;  // leading dimensions: row strides in elements
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  bool accumulate = false;  // C += op(A) op(B) instead of C = op(A) op(B)
};

// Contract: gemm() validates its descriptor (std::invalid_argument naming the field and the rule),
// computes the product, and is thread-safe: several threads may call it at once on one backend,
// with C blocks that do not overlap. Each call may itself run on several threads; by default a
// call takes the machine's cores shared out among the calls in flight when it starts, so one
// caller gets every core and N concurrent callers share them, without any configuration.
class GemmBackend {
 public:
  virtual ~GemmBackend() = default;
  virtual std::string_view name() const = 0;
  virtual void gemm(const GemmDesc& d) = 0;

  // How many gemm() calls to keep in flight at once for the most GEMMs per second when the caller
  // has several independent GEMMs ready (measured on this kind of machine; 1 = one at a time).
  virtual int preferred_concurrency() const = 0;
  // Threads each call uses: 0 (the default) shares the cores among the calls in flight; n > 0
  // fixes it at n (for measurements, or to leave cores to other work).
  virtual void set_threads_per_call(int threads) = 0;
  // One line saying how each dtype is computed, for logs and `cubesim info`.
  virtual std::string describe() const = 0;
};

// Throws std::invalid_argument when `d` breaks the GemmDesc rules: negative sizes, a leading
// dimension smaller than its matrix's row (BLAS's max(1, cols) rule), a null pointer for a
// matrix with elements, or a dtype pair outside gemm_pair_supported. `backend` prefixes the
// message.
void validate_gemm_desc(const GemmDesc& d, std::string_view backend);

// The backends built into this binary by name (emu/name_table.hpp): "cpu" always, "cuda" and
// "metal" where built. Their names are the CLI's --backend choices.
using MakeGemmBackend = std::unique_ptr<GemmBackend> (*)();
const emu::NameTable<MakeGemmBackend>& gemm_backends();
// Why `name` is no backend of this binary (an unknown name, or "cuda" / "metal" in a binary built
// without them), listing the built ones; empty when it is one.
std::string gemm_backend_refusal(std::string_view name);
// The backend `name`; std::invalid_argument with gemm_backend_refusal's text when there is none.
std::unique_ptr<GemmBackend> make_gemm_backend(std::string_view name);

}  // namespace cubesim::backends
