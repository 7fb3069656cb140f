// End-to-end tests of cubesim --help, list, validate and info: the built binary, run as a user
// would.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using CliHelp = CliTest;

TEST_F(CliHelp, ListsOnlyImplementedSubcommandsAndExitCodes) {
  const auto r = cubesim({"--help"});
  ASSERT_EQ(r.code, 0) << show(r);
  for (const char* sub : {"run", "sweep", "validate", "info", "list"})
    EXPECT_THAT(r.out, HasSubstr(sub));
  EXPECT_THAT(r.out, Not(HasSubstr("sweep-worker")));  // internal: the sweep's worker processes
  EXPECT_THAT(r.out, HasSubstr("Exit codes: 0 ok, 1 verification failed, 2 usage or spec error"));
}

TEST_F(CliHelp, EverySubcommandHasHelp) {
  for (const char* sub : {"run", "sweep", "validate", "info", "list"}) {
    const auto r = cubesim({sub, "--help"});
    EXPECT_EQ(r.code, 0) << show(r);
    EXPECT_THAT(r.out, HasSubstr("Exit codes")) << sub;
  }
  const auto r = cubesim({"run", "--help"});
  for (const char* flag :
       {"-p", "--set", "--timing-only", "--backend", "--json", "--trace", "--seed", "--stack-size"})
    EXPECT_THAT(r.out, HasSubstr(flag));
}

TEST_F(CliHelp, Version) {
  const auto r = cubesim({"--version"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("cubesim 0."));
}

using CliList = CliTest;

TEST_F(CliList, NamesKernelsWithParameters) {
  const auto r = cubesim({"list"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("sharded_gemm"));
  EXPECT_THAT(r.out, HasSubstr("vector_add"));
  EXPECT_THAT(r.out, HasSubstr("-p n="));
}

TEST_F(CliList, Json) {
  const auto r = cubesim({"list", "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  bool found = false;
  for (const auto& k : j) {
    EXPECT_TRUE(k["name"].is_string());
    EXPECT_TRUE(k["description"].is_string());
    ASSERT_TRUE(k["params"].is_array());
    for (const auto& p : k["params"]) {
      EXPECT_TRUE(p.contains("name") && p.contains("type") && p.contains("default")) << p;
    }
    if (k["name"] == "vector_add") {
      found = true;
      EXPECT_FALSE(k["params"].empty());
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(CliList, StatsGivesEachPerPeStatisticWithItsUnit) {
  const auto r = cubesim({"list", "--stats"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("stats.pes"));
  EXPECT_THAT(r.out, HasSubstr("finish_ps (ps)"));
  EXPECT_THAT(r.out, HasSubstr("sram_peak_bytes (bytes)"));
  EXPECT_THAT(r.out, HasSubstr("flops (FLOP)"));
  EXPECT_THAT(r.out, Not(HasSubstr("vector_add")));  // the statistics, not the kernels
}

// The statistics --stats lists are exactly the keys of a run's per-PE report, besides `pe`.
TEST_F(CliList, StatsJsonAreTheKeysOfARunsPerPeReport) {
  const auto r = cubesim({"list", "--stats", "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto listed = nlohmann::json::parse(r.out);
  ASSERT_TRUE(listed.is_array());
  std::set<std::string> names;
  for (const auto& s : listed) {
    EXPECT_TRUE(s["unit"].is_string() && s["description"].is_string()) << s;
    EXPECT_TRUE(names.insert(s["name"].get<std::string>()).second) << s;
  }
  const auto run = cubesim({"run", spec_file("tiny.json"), "vector_add", "-p", "n=1000", "--json",
                            path("report.json").string()});
  ASSERT_EQ(run.code, 0) << show(run);
  const auto pes = read_json(path("report.json"))["stats"]["pes"];
  ASSERT_FALSE(pes.empty());
  std::set<std::string> reported;
  for (const auto& [key, value] : pes[0].items())
    if (key != "pe") reported.insert(key);
  EXPECT_EQ(names, reported);
}

using CliValidate = CliTest;

TEST_F(CliValidate, ShippedSpecsAreValid) {
  const auto r = cubesim({"validate", spec_file("tiny.json"), spec_file("default.json")});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("ok  " + spec_file("tiny.json")));
  EXPECT_THAT(r.out, HasSubstr("ok  " + spec_file("default.json")));
  EXPECT_EQ(r.err, "");
}

TEST_F(CliValidate, OneBadFileFailsWithItsPathAndField) {
  const auto bad = path("bad.json");
  std::ofstream(bad) << R"({"name": "bad", "extends": ")" << spec_file("tiny.json")
                     << R"(", "system": {"ucie": {"bandwidth_GBps": -3}}})";
  const auto r = cubesim({"validate", spec_file("tiny.json"), bad.string()});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.out, HasSubstr("ok  " + spec_file("tiny.json")));
  EXPECT_THAT(r.err, HasSubstr("cubesim: " + bad.string()));
  EXPECT_THAT(r.err, HasSubstr("/system/ucie/bandwidth_GBps"));
  EXPECT_THAT(r.err, HasSubstr("1 of 2 spec files invalid"));
}

TEST_F(CliValidate, MissingFile) {
  const auto r = cubesim({"validate", path("nope.json").string()});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("nope.json"));
}

TEST_F(CliValidate, NeedsAFile) {
  const auto r = cubesim({"validate"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cubesim: "));
}

using CliInfo = CliTest;

TEST_F(CliInfo, Text) {
  const auto r = cubesim({"info", spec_file("tiny.json")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("1 SIP x 2 cubes x 4 PEs = 8 PEs"));
  EXPECT_THAT(r.out, HasSubstr("2x2 NOC mesh"));
  EXPECT_THAT(r.out, HasSubstr("f16"));
  EXPECT_THAT(r.out, HasSubstr("TFLOP/s"));  // tiny: 1 TFLOP/s f16 per PE
  EXPECT_THAT(r.out, HasSubstr("256 KiB per PE"));
  EXPECT_THAT(r.out, HasSubstr("256 MiB per cube"));
  EXPECT_THAT(r.out, HasSubstr("messages    "));
}

TEST_F(CliInfo, IntegerRatesAreInOpsAndBoolHasNone) {
  const auto r = cubesim(
      {"info", spec_file("tiny.json"), "--set", "system.pe.gemm.peak_TFLOPS.i8=2", "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["peak_flops_per_s"].contains("bool"));  // a GEMM multiplies no masks
  EXPECT_DOUBLE_EQ(j["peak_flops_per_s"]["i8"]["per_pe"].get<double>(), 2e12);
  const auto t =
      cubesim({"info", spec_file("tiny.json"), "--set", "system.pe.gemm.peak_TFLOPS.i8=2"});
  ASSERT_EQ(t.code, 0) << show(t);
  EXPECT_THAT(t.out, HasSubstr("i8      2.00 TOP/s      16.0 TOP/s"));
  EXPECT_THAT(t.out, HasSubstr("no GEMM in f8e4m3, f8e5m2, i64 "));
  EXPECT_THAT(t.out, Not(HasSubstr("bool")));
}

// tiny.json gives the GEMM engine f16, bf16, f32 and i32 rates only: the other dtypes have no
// GEMM, and the peak table says so instead of listing a rate of 0 for them.
TEST_F(CliInfo, PeakListsOnlyTheDtypesTheGemmEngineRuns) {
  const auto r = cubesim({"info", spec_file("tiny.json")});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, Not(HasSubstr(" 0 FLOP/s")));
  EXPECT_THAT(r.out, Not(HasSubstr(" 0 OP/s")));
  for (const char* t : {"i8 ", "i64", "f8e4m3"})
    EXPECT_THAT(r.out, Not(testing::ContainsRegex(std::string("\n +") + t + " +[0-9]"))) << t;
  EXPECT_THAT(r.out, HasSubstr("f32     250 GFLOP/s"));
  EXPECT_THAT(r.out, HasSubstr("i32     500 GOP/s"));
  EXPECT_THAT(r.out, HasSubstr("no GEMM in f8e4m3, f8e5m2, i64, i8 (the spec gives no "
                               "system.pe.gemm.peak_TFLOPS for them)"));
  // With every rate given but one, the line names that one.
  const auto one = cubesim({"info", spec_file("tiny.json"), "--set",
                            R"(system.pe.gemm.peak_TFLOPS={"f16":1,"bf16":1,"f32":1,"i32":1,)"
                            R"("i8":1,"f8e4m3":1,"f8e5m2":1})"});
  ASSERT_EQ(one.code, 0) << show(one);
  EXPECT_THAT(one.out, HasSubstr("no GEMM in i64 (the spec gives no "
                                 "system.pe.gemm.peak_TFLOPS for it)"));
  // JSON keeps every dtype, with 0 where the engine has no rate.
  const auto j = cubesim({"info", spec_file("tiny.json"), "--json"});
  ASSERT_EQ(j.code, 0) << show(j);
  EXPECT_EQ(nlohmann::json::parse(j.out)["peak_flops_per_s"]["i8"]["per_pe"].get<double>(), 0);
}

TEST_F(CliInfo, JsonWithOverride) {
  const auto r =
      cubesim({"info", spec_file("tiny.json"), "--set", "system.sips.cubes_per_sip=4", "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cubes_per_sip"], 4);
  EXPECT_EQ(j["total_pes"], 16);
  EXPECT_EQ(j["overrides"], nlohmann::json::array({"system.sips.cubes_per_sip=4"}));
  EXPECT_DOUBLE_EQ(j["peak_flops_per_s"]["f16"]["per_pe"].get<double>(), 1e12);
  EXPECT_DOUBLE_EQ(j["peak_flops_per_s"]["f16"]["system"].get<double>(), 16e12);
  EXPECT_DOUBLE_EQ(j["bandwidth_GBps"]["hbm_per_cube"].get<double>(), 64);
  EXPECT_EQ(j["sram_bytes_per_pe"], 256 * 1024);
  const auto& m = j["messages"]["windows"];
  EXPECT_FALSE(m.contains("inter_sip")) << "one SIP has no inter-SIP channels";
  for (const char* k : {"mesh", "ucie"})
    EXPECT_EQ(m[k]["channel_bytes"].get<std::uint64_t>(),
              m[k]["slots"].get<std::uint64_t>() * m[k]["slot_bytes"].get<std::uint64_t>())
        << k;
}

// Each class's window beside its credit loop; a window that cannot cover its loop is a warning
// that names the field to raise and how many slots would cover it.
TEST_F(CliInfo, SaysWhenAMessageWindowCannotCoverItsCreditLoop) {
  const auto fine = cubesim({"info", spec_file("default.json"), "--set", "system.sips.count=2"});
  ASSERT_EQ(fine.code, 0) << show(fine);
  EXPECT_THAT(fine.out, AllOf(HasSubstr("mesh"), HasSubstr("UCIe"), HasSubstr("inter-SIP"),
                              HasSubstr("(default), covers its")));
  EXPECT_THAT(fine.err, Not(HasSubstr("credit loop")));
  const auto r = cubesim({"info", spec_file("default.json"), "--set", "system.sips.count=2",
                          "--set", "system.messages.inter_sip.slots=4"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.err, AllOf(HasSubstr("warning: inter-SIP channels: 4 slots"),
                           HasSubstr("system.messages.inter_sip.slots")));
  const auto j = nlohmann::json::parse(
      cubesim({"info", spec_file("default.json"), "--set", "system.sips.count=2", "--set",
               "system.messages.inter_sip.slots=4", "--json"})
          .out);
  const auto& w = j["messages"]["windows"]["inter_sip"];
  EXPECT_EQ(w["slots"], 4);
  EXPECT_FALSE(w["automatic"].get<bool>());
  EXPECT_LT(w["covered"].get<double>(), 1.0);
  EXPECT_GT(w["slots_needed"].get<int>(), 4);
}

TEST_F(CliInfo, NamesTheFileASpecNameResolvedToAndMarksADescriptionOverridden) {
  const auto r = cubesim({"info", "tiny"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("tiny (" + spec_file("tiny.json") + ")"));
  EXPECT_THAT(r.out, Not(HasSubstr("As written, before the overrides")));
  const auto o = cubesim({"info", "tiny", "--set", "system.sips.count=2"});
  ASSERT_EQ(o.code, 0) << show(o);
  EXPECT_THAT(o.out, HasSubstr("As written, before the overrides: "));
  const auto j = cubesim({"info", "tiny", "--json"});
  EXPECT_EQ(nlohmann::json::parse(j.out)["spec_file"], spec_file("tiny.json"));
  const auto t = cubesim({"traffic", "tiny", "--load", "0.5", "--cycles", "200"});
  ASSERT_EQ(t.code, 0) << show(t);
  EXPECT_THAT(t.out, HasSubstr("on tiny (" + spec_file("tiny.json") + ")"));
}

// The shipped default is balanced: the mesh delivers every port's peak. Put its HBM back on
// two corner nodes with 128 GB/s links (the first default) and reads are held far below their
// peak: controller (0,0) serves half the channels, and its east link carries the 12 PEs with
// x >= 1, 12/32 of the pattern, so reads get at most 128 x 32/12 = 341 GB/s of 2.4 TB/s. Info
// says so, names the link and the fields, and still exits 0.
TEST_F(CliInfo, SaysWhatTheMeshDeliversToEachPortAndWarnsBelowThePeak) {
  const auto good = cubesim({"info", spec_file("default.json"), "--json"});
  ASSERT_EQ(good.code, 0) << show(good);
  EXPECT_EQ(good.err, "");
  const auto j = nlohmann::json::parse(good.out);
  for (const char* port : {"hbm_read", "hbm_write", "ucie"})
    EXPECT_DOUBLE_EQ(j["mesh_delivers"][port]["fraction"].get<double>(), 1.0) << port;
  const auto choked = cubesim({"info", spec_file("default.json"), "--set",
                               "system.cube.noc.hbm_nodes=[[0,0],[3,3]]", "--set",
                               "system.cube.noc.link_bandwidth_GBps=128"});
  ASSERT_EQ(choked.code, 0) << show(choked);
  EXPECT_THAT(choked.out, HasSubstr("HBM reads   2.40 TB/s   341 GB/s (14%)"));
  EXPECT_THAT(choked.err,
              HasSubstr("cubesim: warning: HBM reads: the mesh delivers at most 341 GB/s of the "
                        "2.40 TB/s peak"));
  EXPECT_THAT(choked.err, HasSubstr("(system.cube.noc.link_bandwidth_GBps) is the bound"));
  EXPECT_THAT(choked.err, HasSubstr("list more system.cube.noc.hbm_nodes, or \"every_node\""));
}

TEST_F(CliInfo, BadSetPath) {
  const auto r = cubesim({"info", spec_file("tiny.json"), "--set", "system.ucie.bandwith_GBps=1"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("unknown path"));
  EXPECT_THAT(r.err, HasSubstr("bandwidth_GBps"));  // the suggestion
}

}  // namespace
}  // namespace cubesim::test
