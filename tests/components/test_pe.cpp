// A PE as one object: its SRAM account, GEMM engine and vector unit, and the statistics of a
// launch declared once (pe_statistics.hpp). Expected times come from the configuration
// (small_config: 50 ns start-up, 32 TFLOP/s for f16).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "components/pe/pe.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using testing::Bench;

struct QuietJob final : GemmEngine::Job {
  void on_finish(Tick, Tick) override {}
};

// PE 3 of a system, its SRAM as the spec gives it.
struct PeBench : Bench {
  PeBench() : Bench(testing::small_config()) {}
  Pe pe{sched, network(), sys.gemm_timing(), sys.vector_unit(), cfg().pe.sram_bytes, 3};

  // Runs an m x n x k f16 product on the PE's engine, nothing streamed.
  void run_gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
    auto job = std::make_unique<QuietJob>();
    job->m = m;
    job->n = n;
    job->k = k;
    job->dtype = DType::f16;
    pe.gemm().submit(std::move(job));
    sched.run();
  }
};

TEST(Pe, OwnsItsSramItsEngineAndTheSystemsVectorUnit) {
  PeBench b;
  EXPECT_EQ(b.pe.global_pe(), 3u);
  EXPECT_EQ(b.pe.sram().capacity(), b.cfg().pe.sram_bytes);
  EXPECT_EQ(&b.pe.vector(), &b.sys.vector_unit());
  EXPECT_EQ(b.pe.shared_sram().get(), &b.pe.sram());
}

TEST(Pe, StatisticsAreItsCountersWithWhatItsPartsMeasured) {
  PeBench b;
  b.pe.counters().vector_busy_ps = 1234;
  b.pe.counters().messages_sent = 7;
  ASSERT_TRUE(b.pe.sram().allocate(5000));
  ASSERT_TRUE(b.pe.sram().allocate(3000));
  b.pe.sram().free(6000);
  b.run_gemm(96, 40, 72);
  const PeStatistics s = b.pe.statistics();
  EXPECT_EQ(s.vector_busy_ps, 1234u);
  EXPECT_EQ(s.messages_sent, 7u);
  EXPECT_EQ(s.gemm_busy_ps,
            b.cfg().pe.gemm.startup + b.sys.gemm_timing().compute_time(96, 40, 72, DType::f16));
  EXPECT_EQ(s.flops, 2u * 96 * 40 * 72);
  EXPECT_EQ(s.sram_peak_bytes, 8000u);
}

TEST(Pe, ResetStartsEveryStatisticFromZeroAndTheSramPeakFromWhatIsHeld) {
  PeBench b;
  for (const PeStatistic& row : kPeStatistics) b.pe.counters().*row.member = 11;
  ASSERT_TRUE(b.pe.sram().allocate(4096));
  b.pe.sram().free(1024);
  b.run_gemm(16, 16, 16);
  b.pe.reset_statistics();
  const PeStatistics s = b.pe.statistics();
  for (const PeStatistic& row : kPeStatistics) {
    if (row.member == &PeStatistics::sram_peak_bytes) continue;
    EXPECT_EQ(s.*row.member, 0u) << row.name;
  }
  EXPECT_EQ(s.sram_peak_bytes, 3072u);  // still held: the peak of the new launch starts there
}

TEST(PeStatistics, EveryRowHasAKeyAUnitAndAMeaning) {
  std::set<std::string_view> keys;
  for (const PeStatistic& row : kPeStatistics) {
    EXPECT_FALSE(row.name.empty());
    EXPECT_FALSE(row.unit.empty()) << row.name;
    EXPECT_FALSE(row.description.empty()) << row.name;
    EXPECT_TRUE(keys.insert(row.name).second) << row.name << " twice";
    // Times are picoseconds, and say so in their key.
    EXPECT_EQ(row.unit == "ps", row.name.ends_with("_ps")) << row.name;
  }
}

const std::filesystem::path kDoc = std::filesystem::path(CUBESIM_SOURCE_DIR) / "docs/cli.md";
constexpr std::string_view kBegin = "<!-- BEGIN GENERATED: pe_statistics_markdown() -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED -->";

// Regenerate with: CUBESIM_UPDATE_PE_STATISTICS=1 ctest -R PeStatistics (then review the diff).
TEST(PeStatistics, DocsCliHoldsExactlyTheGeneratedTable) {
  std::ifstream in(kDoc);
  std::ostringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  const auto begin = doc.find(kBegin);
  ASSERT_NE(begin, std::string::npos) << kDoc << " lacks the marker " << kBegin;
  const std::size_t from = begin + kBegin.size();
  const auto end = doc.find(kEnd, from);
  ASSERT_NE(end, std::string::npos) << kDoc << " lacks " << kEnd << " after " << kBegin;
  const std::string generated = pe_statistics_markdown();
  if (std::getenv("CUBESIM_UPDATE_PE_STATISTICS") != nullptr) {
    doc.replace(from, end - from, generated);
    std::ofstream(kDoc) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(from, end - from), generated)
      << "docs/cli.md's per-PE statistics are out of date; rerun this test with "
         "CUBESIM_UPDATE_PE_STATISTICS=1 set";
}

}  // namespace
}  // namespace cubesim::components
