// softmax_rows: one program per block of rows, a masked last block, numerically stable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cubesim/cubesim.hpp>
#include <ostream>

#include "kernel_test_support.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/softmax_rows.hpp"

namespace cubesim::kernels {
namespace {

using testing::expect_verified;
using testing::spec_named;
using testing::spec_path;
using testing::tiny;
using testing::two_sips;

using ::testing::HasSubstr;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("softmax_rows", spec, assignments, timing_only, 5);
}

using Case = testing::NumericsCase;

class SoftmaxRowsNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(SoftmaxRowsNumerics, MatchesAnFp64Softmax) {
  const auto& c = GetParam();
  expect_verified(run_harness(spec_named(c.spec), c.params));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SoftmaxRowsNumerics,
    ::testing::Values(
        Case{"tiny.json", {"rows=64", "cols=96"}, "tiny_f32"},
        // 3 rows per block: 101 rows leave a masked block of 2.
        Case{"tiny.json", {"rows=101", "cols=40", "block_rows=3"}, "tiny_masked_tail"},
        Case{"tiny.json", {"rows=50", "cols=64", "dtype=f16", "block_rows=4"}, "tiny_f16"},
        Case{"tiny.json", {"rows=30", "cols=33", "dtype=bf16"}, "tiny_bf16"},
        Case{"tiny.json", {"rows=3", "cols=10"}, "fewer_rows_than_programs"},
        Case{"default.json", {"rows=300", "cols=128", "block_rows=4"}, "default_f32"},
        Case{"default.json", {"rows=200", "cols=256", "dtype=f16"}, "default_f16"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(SoftmaxRows, TimingOnlySkipsVerification) {
  const Outcome o = run_harness(tiny(), {"rows=64", "cols=32"}, true);
  EXPECT_FALSE(o.verified.has_value());
  EXPECT_GT(o.run.sim_time_ps, 0u);
}

TEST(SoftmaxRows, TimingOnlyRunsWithAMaskedLastBlock) {
  const Outcome o = run_harness(tiny(), {"rows=101", "cols=40", "block_rows=3"}, true);
  EXPECT_FALSE(o.verified.has_value());
  EXPECT_EQ(o.details["masked_tail_rows"], 2);
}

TEST(SoftmaxRows, TimingOnlyTakesTheSameSimulatedTimeWhenNoBlockIsMasked) {
  const std::vector<std::string> params = {"rows=64", "cols=32", "block_rows=4"};
  EXPECT_EQ(run_harness(tiny(), params, true).run.sim_time_ps,
            run_harness(tiny(), params).run.sim_time_ps);
}

TEST(SoftmaxRows, RowsShiftedFarBeyondExpsRangeStayFinite) {
  // Every row is x + 200: exp(200) overflows f32 without the max subtraction.
  Simulation sim(tiny());
  const std::int64_t rows = 8, cols = 16;
  std::vector<double> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 200.0 + static_cast<double>(i % cols);
  const Ptr in = alloc_array(sim, DType::f32, rows * cols),
            out = alloc_array(sim, DType::f32, rows * cols);
  write_array(sim, in, make_array(DType::f32, x));
  sim.launch(softmax_rows, in, out, rows, cols, std::int64_t{0}, DType::f32);
  const auto y = read_array(sim, out, DType::f32, rows * cols).to_f64();
  double denom = 0;
  for (std::int64_t j = 0; j < cols; ++j) denom += std::exp(static_cast<double>(j - (cols - 1)));
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const double ref = std::exp(static_cast<double>(i % cols - (cols - 1))) / denom;
    EXPECT_NEAR(y[static_cast<std::size_t>(i)], ref, 1e-6 * ref + 1e-12) << i;
  }
}

TEST(SoftmaxRows, EveryOutputByteIsWrittenOnceWithoutRaces) {
  for (const std::string spec : {"tiny.json", "default.json"}) {
    Simulation sim(Spec::load(spec_path(spec)));
    const std::int64_t rows = 77, cols = 24;
    const Ptr in = alloc_array(sim, DType::f16, rows * cols),
              out = alloc_array(sim, DType::f16, rows * cols);
    write_array(sim, in, random_array(DType::f16, rows * cols, 3, 1));
    const RunResult r = sim.launch(softmax_rows, in, out, rows, cols, std::int64_t{5}, DType::f16);
    const Coverage c = r.coverage(out, static_cast<std::uint64_t>(rows * cols * 2));
    EXPECT_TRUE(c.exactly_once()) << spec << ": " << r.describe(c, out);
    const auto races = r.races();
    EXPECT_TRUE(races.empty()) << r.describe(races);
  }
}

TEST(SoftmaxRows, ARowTooLongForSramIsAUsageErrorSayingWhatFits) {
  try {
    run_harness(tiny(), {"rows=4", "cols=100000"}, true);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a row of 100000 columns"));
    EXPECT_THAT(e.what(), HasSubstr("use cols <= 9362"));
  }
}

}  // namespace
}  // namespace cubesim::kernels
