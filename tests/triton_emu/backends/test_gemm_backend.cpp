// The backend-independent contract: descriptor validation (for every CPU implementation) and the
// factory's names and errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "triton_emu/backends/cpu_backend.hpp"
#include "triton_emu/backends/cpu_onednn.hpp"
#include "triton_emu/backends/cpu_openblas.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::backends {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Expects gemm(d) to throw std::invalid_argument whose message contains every fragment.
#define EXPECT_INVALID(backend, desc, ...)                    \
  do {                                                        \
    try {                                                     \
      (backend).gemm(desc);                                   \
      ADD_FAILURE() << "gemm accepted an invalid descriptor"; \
    } catch (const std::invalid_argument& e) {                \
      EXPECT_THAT(std::string(e.what()), AllOf(__VA_ARGS__)); \
    }                                                         \
  } while (0)

class GemmValidation : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cpu") backend_ = std::make_unique<CpuGemmBackend>();
    if (GetParam() == "openblas") backend_ = std::make_unique<CpuOpenblasGemm>();
    if (GetParam() == "onednn") backend_ = std::make_unique<CpuOnednnGemm>();
  }
  // A valid 4x3x2 f32 GEMM that each test breaks in one way.
  GemmDesc valid() {
    return GemmDesc{DType::f32, DType::f32, 4,         3, 2,         false, false,
                    a_.data(),  2,          b_.data(), 3, c_.data(), 3,     false};
  }
  std::unique_ptr<GemmBackend> backend_;
  std::vector<float> a_ = std::vector<float>(64, 1.0f), b_ = a_, c_ = a_;
};

TEST_P(GemmValidation, ValidDescriptorRuns) {
  backend_->gemm(valid());
  EXPECT_FLOAT_EQ(c_[0], 2.0f);
}

TEST_P(GemmValidation, NegativeSizesAreRejected) {
  GemmDesc d = valid();
  d.K = -1;
  EXPECT_INVALID(*backend_, d, HasSubstr("sizes must be >= 0"), HasSubstr("K = -1"));
}

TEST_P(GemmValidation, LeadingDimensionsMustCoverARow) {
  GemmDesc d = valid();
  d.lda = 1;  // A is 4 x 2
  EXPECT_INVALID(*backend_, d, HasSubstr("lda = 1 is less than 2"), HasSubstr("M x K"));
  d = valid();
  d.trans_a = true;  // A stored 2 x 4 now needs lda >= 4
  EXPECT_INVALID(*backend_, d, HasSubstr("lda = 2 is less than 4"), HasSubstr("trans_a"));
  d = valid();
  d.trans_b = true;  // B stored 3 x 2: ldb 3 is fine
  backend_->gemm(d);
  d.ldb = 1;
  EXPECT_INVALID(*backend_, d, HasSubstr("ldb = 1 is less than 2"), HasSubstr("trans_b"));
  d = valid();
  d.ldc = 2;
  EXPECT_INVALID(*backend_, d, HasSubstr("ldc = 2 is less than 3"));
  d = valid();
  d.ldb = 0;
  d.N = 0;  // even an empty matrix needs ld >= 1, as in BLAS
  EXPECT_INVALID(*backend_, d, HasSubstr("ldb = 0 is less than 1"));
}

TEST_P(GemmValidation, NullPointersOnlyForEmptyMatrices) {
  GemmDesc d = valid();
  d.b = nullptr;
  EXPECT_INVALID(*backend_, d, HasSubstr("b is null"), HasSubstr("2 x 3"));
  d = valid();
  d.c = nullptr;
  EXPECT_INVALID(*backend_, d, HasSubstr("c is null"));
  d = valid();
  d.M = 0;
  d.a = nullptr;
  d.c = nullptr;  // A and C are empty: nothing to read or write
  backend_->gemm(d);
}

TEST_P(GemmValidation, UnsupportedDtypePairsAreRejected) {
  GemmDesc d = valid();
  d.out_dtype = DType::i32;
  EXPECT_INVALID(*backend_, d, HasSubstr("unsupported dtype pair: f32 inputs with a i32 result"),
                 HasSubstr("f32 inputs take a result of f16, bf16, f32, f8e4m3 or f8e5m2"));
  d = valid();
  d.in_dtype = DType::i32;
  d.out_dtype = DType::f32;
  EXPECT_INVALID(*backend_, d, HasSubstr("i32 inputs with a f32 result"),
                 HasSubstr("i32 inputs take a result of i32"));
  d.in_dtype = DType::i8;
  d.out_dtype = DType::i8;
  EXPECT_INVALID(*backend_, d, HasSubstr("i8 inputs take a result of i32"));
  d.in_dtype = DType::i64;
  d.out_dtype = DType::i32;
  EXPECT_INVALID(*backend_, d, HasSubstr("i64 inputs take a result of i64"));
  d.in_dtype = DType::boolean;
  d.out_dtype = DType::i32;
  EXPECT_INVALID(*backend_, d, HasSubstr("no bool inputs (cast masks to i8)"));
}

TEST(gemm_dtypes, EveryPairIsSupportedOrNotByOneRule) {
  for (DType in : kAllDTypes)
    for (DType out : kAllDTypes) {
      const bool want = (is_floating(in) && is_floating(out)) ||
                        ((in == DType::i8 || in == DType::i32) && out == DType::i32) ||
                        (in == DType::i64 && out == DType::i64);
      EXPECT_EQ(gemm_pair_supported(in, out), want) << dtype_name(in) << " -> " << dtype_name(out);
    }
  // bool is an integer dtype but no GEMM input, and the default results are Triton's.
  EXPECT_FALSE(gemm_input_supported(DType::boolean));
  EXPECT_EQ(gemm_default_out(DType::i8), DType::i32);
  EXPECT_EQ(gemm_default_out(DType::f8e5m2), DType::f32);
  EXPECT_EQ(gemm_default_out(DType::bf16), DType::bf16);
}

TEST_P(GemmValidation, MisalignedPointersAreRejected) {
  GemmDesc d = valid();
  d.a = reinterpret_cast<const unsigned char*>(a_.data()) + 2;
  EXPECT_INVALID(*backend_, d, HasSubstr("a is not aligned"), HasSubstr("4 bytes for f32"));
}

TEST_P(GemmValidation, MessageNamesTheBackend) {
  GemmDesc d = valid();
  d.M = -3;
  EXPECT_INVALID(*backend_, d, HasSubstr(std::string(backend_->name()) + " gemm: "));
}

INSTANTIATE_TEST_SUITE_P(gemm, GemmValidation, ::testing::Values("cpu", "openblas", "onednn"));

TEST(make_gemm_backend, CpuIsAlwaysAvailable) {
  const std::vector<std::string> names = gemm_backends().names();
  EXPECT_THAT(names, ::testing::Contains("cpu"));
  for (const std::string& n : names) EXPECT_EQ(make_gemm_backend(n)->name(), n);
}

TEST(make_gemm_backend, UnknownNameListsTheAvailableOnes) {
  try {
    make_gemm_backend("tpu");
    ADD_FAILURE() << "no error for an unknown backend";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("unknown GEMM backend 'tpu'"));
    for (const std::string& name : gemm_backends().names())
      EXPECT_THAT(std::string(e.what()), HasSubstr("'" + name + "'"));
  }
}

TEST(make_gemm_backend, KnownButUnbuiltBackendsSaySo) {
  for (const char* name : {"cuda", "metal"}) {
    const std::vector<std::string> built = gemm_backends().names();
    if (std::find(built.begin(), built.end(), name) != built.end()) continue;
    try {
      make_gemm_backend(name);
      ADD_FAILURE() << "no error for " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(std::string(e.what()),
                  AllOf(HasSubstr(std::string("'") + name + "' is not built in this binary"),
                        HasSubstr("'cpu'")));
    }
  }
}

}  // namespace
}  // namespace cubesim::backends
