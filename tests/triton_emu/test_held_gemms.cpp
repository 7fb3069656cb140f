// Held composite GEMMs (triton_emu/gemm/held_gemms.hpp) against an fp64 reference: products that
// share operands are computed together yet each gets its own product, results reach memory at
// the engine's completion and in completion order, operands are taken as they were when held.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/memory/sparse_memory.hpp"
#include "components/spec/spec.hpp"
#include "spec_path.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/gemm/gemm_worker_pool.hpp"
#include "triton_emu/gemm/held_gemms.hpp"

namespace cubesim::detail {
namespace {

using half = Eigen::half;

class HeldGemmsTest : public ::testing::Test {
 protected:
  HeldGemmsTest()
      : config_(components::Spec::load(spec_path("tiny.json")).config()),
        map_(config_),
        store_(map_, config_.memory.page_bytes),
        mem_(store_),
        backend_(backends::make_gemm_backend("cpu")),
        pool_(2) {}

  // A fresh page-aligned range of `bytes` in cube 0.
  std::uint64_t alloc(std::uint64_t bytes) {
    const std::uint64_t page = config_.memory.page_bytes;
    const std::uint64_t addr = map_.direct_address({0, next_});
    next_ += (bytes + page - 1) / page * page;
    return addr;
  }

  // A rows x cols f16 matrix of random values (no zeros), stored with `row_stride`.
  MatrixAt random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t row_stride) {
    const MatrixAt m{alloc(static_cast<std::uint64_t>(rows * row_stride) * 2), rows, cols,
                     row_stride, DType::f16};
    std::vector<half> v(static_cast<std::size_t>(rows * row_stride));
    std::uniform_real_distribution<float> d(0.5f, 1.5f);
    for (auto& x : v) x = half((rng_() & 1 ? 1.0f : -1.0f) * d(rng_));
    mem_.write(m.addr, v.data(), v.size() * 2);
    return m;
  }

  double at(const MatrixAt& m, std::int64_t i, std::int64_t j) {
    half h;
    mem_.read(m.addr + static_cast<std::uint64_t>(i * m.row_stride + j) * 2, &h, 2);
    return double(float(h));
  }

  // op(A) op(B) in fp64 from what memory holds now.
  std::vector<double> reference(const HeldProduct& p) {
    std::vector<double> c(static_cast<std::size_t>(p.m * p.n));
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j)
        for (std::int64_t q = 0; q < p.k; ++q)
          c[i * p.n + j] += (p.trans_a ? at(p.a, q, i) : at(p.a, i, q)) *
                            (p.trans_b ? at(p.b, j, q) : at(p.b, q, j));
    return c;
  }

  HeldProduct product(const MatrixAt& a, const MatrixAt& b, bool trans_a = false,
                      bool trans_b = false) {
    HeldProduct p;
    p.a = a;
    p.b = b;
    p.trans_a = trans_a;
    p.trans_b = trans_b;
    p.m = trans_a ? a.cols : a.rows;
    p.k = trans_a ? a.rows : a.cols;
    p.n = trans_b ? b.rows : b.cols;
    p.out = alloc(static_cast<std::uint64_t>(p.m * p.n) * 4);
    p.out_dtype = DType::f32;
    const std::vector<float> sentinel(static_cast<std::size_t>(p.m * p.n), 0.25f);
    mem_.write(p.out, sentinel.data(), sentinel.size() * 4);
    return p;
  }

  std::vector<float> output(const HeldProduct& p) {
    std::vector<float> c(static_cast<std::size_t>(p.m * p.n));
    mem_.read(p.out, c.data(), c.size() * 4);
    return c;
  }

  // f16 inputs are exact in f32 and the sums of at most 32 products of magnitude < 2.25
  // accumulate in f32: a relative error of 1e-5 of the sum of |products| bounds them.
  static void expect_close(const std::vector<float>& c, const std::vector<double>& ref,
                           std::int64_t k) {
    ASSERT_EQ(c.size(), ref.size());
    for (std::size_t i = 0; i < c.size(); ++i)
      ASSERT_LT(std::abs(c[i] - ref[i]), 1e-5 * 2.25 * static_cast<double>(k)) << i;
  }

  components::SystemConfig config_;
  components::AddressMap map_;
  components::SparseMemory store_;
  FunctionalMemory mem_;
  std::unique_ptr<backends::GemmBackend> backend_;
  GemmWorkerPool pool_;
  std::uint64_t next_ = 0;
  std::mt19937_64 rng_{11};
};

TEST_F(HeldGemmsTest, ProductsSharingOperandsAreComputedTogetherEachAsItsOwnGemm) {
  HeldGemms held(mem_, *backend_, pool_);
  // A blocks 8 x 32 with padded rows; B blocks 32 x 12 (B1 a column slice of a wider matrix).
  const MatrixAt a0 = random_matrix(8, 32, 40), a1 = random_matrix(8, 32, 32),
                 a2 = random_matrix(8, 32, 32);
  const MatrixAt b0 = random_matrix(32, 12, 12), b1 = random_matrix(32, 12, 30),
                 b2 = random_matrix(32, 12, 12);
  const MatrixAt bt = random_matrix(12, 32, 32);  // stored N x K, for a transposed B
  const MatrixAt a16 = random_matrix(8, 16, 16), b16 = random_matrix(16, 12, 12);

  std::vector<HeldProduct> want;
  for (const MatrixAt* a : {&a0, &a1})
    for (const MatrixAt* b : {&b0, &b1, &b2}) want.push_back(product(*a, *b));
  want.push_back(product(a2, b0));  // B0 meets A0..A2, B1 and B2 only A0, A1: two rectangles
  want.push_back(product(a1, b1));  // the same product again, into another output
  want.push_back(product(a0, bt, false, true));  // transposed: a GEMM of its own
  want.push_back(product(a16, b16));             // another K: a GEMM of its own

  std::vector<std::vector<double>> refs;
  std::vector<std::shared_ptr<HeldProduct>> handles;
  for (const HeldProduct& p : want) {
    refs.push_back(reference(p));
    handles.push_back(held.hold(p));
  }
  EXPECT_EQ(held.held(), want.size());
  for (auto it = handles.rbegin(); it != handles.rend(); ++it) held.complete(**it);
  EXPECT_EQ(held.gemm_calls(), 0u);  // nothing has looked at an output yet
  held.settle();
  EXPECT_EQ(held.gemm_calls(), 4u);
  EXPECT_EQ(held.products_computed(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    expect_close(output(want[i]), refs[i], want[i].k);
  }
}

TEST_F(HeldGemmsTest, ResultsReachMemoryAtCompletionInCompletionOrder) {
  HeldGemms held(mem_, *backend_, pool_);
  const MatrixAt a = random_matrix(4, 32, 32), b0 = random_matrix(32, 8, 8),
                 b1 = random_matrix(32, 8, 8);
  HeldProduct p = product(a, b0);
  HeldProduct q = product(a, b1);
  q.out = p.out;  // both write the same bytes
  const auto ref_p = reference(p), ref_q = reference(q);
  auto hp = held.hold(p);
  auto hq = held.hold(q);

  // Reading the output settles, but neither engine has finished: the old bytes.
  EXPECT_EQ(output(p), std::vector<float>(32, 0.25f));
  EXPECT_EQ(held.gemm_calls(), 1u);
  held.complete(*hq);
  expect_close(output(p), ref_q, 32);
  held.complete(*hp);
  expect_close(output(p), ref_p, 32);

  // Completed while held: written when settled, the later completion last.
  hq = held.hold(q);
  hp = held.hold(p);
  held.complete(*hp);
  held.complete(*hq);
  expect_close(output(p), ref_q, 32);
}

TEST_F(HeldGemmsTest, OperandsAreTakenAsTheyWereWhenHeld) {
  HeldGemms held(mem_, *backend_, pool_);
  const MatrixAt a = random_matrix(8, 32, 32), b = random_matrix(32, 8, 8);
  const HeldProduct p = product(a, b);
  const auto before = reference(p);
  held.complete(*held.hold(p));
  const std::vector<half> other(static_cast<std::size_t>(32 * 8), half(-0.75f));
  mem_.write(b.addr, other.data(), other.size() * 2);  // settles p first
  EXPECT_EQ(held.held(), 0u);
  expect_close(output(p), before, 32);
}

TEST_F(HeldGemmsTest, DroppedProductsAreNeverWritten) {
  HeldGemms held(mem_, *backend_, pool_);
  const MatrixAt a = random_matrix(8, 32, 32), b = random_matrix(32, 8, 8);
  const HeldProduct p = product(a, b), q = product(a, b);
  auto hp = held.hold(p);
  held.complete(*held.hold(q));
  held.drop_incomplete();
  EXPECT_EQ(held.held(), 1u);
  held.settle();
  EXPECT_EQ(output(p), std::vector<float>(64, 0.25f));
  expect_close(output(q), reference(q), 32);
  EXPECT_EQ(hp->state, HeldProduct::State::dropped);
}

TEST_F(HeldGemmsTest, HoldingPastTheByteCapSettlesWhatIsHeldFirst) {
  const MatrixAt a = random_matrix(8, 32, 32), b0 = random_matrix(32, 8, 8),
                 b1 = random_matrix(32, 8, 8);
  // A (512 B) + B0 (512 B) + an output (256 B) fit; another B and output do not.
  HeldGemms held(mem_, *backend_, pool_, 512 + 512 + 256 + 100);
  const HeldProduct p = product(a, b0), q = product(a, b1);
  held.complete(*held.hold(p));
  EXPECT_EQ(held.gemm_calls(), 0u);
  held.complete(*held.hold(q));
  EXPECT_EQ(held.gemm_calls(), 1u);
  EXPECT_EQ(held.held(), 1u);
  expect_close(output(p), reference(p), 32);
  expect_close(output(q), reference(q), 32);
}

}  // namespace
}  // namespace cubesim::detail
