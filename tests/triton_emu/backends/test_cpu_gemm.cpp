// Numerics of every CPU GEMM implementation against an fp64 reference: the "cpu" backend and
// the candidates it chooses between (OpenBLAS with and without panel splitting, oneDNN).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/triton_emu/backends/gemm_test_matrix.hpp"
#include "triton_emu/backends/cpu_backend.hpp"
#include "triton_emu/backends/cpu_onednn.hpp"
#include "triton_emu/backends/cpu_openblas.hpp"

namespace cubesim::backends {
namespace {

using testing::smallest_subnormal;
using testing::TestMatrix;
using testing::unit_roundoff;

struct Impl {
  std::string name;
  std::function<std::unique_ptr<GemmBackend>()> make;
};

const std::vector<Impl>& impls() {
  static const std::vector<Impl> all{
      {"cpu", [] { return std::make_unique<CpuGemmBackend>(); }},
      {"openblas", [] { return std::make_unique<CpuOpenblasGemm>(); }},
      // A tiny panel budget: many panels of op(A) per call, with a remainder panel.
      {"openblas_panels",
       [] {
         CpuOpenblasGemm::Options o;
         o.panel_bytes = 1024;
         return std::make_unique<CpuOpenblasGemm>(o);
       }},
      // OpenBLAS's own threads, panels one after another (the measured alternative).
      {"openblas_libthreads",
       [] {
         CpuOpenblasGemm::Options o;
         o.own_threads = false;
         o.panel_bytes = 1024;
         return std::make_unique<CpuOpenblasGemm>(o);
       }},
      {"openblas_scalar_convert",
       [] {
         CpuOpenblasGemm::Options o;
         o.isa = ConvertIsa::scalar;
         return std::make_unique<CpuOpenblasGemm>(o);
       }},
      {"onednn", [] { return std::make_unique<CpuOnednnGemm>(); }},
  };
  return all;
}

// oneDNN 2.6 has no f16 / bf16 matmul on CPUs without AVX512-BF16 or AMX (this project's AMD
// machines); those combinations are skipped there and run where the CPU has them.
bool runs(GemmBackend& be, DType in) {
  auto* onednn = dynamic_cast<CpuOnednnGemm*>(&be);
  return onednn == nullptr || onednn->supports(in);
}

struct Case {
  DType in, out;
  std::int64_t M, N, K;
  bool trans_a, trans_b;
  std::int64_t pad;  // extra elements per row in every operand: ld = row length + pad
  bool accumulate;
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << dtype_name(c.in) << "->" << dtype_name(c.out) << " M=" << c.M << " N=" << c.N << " K=" << c.K
    << " trans_a=" << c.trans_a << " trans_b=" << c.trans_b << " pad=" << c.pad
    << " accumulate=" << c.accumulate;
  return s.str();
}

// Runs one case and checks every element of C against fp64, and C's row padding untouched.
void check_case(GemmBackend& be, const Case& cs, std::uint64_t seed) {
  SCOPED_TRACE(describe(cs));
  std::mt19937_64 rng(seed);
  const std::int64_t a_rows = cs.trans_a ? cs.K : cs.M, a_cols = cs.trans_a ? cs.M : cs.K;
  const std::int64_t b_rows = cs.trans_b ? cs.N : cs.K, b_cols = cs.trans_b ? cs.K : cs.N;
  TestMatrix a(cs.in, a_rows, a_cols, std::max<std::int64_t>(a_cols, 1) + cs.pad);
  TestMatrix b(cs.in, b_rows, b_cols, std::max<std::int64_t>(b_cols, 1) + cs.pad);
  TestMatrix c(cs.out, cs.M, cs.N, std::max<std::int64_t>(cs.N, 1) + cs.pad);
  a.fill_random(rng);
  b.fill_random(rng);
  c.fill_random(rng);  // must be overwritten, or added to with accumulate
  const TestMatrix c0 = c;

  GemmDesc d;
  d.in_dtype = cs.in;
  d.out_dtype = cs.out;
  d.M = cs.M;
  d.N = cs.N;
  d.K = cs.K;
  d.trans_a = cs.trans_a;
  d.trans_b = cs.trans_b;
  d.a = a.data();
  d.lda = a.ld();
  d.b = b.data();
  d.ldb = b.ld();
  d.c = c.data();
  d.ldc = c.ld();
  d.accumulate = cs.accumulate;
  be.gemm(d);

  auto a_at = [&](std::int64_t i, std::int64_t k) {
    return cs.trans_a ? a.get(k, i) : a.get(i, k);
  };
  auto b_at = [&](std::int64_t k, std::int64_t j) {
    return cs.trans_b ? b.get(j, k) : b.get(k, j);
  };
  int failures = 0;
  for (std::int64_t i = 0; i < cs.M && failures < 5; ++i)
    for (std::int64_t j = 0; j < cs.N && failures < 5; ++j) {
      if (is_integer(cs.in)) {
        // Exact products summed in 128 bits, then wrapped to C's width (two's complement).
        __extension__ using i128 = __int128;
        i128 sum = cs.accumulate ? c0.get_int(i, j) : 0;
        for (std::int64_t k = 0; k < cs.K; ++k)
          sum += i128{a.get_int(cs.trans_a ? k : i, cs.trans_a ? i : k)} *
                 b.get_int(cs.trans_b ? j : k, cs.trans_b ? k : j);
        const auto wrapped = static_cast<std::uint64_t>(sum);
        const std::int64_t want = cs.out == DType::i32
                                      ? std::int64_t{static_cast<std::int32_t>(wrapped)}
                                      : static_cast<std::int64_t>(wrapped);
        if (c.get_int(i, j) != want) {
          ADD_FAILURE() << "C(" << i << ", " << j << ") = " << c.get_int(i, j) << ", want " << want;
          ++failures;
        }
        continue;
      }
      double ref = cs.accumulate ? c0.get(i, j) : 0.0;
      double magnitude = std::abs(ref);
      for (std::int64_t k = 0; k < cs.K; ++k) {
        ref += a_at(i, k) * b_at(k, j);
        magnitude += std::abs(a_at(i, k) * b_at(k, j));
      }
      // Error bound. f16, bf16 and f8 inputs are exact in f32 and so are their products (11 + 11,
      // 8 + 8, 4 + 4 and 3 + 3 significant bits fit f32's 24); f32 products round once. Summing K +
      // 1 terms in f32 in any order (blocked, FMA, AMX pairs) errs by at most about (K + 1) u32 *
      // sum |terms| (Higham's gamma_n; (K + 2) keeps a margin). Then C is rounded once to its
      // dtype: u_out of the value. Cancellation makes |C| much smaller than sum |terms|, hence the
      // absolute form.
      const double acc_err = static_cast<double>(cs.K + 2) * unit_roundoff(DType::f32) * magnitude;
      const double tol = acc_err + unit_roundoff(cs.out) * (std::abs(ref) + acc_err) +
                         smallest_subnormal(cs.out) / 2;
      const double got = c.get(i, j);
      if (!(std::abs(got - ref) <= tol)) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", fp64 reference " << ref
                      << ", |error| " << std::abs(got - ref) << " > bound " << tol;
        ++failures;
      }
    }
  EXPECT_TRUE(c.padding_intact()) << "gemm wrote into C's padding between rows";
}

using Param = std::tuple<std::size_t, DType, DType>;  // impl index, in dtype, out dtype

class CpuGemmNumerics : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    backend_ = impls()[std::get<0>(GetParam())].make();
    if (!runs(*backend_, in()))
      GTEST_SKIP() << "oneDNN has no " << dtype_name(in()) << " matmul here";
  }
  DType in() const { return std::get<1>(GetParam()); }
  DType out() const { return std::get<2>(GetParam()); }
  std::unique_ptr<GemmBackend> backend_;
};

TEST_P(CpuGemmNumerics, MatchesFp64ReferenceForEveryTransposeStrideAndShape) {
  struct Shape {
    std::int64_t M, N, K;
  };
  // 1x1x1; odd sizes; a skinny N like a sharded GEMM's (several panels of A); a longer K.
  const Shape shapes[] = {{1, 1, 1}, {17, 33, 9}, {100, 8, 50}, {40, 24, 131}};
  std::uint64_t seed = 1;
  for (const Shape& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (std::int64_t pad : {0, 3})
          for (bool acc : {false, true})
            check_case(*backend_, {in(), out(), s.M, s.N, s.K, ta, tb, pad, acc}, seed++);
}

TEST_P(CpuGemmNumerics, EmptyProductsLeaveOrZeroC) {
  // M = 0 or N = 0: nothing to compute. K = 0: op(A) op(B) is zero, so C becomes 0 (or keeps its
  // value with accumulate); the check compares against that.
  std::uint64_t seed = 100;
  for (bool acc : {false, true}) {
    check_case(*backend_, {in(), out(), 0, 5, 7, false, false, 0, acc}, seed++);
    check_case(*backend_, {in(), out(), 5, 0, 7, false, true, 0, acc}, seed++);
    check_case(*backend_, {in(), out(), 6, 5, 0, true, false, 2, acc}, seed++);
  }
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  const DType floats[] = {DType::f16, DType::bf16, DType::f32, DType::f8e4m3, DType::f8e5m2};
  for (std::size_t i = 0; i < impls().size(); ++i) {
    for (DType in : floats)
      for (DType o : floats) out.emplace_back(i, in, o);
    out.emplace_back(i, DType::i8, DType::i32);
    out.emplace_back(i, DType::i32, DType::i32);
    out.emplace_back(i, DType::i64, DType::i64);
  }
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return impls()[std::get<0>(info.param)].name + "_" +
         std::string(dtype_name(std::get<1>(info.param))) + "_" +
         std::string(dtype_name(std::get<2>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(gemm, CpuGemmNumerics, ::testing::ValuesIn(all_params()), param_name);

// ---- per implementation, all dtypes ----

class CpuGemmImpl : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override { backend_ = impls()[GetParam()].make(); }
  std::unique_ptr<GemmBackend> backend_;
};

TEST_P(CpuGemmImpl, ConcurrentCallsFromSeveralThreadsGiveCorrectResults) {
  // Four threads, each a different shape and dtype pair, several rounds, one backend: the
  // oneDNN cache is filled and read concurrently, OpenBLAS runs from several threads.
  const Case cases[] = {
      {DType::f16, DType::f32, 64, 48, 96, false, false, 0, false},
      {DType::bf16, DType::bf16, 33, 65, 40, true, false, 1, true},
      {DType::f32, DType::f32, 64, 48, 96, false, true, 0, false},
      {DType::f32, DType::f16, 50, 20, 70, true, true, 2, true},
      {DType::i32, DType::i32, 30, 40, 300, false, false, 0, true},
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t round = 0; round < 6; ++round) {
        const Case& cs = cases[(t + round) % std::size(cases)];
        if (runs(*backend_, cs.in)) check_case(*backend_, cs, 1000 * t + round);
      }
    });
  for (std::thread& t : threads) t.join();
}

TEST_P(CpuGemmImpl, LargeProductsSplitOverThreadsByRowsOrColumns) {
  // Big enough for several blocks of C per call (rows when M >= N, columns when N > M), with
  // panels of A inside each block; four threads per call even on a smaller machine.
  backend_->set_threads_per_call(4);
  const Case cases[] = {
      {DType::f16, DType::f16, 300, 100, 400, false, false, 1, false},
      {DType::bf16, DType::f32, 50, 300, 400, true, true, 0, true},
      {DType::f32, DType::bf16, 300, 100, 400, true, false, 2, true},
      {DType::i32, DType::i32, 300, 100, 400, false, true, 0, false},
      {DType::i8, DType::i32, 100, 300, 400, true, false, 1, true},
      {DType::i64, DType::i64, 300, 100, 400, false, false, 0, true},
      {DType::f8e4m3, DType::f16, 300, 100, 400, false, true, 0, true},
      {DType::f8e5m2, DType::f8e4m3, 50, 300, 400, true, false, 2, false},
  };
  std::uint64_t seed = 500;
  for (const Case& cs : cases)
    if (runs(*backend_, cs.in)) check_case(*backend_, cs, seed++);
}

TEST_P(CpuGemmImpl, I32ProductsWrapLikeA32BitAccumulator) {
  std::vector<std::int32_t> a{65536, 46341, -7}, b{65536, 46341, 3};
  std::int32_t c = 12345;
  GemmDesc d{DType::i32, DType::i32, 1, 1, 1, false, false, a.data(), 1, b.data(), 1, &c, 1, false};
  backend_->gemm(d);  // 2^32 wraps to 0
  EXPECT_EQ(c, 0);
  d.a = a.data() + 1;
  d.b = b.data() + 1;
  backend_->gemm(d);  // 46341^2 = 2^31 + 4633 wraps to -2^31 + 4633
  EXPECT_EQ(c, std::numeric_limits<std::int32_t>::min() + 4633);
  d.K = 2;
  d.lda = 2;  // A is 1 x 2; B is 2 x 1 with ldb 1
  d.accumulate = true;
  backend_->gemm(d);  // + (2^31 + 4633) - 21: wraps back past zero
  EXPECT_EQ(c, 2 * 4633 - 21);
}

TEST_P(CpuGemmImpl, I8ProductsWrapLikeA32BitAccumulatorPastTheLongestExactOneDnnK) {
  // (-128)^2 = 2^14, summed 2^17 + 3 times: 2^31 + 3 * 2^14 wraps to -2^31 + 3 * 2^14.
  const std::int64_t K = (std::int64_t{1} << 17) + 3;
  ASSERT_GT(K, CpuOnednnGemm::kMaxExactInt8K);
  std::vector<std::int8_t> a(static_cast<std::size_t>(2 * K), -128), b(a);
  std::vector<std::int32_t> c(4, 7);
  GemmDesc d{DType::i8, DType::i32, 2,        2, K,        false, true,
             a.data(),  K,          b.data(), K, c.data(), 2,     false};
  backend_->gemm(d);
  for (std::int32_t v : c) EXPECT_EQ(v, std::numeric_limits<std::int32_t>::min() + 3 * 16384);
}

TEST_P(CpuGemmImpl, I64ProductsWrapLikeA64BitAccumulator) {
  std::vector<std::int64_t> a{std::int64_t{1} << 32, 3}, b{std::int64_t{1} << 32, -5};
  std::int64_t c = 99;
  GemmDesc d{DType::i64, DType::i64, 1, 1, 1, false, false, a.data(), 1, b.data(), 1, &c, 1, false};
  backend_->gemm(d);  // 2^64 wraps to 0
  EXPECT_EQ(c, 0);
  d.K = 2;
  d.lda = 2;
  d.accumulate = true;
  backend_->gemm(d);  // 0 + 2^64 - 15
  EXPECT_EQ(c, -15);
}

TEST_P(CpuGemmImpl, DescribesItself) {
  EXPECT_FALSE(backend_->describe().empty());
  EXPECT_GE(backend_->preferred_concurrency(), 1);
}

INSTANTIATE_TEST_SUITE_P(gemm, CpuGemmImpl, ::testing::Range<std::size_t>(0, impls().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& p) {
                           return impls()[p.param].name;
                         });

// ---- thread policy, the "cpu" backend's choices, the oneDNN cache ----

TEST(gemm_threads, CoresAreSharedAmongTheCallsInFlight) {
  const int cores = cpu_cores_available();
  ASSERT_GE(cores, 1);
  CallThreads threads;
  {
    const CallThreads::Scope first(threads);
    EXPECT_EQ(first.threads(), cores);  // alone: every core
    const CallThreads::Scope second(threads);
    EXPECT_EQ(second.threads(), std::max(1, cores / 2));
  }
  const CallThreads::Scope again(threads);  // both ended
  EXPECT_EQ(again.threads(), cores);
  threads.set_fixed(3);
  const CallThreads::Scope fixed(threads);
  EXPECT_EQ(fixed.threads(), 3);
}

TEST(gemm_cpu_backend, PicksThePathMeasuredFastestPerDtype) {
  CpuGemmBackend be;
  EXPECT_EQ(be.path(DType::f32), CpuGemmPath::openblas);
  EXPECT_EQ(be.path(DType::f16), CpuGemmPath::openblas);
  CpuOnednnGemm onednn;
  EXPECT_EQ(be.path(DType::bf16), CpuOnednnGemm::uses_amx() && onednn.supports(DType::bf16)
                                      ? CpuGemmPath::onednn
                                      : CpuGemmPath::openblas);
  // f8 takes bf16's path (oneDNN converts it to bf16 exactly; OpenBLAS to f32).
  EXPECT_EQ(be.path(DType::f8e4m3), be.path(DType::bf16));
  EXPECT_EQ(be.path(DType::f8e5m2), be.path(DType::bf16));
  EXPECT_EQ(be.path(DType::i8),
            CpuOnednnGemm::exact_int8() ? CpuGemmPath::onednn : CpuGemmPath::integer_loop);
  EXPECT_EQ(be.path(DType::i32), CpuGemmPath::integer_loop);
  EXPECT_EQ(be.path(DType::i64), CpuGemmPath::integer_loop);
  EXPECT_THAT(be.describe(), ::testing::HasSubstr("f16=openblas"));
  EXPECT_THAT(be.describe(), ::testing::HasSubstr("i64=integer-loop"));
}

TEST(gemm_onednn, CachesOnePrimitivePerShape) {
  CpuOnednnGemm be;
  std::vector<float> a(6 * 4, 0.5f), b(4 * 3, 0.25f), c(6 * 3);
  GemmDesc d{DType::f32, DType::f32, 6,        3, 4,        false, false,
             a.data(),   4,          b.data(), 3, c.data(), 3,     false};
  be.gemm(d);
  be.gemm(d);
  EXPECT_EQ(be.cached_primitives(), 1u);
  EXPECT_FLOAT_EQ(c[0], 4 * 0.5f * 0.25f);
  d.M = 5;  // another shape: another primitive
  be.gemm(d);
  EXPECT_EQ(be.cached_primitives(), 2u);
}

}  // namespace
}  // namespace cubesim::backends
