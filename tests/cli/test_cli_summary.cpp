// Unit tests of the pieces of the CLI that the end-to-end tests cannot reach with the shipped
// kernels: number formatting, --stack-size parsing, and the report and summary of a failed
// verification (exit 1 needs a kernel that computes wrong numbers).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/option_values.hpp"
#include "tools/cubesim/report.hpp"
#include "tools/cubesim/summary.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(CliFormat, Durations) {
  EXPECT_EQ(format_duration_ps(0), "0 ps");
  EXPECT_EQ(format_duration_ps(999), "999 ps");
  EXPECT_EQ(format_duration_ps(1'814'000), "1.814 us");
  EXPECT_EQ(format_duration_ps(999'999'000), "999.999 us");
  EXPECT_EQ(format_duration_ps(999'999'999), "1.000 ms");  // rounds up into the next unit
  EXPECT_EQ(format_duration_ps(999'999'999'999), "1.000 s");
  EXPECT_EQ(format_duration_ps(2'500'000'000'000), "2.500 s");
}

TEST(CliFormat, Rates) {
  EXPECT_EQ(format_si(8.7e13, "FLOP/s"), "87.0 TFLOP/s");
  EXPECT_EQ(format_si(999'900, "B/s"), "1.00 MB/s");
  EXPECT_EQ(format_si(5, "FLOP"), "5.00 FLOP");
  EXPECT_EQ(format_si_small(7.1e-3, "J"), "7.10 mJ");
  EXPECT_EQ(format_si_small(9.52e-4, "J"), "952 uJ");
  EXPECT_EQ(format_si_small(3.2e-13, "J"), "0.32 pJ");
  EXPECT_EQ(format_si_small(379, "W"), "379 W");
  EXPECT_EQ(format_si_small(1960, "W"), "1.96 kW");
  EXPECT_EQ(format_count(76), "76");
  EXPECT_EQ(format_count(324'000), "324 k");
  EXPECT_EQ(format_percent(0.923), "92.3%");
  EXPECT_EQ(format_percent(0.0001234), "0.012%");
}

TEST(CliFormat, Bytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(12.5 * 1024 * 1024), "12.5 MiB");
  EXPECT_EQ(format_bytes(6.0 * 1024 * 1024 * 1024 * 1024), "6.00 TiB");
}

TEST(CliByteSize, Suffixes) {
  EXPECT_EQ(parse_byte_size("65536", "--stack-size"), 65536u);
  EXPECT_EQ(parse_byte_size("64K", "--stack-size"), 65536u);
  EXPECT_EQ(parse_byte_size("64k", "--stack-size"), 65536u);
  EXPECT_EQ(parse_byte_size("64KiB", "--stack-size"), 65536u);
  EXPECT_EQ(parse_byte_size("1M", "--stack-size"), 1u << 20);
  EXPECT_EQ(parse_byte_size("2G", "--stack-size"), 2ull << 30);
  for (const char* bad :
       {"", "K", "-1", "1.5M", "64 K", "64X", "99999999999999999999", "99999999999999G"})
    EXPECT_THROW(parse_byte_size(bad, "--stack-size"), UsageError) << bad;
}

class CliReport : public ::testing::Test {
 protected:
  json report_for(std::optional<bool> verified, bool timing_only) {
    kernels::Outcome& o = outcome_;
    RunStats& s = o.run.stats;
    s.sips = 1;
    s.cubes_per_sip = 2;
    s.pes_per_cube = 4;
    s.timing_only = timing_only;
    s.sim_time_ps = 2'000'000;  // 2 us
    s.network.bytes_by_kind[static_cast<std::size_t>(components::LinkKind::hbm_channel)] = 4096;
    s.network.bytes_by_kind[static_cast<std::size_t>(components::LinkKind::noc)] = 8192;
    s.events = 100;
    s.wall_seconds = 0.5;
    s.flops = 4'000'000;  // GEMM work: the useful flops below
    o.run.sim_time_ps = s.sim_time_ps;
    o.run.report = run_report(s);
    o.verified = verified;
    o.max_rel_error = 0.5;
    o.tolerance = 0.01;
    o.elements_checked = 64;
    o.useful_flops = 4'000'000;  // 2 TFLOP/s over 2 us
    const json describe = {{"mesh", {2, 2}},
                           {"ucie_topology", "ring"},
                           {"peak_flops_per_s", {{"f16", {{"per_pe", 1e12}, {"system", 8e12}}}}}};
    RunRequest req{
        "specs/tiny.json", {"system.ucie.latency_ns=5"}, "k", {{"dtype", "f16"}}, 3, 65536, ""};
    const auto spec = components::Spec::load(std::string(CUBESIM_SOURCE_DIR) + "/specs/tiny.json");
    return build_report(req, spec, describe, o, 0.75);
  }
  std::string summary(const json& r) const {
    std::ostringstream s;
    print_summary(s, r, outcome_.run.stats, {"dtype"});
    return s.str();
  }
  kernels::Outcome outcome_;
};

// --trace-summary: hand-made waits over a 2 us run; shares of the run, the top three kinds.
TEST_F(CliReport, WaitSummaryGivesEachPesTopWaitsAsSharesOfTheRun) {
  RunStats s;
  s.sim_time_ps = 2'000'000;
  PeStats a;
  a.pe = "sip0.cube0.pe0";
  a.finish_ps = 2'000'000;
  a.load_wait_ps = 1'000'000;   // 50 %
  a.barrier_wait_ps = 200'000;  // 10 %
  a.gemm_wait_ps = 100'000;     // 5 %
  a.dispatch_wait_ps = 20'000;  // 1 %: fourth, not shown
  PeStats b;
  b.pe = "sip0.cube0.pe1";
  b.finish_ps = 1'000'000;
  b.recv_wait_ps = 500'000;  // 25 %
  s.pes = {a, b};
  std::ostringstream out;
  print_wait_summary(out, s);
  const std::string t = out.str();
  EXPECT_THAT(t, HasSubstr("sip0.cube0.pe0  ends 2.000 us, 66.0% waiting: load 50.0%, barrier "
                           "10.0%, GEMM 5.0%"));
  EXPECT_THAT(t, HasSubstr("sip0.cube0.pe1  ends 1.000 us, 25.0% waiting: recv 25.0%"));
  // Over both PEs: (1.32 + 0.5) us of 2 x 2 us.
  EXPECT_THAT(t, HasSubstr("all PEs  45.5% waiting: load 25.0%, recv 12.5%, barrier 5.0%"));
}

TEST_F(CliReport, FailedVerification) {
  const json r = report_for(false, false);
  EXPECT_EQ(r["verified"], false);
  EXPECT_EQ(r["status"], "verification_failed");
  EXPECT_DOUBLE_EQ(r["max_rel_error"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r["achieved_flops_per_second"].get<double>(), 2e12);
  EXPECT_DOUBLE_EQ(r["peak_fraction"].get<double>(), 0.25);
  EXPECT_EQ(r["system"]["total_pes"], 8);  // the run's own keys win
  EXPECT_EQ(r["system"]["ucie_topology"], "ring");
  const std::string s = summary(r);
  EXPECT_THAT(s, HasSubstr("FAILED: max rel error 0.5 > tolerance 0.01 over 64 elements"));
  EXPECT_THAT(s, HasSubstr("2.00 TFLOP/s = 25.0% of the 8.00 TFLOP/s f16 system peak"));
  EXPECT_THAT(s, HasSubstr("overrides   system.ucie.latency_ns=5"));
  EXPECT_THAT(s, HasSubstr("sim time    2.000 us"));
}

TEST_F(CliReport, SummaryTellsTrafficAndLinksFromTheStatistics) {
  components::LinkStats& n = outcome_.run.stats.network;
  n.elapsed_ps = 2'000'000;
  n.bounded_buffers = true;
  n.links = {{.name = "sip0.cube0.noc.(0,0)->(1,0).east",
              .kind = components::LinkKind::noc,
              .bytes = 8192,
              .packets = 2,
              .busy_ps = 1'000'000,
              .credit_wait_ps = 0},
             {.name = "sip0.cube0.hbm.ch0",
              .kind = components::LinkKind::hbm_channel,
              .bytes = 4096,
              .packets = 1,
              .busy_ps = 500'000,
              .credit_wait_ps = 3'000}};
  n.busiest = 0;
  n.most_held_back = 1;
  const std::string s = summary(report_for(true, false));
  EXPECT_THAT(s, HasSubstr("traffic     HBM 4.00 KiB | NOC 8.00 KiB | UCIe 0 B | inter-SIP 0 B"));
  EXPECT_THAT(s, HasSubstr("busiest     sip0.cube0.noc.(0,0)->(1,0).east (noc), 50.0% busy "
                           "(1.000 us)"));
  EXPECT_THAT(s, HasSubstr("held back   sip0.cube0.hbm.ch0: its packets waited 3.000 ns"));
  EXPECT_THAT(s, HasSubstr("500 ms simulating"));
  EXPECT_THAT(s, HasSubstr("200 events/s (100 events)"));
}

TEST_F(CliReport, SummaryWithoutTrafficSaysSo) {
  const std::string s = summary(report_for(true, false));
  EXPECT_THAT(s, HasSubstr("busiest     no link carried traffic"));
  EXPECT_THAT(s, ::testing::Not(HasSubstr("held back")));
}

TEST_F(CliReport, SummaryTellsMessagesWhenThereWereAny) {
  EXPECT_THAT(summary(report_for(true, false)), ::testing::Not(HasSubstr("messages")));
  RunStats& s = outcome_.run.stats;
  s.pes.resize(2);
  s.messages = {.messages = 3, .bytes = 3072, .send_wait_ps = 4'000, .recv_wait_ps = 10'000};
  const json r = report_for(true, false);
  EXPECT_EQ(r["stats"]["messages"]["messages"], 3);
  EXPECT_EQ(r["stats"]["messages"]["recv_wait_ps"], 10'000);
  EXPECT_THAT(summary(r), HasSubstr("messages    3 sent (3.00 KiB); per program, blocked 2.000 ns "
                                    "sending (no free slot) and 5.000 ns receiving, on average"));
}

TEST_F(CliReport, TimingOnly) {
  const json r = report_for(std::nullopt, true);
  EXPECT_TRUE(r["verified"].is_null());
  EXPECT_TRUE(r["max_rel_error"].is_null());
  EXPECT_EQ(r["status"], "ok");
  EXPECT_THAT(summary(r), HasSubstr("verified    skipped (timing-only)"));
}

}  // namespace
}  // namespace cubesim::cli
