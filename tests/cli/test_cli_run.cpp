// End-to-end tests of `cubesim run`: the summary, the --json report and its contract keys,
// --timing-only, determinism, --trace and --set, on specs/tiny.json with small problems.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kVectorAdd = {"vector_add", "-p", "n=10000", "-p", "block=512"};
const std::vector<std::string> kShardedGemm = {"sharded_gemm", "-p", "M=16", "-p",
                                               "K=32",         "-p", "N=64"};

class CliRun : public CliTest {
 protected:
  // cubesim run tiny.json KERNEL... --json FILE [extra...]; expects exit 0, returns the report.
  json run_ok(const std::vector<std::string>& kernel_args, const std::vector<std::string>& extra,
              const std::string& report_name, CliResult* result = nullptr) {
    std::vector<std::string> args = {"run", spec_file("tiny.json")};
    args.insert(args.end(), kernel_args.begin(), kernel_args.end());
    args.insert(args.end(), {"--json", path(report_name).string()});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = cubesim(args);
    EXPECT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(r.err, "") << show(r);
    if (result) *result = r;
    return read_json(path(report_name));
  }
};

// The keys DESIGN.md promises, with sane values.
void expect_contract_keys(const json& j, const std::string& kernel) {
  EXPECT_EQ(j["spec"], "tiny");
  EXPECT_EQ(j["spec_file"], spec_file("tiny.json"));
  EXPECT_EQ(j["kernel"], kernel);
  EXPECT_TRUE(j["params"].is_object());
  EXPECT_GT(j["sim_time_ps"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(j.contains("verified"));
  EXPECT_TRUE(j.contains("max_rel_error"));
  const json& s = j["system"];
  EXPECT_EQ(s["sips"], 1);
  EXPECT_EQ(s["cubes_per_sip"], 2);
  EXPECT_EQ(s["pes_per_cube"], 4);
  EXPECT_EQ(s["total_pes"], 8);
  const json& st = j["stats"];
  for (const char* k :
       {"flops", "hbm_bytes", "noc_bytes", "ucie_bytes", "inter_sip_bytes", "events"})
    EXPECT_TRUE(st[k].is_number_unsigned()) << k;
  EXPECT_GT(st["events"].get<std::uint64_t>(), 0u);
  EXPECT_GT(st["hbm_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(st["inter_sip_bytes"], 0);  // one SIP
  ASSERT_TRUE(st["pes"].is_array());
  EXPECT_EQ(st["pes"].size(), 8u);
  for (const auto& pe : st["pes"]) {
    EXPECT_TRUE(pe["pe"].is_string());
    EXPECT_LE(pe["finish_ps"].get<std::uint64_t>(), j["sim_time_ps"].get<std::uint64_t>());
    EXPECT_TRUE(pe.contains("vector_busy_ps") && pe.contains("gemm_busy_ps"));
  }
  ASSERT_TRUE(st["links"].is_object());
  EXPECT_FALSE(st["links"].empty());
  for (const auto& [name, link] : st["links"].items()) {
    EXPECT_GE(link["utilisation"].get<double>(), 0.0) << name;
    EXPECT_LE(link["utilisation"].get<double>(), 1.0) << name;
  }
  EXPECT_TRUE(st["busiest_link"]["name"].is_string());
  EXPECT_GE(j["wall_seconds"].get<double>(), 0.0);
  EXPECT_GE(j["events_per_second"].get<double>(), 0.0);
  EXPECT_EQ(j["seed"], 1);
  EXPECT_TRUE(j["overrides"].is_array());
  EXPECT_TRUE(j["cubesim_version"].is_string());
}

TEST_F(CliRun, VectorAdd) {
  CliResult r;
  const json j = run_ok(kVectorAdd, {}, "report.json", &r);
  expect_contract_keys(j, "vector_add");
  EXPECT_EQ(j["params"]["n"], 10000);
  EXPECT_EQ(j["params"]["block"], 512);
  EXPECT_EQ(j["params"]["dtype"], "f32");  // the default, filled in
  EXPECT_EQ(j["verified"], true);
  EXPECT_LE(j["max_rel_error"].get<double>(), j["tolerance"].get<double>());
  EXPECT_EQ(j["useful_flops"], 10000);
  EXPECT_EQ(j["status"], "ok");
  // Adds are no GEMM work: no share of the GEMM peak (tiny's small peak made it 1,142,568).
  EXPECT_TRUE(j["peak_fraction"].is_null());
  EXPECT_THAT(r.out, Not(HasSubstr("system peak")));
  EXPECT_THAT(r.out, Not(HasSubstr("launch ")));  // one program per PE

  EXPECT_THAT(r.out, HasSubstr("vector_add on tiny"));
  EXPECT_THAT(r.out, HasSubstr("1 SIP x 2 cubes x 4 PEs = 8 PEs"));
  EXPECT_THAT(r.out, HasSubstr("n=10000 block=512 dtype=f32"));
  EXPECT_THAT(r.out, HasSubstr("sim time"));
  EXPECT_THAT(r.out, HasSubstr("HBM "));
  EXPECT_THAT(r.out, HasSubstr("busiest"));
  EXPECT_THAT(r.out, HasSubstr("passed: max rel error"));
  EXPECT_THAT(r.out, HasSubstr("events/s"));
}

TEST_F(CliRun, TheDefaultSpecRunsWithOneToEightSips) {
  // default.json bounds its UCIe and router buffers: its virtual channels must cover the classes
  // of any number of SIPs, and the packets must all arrive (no credit deadlock).
  for (int sips = 1; sips <= 8; ++sips) {
    const std::string report = "sips" + std::to_string(sips) + ".json";
    const auto r =
        cubesim({"run", spec_file("default.json"), "vector_add", "-p", "n=65536", "--set",
                 "system.sips.count=" + std::to_string(sips), "--json", path(report).string()});
    ASSERT_EQ(r.code, 0) << show(r);
    const json j = read_json(path(report));
    EXPECT_EQ(j["system"]["sips"], sips);
    EXPECT_EQ(j["verified"], true);
  }
}

TEST_F(CliRun, ACollectiveShowsItsTimeAlgorithmAndBusBandwidthApartFromItsStaging) {
  const auto r = cubesim({"run", spec_file("tiny.json"), "allreduce", "-p", "bytes_per_pe=256",
                          "--json", path("ar.json").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  const json j = read_json(path("ar.json"));
  const auto collective = j["details"]["collective_time_ps"].get<std::uint64_t>();
  const auto sim = j["sim_time_ps"].get<std::uint64_t>();
  ASSERT_LT(collective, sim);
  // Times print in ns below 1 us: the collective's and the staging's, to the ps.
  const auto ns = [](std::uint64_t ps) {
    return std::to_string(ps / 1000) + "." + std::to_string(1000 + ps % 1000).substr(1) + " ns";
  };
  ASSERT_LT(sim, 1'000'000u);
  EXPECT_THAT(r.out, HasSubstr("collective  allreduce ring " + ns(collective) + ", algbw "));
  EXPECT_THAT(r.out, HasSubstr(", busbw "));
  EXPECT_THAT(r.out, HasSubstr("staging     " + ns(sim - collective) + " before and after it"));
}

TEST_F(CliRun, GridRunsTheKernelOnALogicalGridInWaves) {
  CliResult r;
  const json j = run_ok(kVectorAdd, {"--grid", "40"}, "grid.json", &r);
  EXPECT_THAT(r.out, HasSubstr("launch      40 programs (grid 40x1x1) on 8 PEs in 5 waves, "
                               "dispatch round_robin"));
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["grid"], (json{40, 1, 1}));
  // tiny has 8 PEs: 40 programs run in 5 waves, placed round-robin over the cubes by default.
  EXPECT_EQ(j["launch"], (json{{"dispatch", "round_robin"}, {"programs", 40}, {"waves", 5}}));
  for (const auto& pe : j["stats"]["pes"]) EXPECT_EQ(pe["programs"], 5);
  const json cube_major =
      run_ok(kVectorAdd, {"--grid", "4x5", "--set", "system.dispatch.policy=cube_major"}, "c.json");
  EXPECT_EQ(cube_major["launch"]["dispatch"], "cube_major");
  EXPECT_EQ(cube_major["grid"], (json{4, 5, 1}));
  EXPECT_EQ(cube_major["verified"], true);
}

TEST_F(CliRun, JsonToALinkWritesWhereItLeadsAndKeepsTheLink) {
  const auto target = path("target.json"), link = path("link.json");
  std::ofstream(target) << "old";
  std::filesystem::create_symlink(target, link);
  const auto r = cubesim(
      {"run", spec_file("tiny.json"), "vector_add", "-p", "n=100", "--json", link.string()});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  std::ifstream in(target);
  EXPECT_EQ(json::parse(in)["kernel"], "vector_add");
}

TEST_F(CliRun, VectorAddTritonStyleLaunchesOneProgramPerBlock) {
  const json j = run_ok({"vector_add", "-p", "n=10000", "-p", "grid=triton"}, {}, "t.json");
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["details"]["block"], 1024);
  EXPECT_EQ(j["launch"]["programs"], 10);  // cdiv(10000, 1024)
  EXPECT_EQ(j["launch"]["waves"], 2);
}

TEST_F(CliRun, ShardedGemm) {
  CliResult r;
  const json j = run_ok(kShardedGemm, {}, "report.json", &r);
  expect_contract_keys(j, "sharded_gemm");
  EXPECT_EQ(j["verified"], true);
  EXPECT_EQ(j["useful_flops"], 2 * 16 * 32 * 64);
  EXPECT_GE(j["stats"]["flops"].get<std::uint64_t>(), 2u * 16 * 32 * 64);
  EXPECT_GT(j["stats"]["ucie_bytes"].get<std::uint64_t>(), 0u);  // B and out span both cubes
  EXPECT_GT(j["peak_flops_per_second"].get<double>(), 0.0);
  EXPECT_THAT(r.out, HasSubstr("FLOP/s"));
  EXPECT_THAT(r.out, HasSubstr("system peak"));
  EXPECT_THAT(r.out, HasSubstr("passed"));
}

TEST_F(CliRun, TimingOnlySkipsVerificationButKeepsTheTime) {
  const json functional = run_ok(kShardedGemm, {}, "functional.json");
  CliResult r;
  const json timing = run_ok(kShardedGemm, {"--timing-only"}, "timing.json", &r);
  EXPECT_TRUE(timing["verified"].is_null());
  EXPECT_TRUE(timing["max_rel_error"].is_null());
  EXPECT_EQ(timing["timing_only"], true);
  EXPECT_EQ(timing["sim_time_ps"], functional["sim_time_ps"]);
  EXPECT_EQ(timing["stats"]["hbm_bytes"], functional["stats"]["hbm_bytes"]);
  EXPECT_THAT(r.out, HasSubstr("skipped (timing-only)"));
}

TEST_F(CliRun, FlowNetworkModelIsRecordedAndMovesTheSameBytes) {
  const json packet = run_ok(kShardedGemm, {"--timing-only"}, "packet.json");
  const json flow = run_ok(kShardedGemm, {"--timing-only", "--network", "flow"}, "flow.json");
  EXPECT_EQ(packet["network"], "packet");
  EXPECT_EQ(flow["network"], "flow");
  for (const char* k : {"hbm_bytes", "noc_bytes", "ucie_bytes"})
    EXPECT_EQ(flow["stats"][k], packet["stats"][k]) << k;
  EXPECT_LT(flow["stats"]["events"].get<std::uint64_t>(),
            packet["stats"]["events"].get<std::uint64_t>());
  EXPECT_GT(flow["sim_time_ps"].get<std::uint64_t>(), 0u);
}

json without_wall_clock(json j) {
  for (const char* k : {"wall_seconds", "events_per_second", "harness_wall_seconds"}) j.erase(k);
  return j;
}

// --host: the inputs (x, y: 2 x 10000 f32) go in and the output comes back over the host link
// (8 GB/s here, the bound), timing-only alike; end to end is their sum with the sim time.
TEST_F(CliRun, HostTimesTheInputsInAndTheOutputsBack) {
  for (const bool timing_only : {false, true}) {
    CliResult r;
    std::vector<std::string> extra = {"--host", "--set", "system.host.link_bandwidth_GBps=8"};
    if (timing_only) extra.push_back("--timing-only");
    const json j = run_ok(kVectorAdd, extra, "host.json", &r);
    const json& h = j["host"];
    ASSERT_TRUE(h.is_object()) << j.dump(2);
    EXPECT_EQ(h["to_device"]["bytes"], 80000u);
    EXPECT_EQ(h["to_device"]["buffers"], 2u);
    EXPECT_EQ(h["to_device"]["serialisation_ps"], 10'000'000u);  // 80000 B at 8 GB/s: 10 us
    EXPECT_EQ(h["to_device"]["bottleneck"], "sip0.host_link.to_device");
    EXPECT_EQ(h["to_host"]["bytes"], 40000u);
    EXPECT_EQ(h["to_host"]["serialisation_ps"], 5'000'000u);
    for (const char* d : {"to_device", "to_host"})
      EXPECT_EQ(h[d]["time_ps"], h[d]["setup_ps"].get<std::uint64_t>() +
                                     h[d]["latency_ps"].get<std::uint64_t>() +
                                     h[d]["serialisation_ps"].get<std::uint64_t>());
    EXPECT_EQ(h["time_ps"], h["to_device"]["time_ps"].get<std::uint64_t>() +
                                h["to_host"]["time_ps"].get<std::uint64_t>());
    EXPECT_EQ(h["end_to_end_ps"],
              h["time_ps"].get<std::uint64_t>() + j["sim_time_ps"].get<std::uint64_t>());
    EXPECT_THAT(r.out, HasSubstr("inputs in "));
    EXPECT_THAT(r.out, HasSubstr("bound by sip0.host_link.to_device"));
    EXPECT_THAT(r.out, HasSubstr("end to end"));
  }
  const json plain = run_ok(kVectorAdd, {}, "plain.json");
  EXPECT_FALSE(plain.contains("host"));
}

TEST_F(CliRun, IdenticalRunsGiveIdenticalReports) {
  const json a = run_ok(kVectorAdd, {"--seed", "7"}, "a.json");
  const json b = run_ok(kVectorAdd, {"--seed", "7"}, "b.json");
  EXPECT_EQ(a["seed"], 7);
  EXPECT_EQ(without_wall_clock(a), without_wall_clock(b));
}

TEST_F(CliRun, SetOverridesAreAppliedAndRecorded) {
  const json base = run_ok(kShardedGemm, {"--timing-only"}, "base.json");
  const json slow = run_ok(kShardedGemm,
                           {"--timing-only", "--set", "system.ucie.bandwidth_GBps=1", "--set",
                            "system.ucie.latency_ns=1000"},
                           "slow.json");
  EXPECT_EQ(slow["overrides"],
            json::array({"system.ucie.bandwidth_GBps=1", "system.ucie.latency_ns=1000"}));
  EXPECT_DOUBLE_EQ(slow["system"]["bandwidth_GBps"]["ucie_link"].get<double>(), 1.0);
  EXPECT_GT(slow["sim_time_ps"].get<std::uint64_t>(), base["sim_time_ps"].get<std::uint64_t>());
}

TEST_F(CliRun, TraceIsTraceEventJson) {
  run_ok(kVectorAdd, {"--trace", path("trace.json").string()}, "report.json");
  const json t = read_json(path("trace.json"));
  ASSERT_TRUE(t.contains("traceEvents"));
  EXPECT_FALSE(t["traceEvents"].empty());
}

TEST_F(CliRun, StackSizeWithSuffix) {
  const json j = run_ok(kVectorAdd, {"--stack-size", "128K"}, "report.json");
  EXPECT_EQ(j["stack_size_bytes"], 128 * 1024);
}

TEST_F(CliRun, LogLevelAfterTheSubcommand) {
  run_ok(kVectorAdd, {"--log-level", "error"}, "report.json");
}

}  // namespace
}  // namespace cubesim::test
