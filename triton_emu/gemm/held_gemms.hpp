#pragma once
// Composite GEMMs whose numbers are computed when something needs them, and together.
//
// A composite GEMM whose operands are in memory (refs, or tiles loaded from memory that nobody
// has written since) needs its product only when something looks at its output: a later load
// or store of those bytes, a host read, the end of the launch. Until then the product is held:
// memory marks the pages of its operands and its output (FunctionalMemory::hold), and an access
// that would see the output or change an operand first settles every held product.
//
// Settling computes the held products as few large GEMMs. Products that share operands form
// rectangles {A_1..A_p} x {B_1..B_q} (every pair present), and a rectangle is one GEMM of the
// A blocks stacked by the B blocks side by side; each product's block of that result is its
// own. The ADR's sharded GEMM is the case this is for: its 64 programs share each block of A
// and each program's 64 row blocks share its B, so 4096 GEMMs of 64 x 64 x 4096 (each too
// small for the backend to amortise packing its operands) become one 4096^3 GEMM.
//
// Nothing here changes simulated time: the engine's timing never depended on when the numbers
// were computed. Memory sees each result from the engine's completion on, as before: held
// results are written in completion order, before anything can read them.
//
// Contract: simulation thread only. GEMMs run on the worker pool; settle() waits for them.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "components/dtype.hpp"
#include "triton_emu/memory/functional_memory.hpp"
#include "triton_emu/memory/matrix_at.hpp"

namespace cubesim::backends {
class GemmBackend;
}

namespace cubesim::detail {

class GemmWorkerPool;

// C (m x n, contiguous at `out`) = op(A) op(B).
struct HeldProduct {
  MatrixAt a, b;
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::uint64_t out = 0;
  DType out_dtype = DType::f32;
  std::string pe;  // the PE that issued it ("sip0.cube1.pe5"), for errors

  enum class State : std::uint8_t { held, computing, computed, written, dropped };
  State state = State::held;
  bool completed = false;         // the engine has finished: memory must show the result
  std::uint64_t completion = 0;   // order of completion, for writing held results
  std::vector<std::byte> result;  // m x n in out_dtype, once computed
  std::uint64_t out_bytes() const;
};

class HeldGemms final : public FunctionalMemory::Holder {
 public:
  // Held products stop growing at `max_bytes` of distinct operands and outputs (the buffers a
  // settle needs); the next one settles them first.
  HeldGemms(FunctionalMemory& memory, backends::GemmBackend& backend, GemmWorkerPool& pool,
            std::uint64_t max_bytes = std::uint64_t{512} << 20);
  ~HeldGemms();
  HeldGemms(const HeldGemms&) = delete;
  HeldGemms& operator=(const HeldGemms&) = delete;

  // Holds a product whose operands memory holds now (settling first whatever conflicts).
  std::shared_ptr<HeldProduct> hold(HeldProduct product);
  // The engine has finished `p`: its result is memory's from now on (written now if computed,
  // else when settled, after the results of products that completed before it).
  void complete(HeldProduct& p);
  // Computes every held product and writes those whose engine has finished.
  void settle() override;
  // A run ended early: products whose engine never finished are never written.
  void drop_incomplete();

  std::size_t held() const { return held_.size(); }
  // Backend GEMM calls made by settling, and the products they computed.
  std::uint64_t gemm_calls() const { return gemm_calls_; }
  std::uint64_t products_computed() const { return products_computed_; }

 private:
  void mark(const HeldProduct& p, bool on);
  void compute(const std::vector<std::shared_ptr<HeldProduct>>& batch);

  FunctionalMemory& memory_;
  backends::GemmBackend& backend_;
  GemmWorkerPool& pool_;
  std::uint64_t max_bytes_;
  std::vector<std::shared_ptr<HeldProduct>> held_;
  std::set<MatrixAt> operands_;  // distinct operands of the held products
  std::uint64_t held_bytes_ = 0;
  std::uint64_t completions_ = 0;
  std::uint64_t gemm_calls_ = 0, products_computed_ = 0;
};

}  // namespace cubesim::detail
