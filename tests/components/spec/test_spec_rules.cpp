// Validation: one test per rule, each checking the text a user would read.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "components/spec/schema.hpp"
#include "components/spec/spec.hpp"

using namespace cubesim::components;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace {

const std::filesystem::path kSpecs = std::filesystem::path(CUBESIM_SOURCE_DIR) / "specs";

json spec_file(const char* name) {
  std::ifstream in(kSpecs / name);
  return json::parse(in);
}
const json& tiny() {
  static const json doc = spec_file("tiny.json");
  return doc;
}

// `doc` with the value at `pointer` set (null: removed).
json set(json doc, const std::string& pointer, json value) {
  const json::json_pointer p(pointer);
  if (value.is_null())
    doc.at(p.parent_pointer()).erase(p.back());
  else
    doc[p] = std::move(value);
  return doc;
}

SpecError error_of(const json& doc) {
  try {
    Spec::from_json(doc, "t.json");
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "the spec was accepted";
  return SpecError("", "", "");
}

// The full message of the issue `doc` raises at `pointer` ("" and a failure if none).
std::string issue_at(const json& doc, const std::string& pointer) {
  const SpecError e = error_of(doc);
  for (const SpecIssue& i : e.issues())
    if (i.pointer == pointer) return i.message();
  ADD_FAILURE() << "no issue at " << pointer << "; got:\n" << e.what();
  return "";
}

// A single-SIP system of `cubes` cubes of one PE each (for the size limits).
json one_pe_cubes(std::uint64_t sips, std::uint64_t cubes) {
  json doc = tiny();
  doc["system"]["sips"] = {{"count", sips}, {"cubes_per_sip", cubes}};
  doc["system"]["cube"]["pes"] = 1;
  doc["system"]["cube"]["noc"]["mesh"] = {1, 1};
  doc["system"]["cube"]["noc"]["hbm_nodes"] = {{0, 0}};
  doc["system"]["cube"]["noc"]["ucie_nodes"] = {{0, 0}};
  return doc;
}

}  // namespace

// ---- Messages ----

TEST(SpecRules, MessageIsFileThenPointerThenWhatAndHow) {
  const json doc = set(spec_file("default.json"), "/system/cube/pes", 12);
  EXPECT_THAT(issue_at(doc, "/system/cube/noc/mesh"),
              StartsWith("t.json: /system/cube/noc/mesh: a 4x4 mesh has 16 nodes but "
                         "/system/cube/pes is 12; "));
}

TEST(SpecRules, EveryIssueIsReportedTogether) {
  json doc = set(tiny(), "/system/cube/hbm/channels", 0);
  doc = set(doc, "/system/ucie/topology", "hypercube");
  doc = set(doc, "/system/pe/colour", "red");
  const SpecError e = error_of(doc);
  EXPECT_EQ(e.issues().size(), 3u);
  const std::string what = e.what();
  EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 2);
}

TEST(SpecRules, IssueListIsCapped) {
  json doc = tiny();
  for (int i = 0; i < 40; ++i) doc["system"]["pe"][fmt::format("bogus_{}", i)] = i;
  const SpecError e = error_of(doc);
  EXPECT_EQ(e.issues().size(), 26u);
  EXPECT_THAT(e.what(), HasSubstr("... and 15 more issues"));
}

// ---- Keys ----

TEST(SpecRules, UnknownKeyListsAllowedKeysAndSuggestsTheNearest) {
  const json doc = set(tiny(), "/system/ucie/bandwith_GBps", 1);
  EXPECT_THAT(
      issue_at(doc, "/system/ucie/bandwith_GBps"),
      HasSubstr(
          "unknown key \"bandwith_GBps\"; did you mean \"bandwidth_GBps\"? allowed "
          "keys in /system/ucie: topology, mesh, latency_ns, switch_latency_ns, bandwidth_GBps"));
}

TEST(SpecRules, UnknownKeyFarFromEveryFieldGetsNoSuggestion) {
  const std::string m = issue_at(set(tiny(), "/system/cube/colour", 1), "/system/cube/colour");
  EXPECT_THAT(m, HasSubstr("allowed keys in /system/cube: pes, noc, hbm"));
  EXPECT_THAT(m, Not(HasSubstr("did you mean")));
}

TEST(SpecRules, TheGemmEngineHasARateForEveryGemmDtypeButBool) {
  // A composite GEMM multiplies no bool masks (cast them to i8), so bool has no rate to give.
  const std::string m = issue_at(set(tiny(), "/system/pe/gemm/peak_TFLOPS/bool", 1),
                                 "/system/pe/gemm/peak_TFLOPS/bool");
  EXPECT_THAT(m, HasSubstr("unknown key \"bool\""));
  EXPECT_THAT(m, HasSubstr("allowed keys in /system/pe/gemm/peak_TFLOPS: f16, bf16, f32, i32, i8, "
                           "i64, f8e4m3, f8e5m2"));
  for (const char* t : {"i8", "i64", "f8e4m3", "f8e5m2"})
    EXPECT_NO_THROW(
        Spec::from_json(set(tiny(), std::string("/system/pe/gemm/peak_TFLOPS/") + t, 2), "t.json"))
        << t;
}

// A systolic array may not be larger than the fastest peak allows at one multiply-add per cell
// per cycle; one that fits gives its model to the GEMM engine's config.
TEST(SpecRules, ASystolicArrayLargerThanThePeakAllowsIsRefused) {
  json doc = set(tiny(), "/system/pe/gemm/model", "systolic");
  doc = set(doc, "/system/pe/gemm/systolic/rows", 4096);
  EXPECT_THAT(issue_at(doc, "/system/pe/gemm/systolic/rows"),
              AllOf(HasSubstr("a 4096 x 128 array"), HasSubstr("larger than the peak allows")));
  doc = set(doc, "/system/pe/gemm/systolic/rows", 4);
  doc = set(doc, "/system/pe/gemm/systolic/cols", 8);
  doc = set(doc, "/system/pe/gemm/systolic/dataflow", "output_stationary");
  const Spec s = Spec::from_json(doc, "t.json");
  EXPECT_EQ(s.config().pe.gemm.model, GemmModel::systolic);
  EXPECT_EQ(s.config().pe.gemm.rows, 4u);
  EXPECT_EQ(s.config().pe.gemm.cols, 8u);
  EXPECT_EQ(s.config().pe.gemm.dataflow, Dataflow::output_stationary);
  EXPECT_EQ(s.config().pe.gemm.clock.hz(), s.config().pe.clock.hz());
}

// A cube cache must be whole sets of lines that each lie in one HBM channel, no larger than the
// memory it caches; one that is gives the network its geometry.
TEST(SpecRules, ACubeCacheMustBeWholeSetsOfLinesInsideTheHbm) {
  json doc = set(tiny(), "/system/cube/cache/model", "lru");
  doc = set(doc, "/system/cube/cache/size_MiB", 512);  // tiny's cubes have 256 MiB
  EXPECT_THAT(issue_at(doc, "/system/cube/cache/size_MiB"),
              AllOf(HasSubstr("larger than the 268435456 bytes of HBM"),
                    HasSubstr("/system/cube/hbm/capacity_GiB")));
  doc = set(doc, "/system/cube/cache/size_MiB", 1);
  doc = set(doc, "/system/cube/cache/ways", 3);
  doc = set(doc, "/system/cube/cache/line_bytes", 512);
  EXPECT_THAT(issue_at(doc, "/system/cube/cache/size_MiB"),
              HasSubstr("not a whole number of sets of 3 ways x 512 bytes"));
  // One set of one 32-byte line over tiny's 256 MiB: 2^23 lines, tags tell them apart; over
  // 256 GiB (2^33 lines) they could not.
  doc = set(doc, "/system/cube/cache/size_MiB", 1.0 / 32768);
  doc = set(doc, "/system/cube/cache/ways", 1);
  doc = set(doc, "/system/cube/cache/line_bytes", 32);
  EXPECT_NO_THROW(Spec::from_json(doc, "t.json"));
  EXPECT_THAT(
      issue_at(set(set(doc, "/system/cube/hbm/capacity_GiB", 256), "/system/memory/page_KiB", 64),
               "/system/cube/cache/size_MiB"),
      HasSubstr("more than 2^32 - 2 lines to tell apart"));
  doc = set(doc, "/system/cube/cache/size_MiB", 1.5);
  doc = set(doc, "/system/cube/cache/ways", 4);
  doc = set(doc, "/system/cube/cache/line_bytes", 2048);  // tiny's granule: 1024 bytes
  EXPECT_THAT(issue_at(doc, "/system/cube/cache/line_bytes"),
              AllOf(HasSubstr("spans several HBM channels"),
                    HasSubstr("/system/cube/hbm/channel_interleave_bytes")));
  doc = set(doc, "/system/cube/cache/line_bytes", 64);
  doc = set(doc, "/system/cube/cache/hit_latency_ns", 7);
  const Spec s = Spec::from_json(doc, "t.json");
  const CacheConfig& k = s.config().cube.cache;
  EXPECT_EQ(k.model, CacheModel::lru);
  EXPECT_EQ(k.size_bytes, 3u << 19);
  EXPECT_EQ(k.ways, 4u);
  EXPECT_EQ(k.line_bytes, 64u);
  EXPECT_EQ(k.hit_latency, cubesim::emu::ns(7));
  // Without a model the geometry is not checked: there is no cache.
  doc = set(set(doc, "/system/cube/cache/model", "none"), "/system/cube/cache/size_MiB", 512);
  EXPECT_FALSE(Spec::from_json(doc, "t.json").config().cube.cache.enabled());
}

// The banked HBM's DRAM: a refresh interval that leaves time to serve, rows of whole bursts;
// the figures reach the configuration, and are not checked for the simple model.
TEST(SpecRules, BankedHbmTimingsMustLeaveTimeToServe) {
  json doc = set(tiny(), "/system/cube/hbm/model", "banked");
  doc = set(doc, "/system/cube/hbm/banked/trefi_ns", 300);
  EXPECT_THAT(issue_at(doc, "/system/cube/hbm/banked/trefi_ns"),
              AllOf(HasSubstr("leave no time to serve"), HasSubstr("longer than trfc_ns")));
  doc = set(doc, "/system/cube/hbm/banked/trefi_ns", 7800);
  doc = set(doc, "/system/cube/hbm/banked/row_bytes", 32);
  doc = set(doc, "/system/cube/hbm/banked/burst_bytes", 64);
  EXPECT_THAT(issue_at(doc, "/system/cube/hbm/banked/row_bytes"),
              HasSubstr("a 32-byte row is shorter than a 64-byte burst"));
  doc = set(doc, "/system/cube/hbm/banked/row_bytes", 2048);
  doc = set(doc, "/system/cube/hbm/banked/row_policy", "closed");
  const Spec s = Spec::from_json(doc, "t.json");
  const DramTiming& t = s.config().cube.hbm.banked;
  EXPECT_EQ(t.trefi, cubesim::emu::ns(7800));
  EXPECT_EQ(t.row_bytes, 2048u);
  EXPECT_EQ(t.burst_bytes, 64u);
  EXPECT_EQ(t.row_policy, RowPolicy::closed);
  doc = set(set(doc, "/system/cube/hbm/model", "simple"), "/system/cube/hbm/banked/trefi_ns", 1);
  EXPECT_NO_THROW(Spec::from_json(doc, "t.json"));
}

TEST(SpecRules, UnknownTopLevelKey) {
  EXPECT_THAT(issue_at(set(tiny(), "/author", "me"), "/author"),
              HasSubstr("allowed keys at the top level: name, description, extends, system"));
}

TEST(SpecRules, MistypedRequiredKeyIsReportedOnceAsTheTypo) {
  json doc = set(tiny(), "/system/ucie/latency_ns", nullptr);
  doc = set(doc, "/system/ucie/latency_n", 10);
  const SpecError e = error_of(doc);
  ASSERT_EQ(e.issues().size(), 1u);
  EXPECT_THAT(e.what(), HasSubstr("did you mean \"latency_ns\""));
}

TEST(SpecRules, EveryObjectRejectsUnknownKeys) {
  for (const spec::SpecField& f : spec::spec_schema()) {
    if (f.type != spec::FieldType::object) continue;
    SCOPED_TRACE(f.path);
    EXPECT_THAT(issue_at(set(tiny(), f.pointer() + "/bogus_key", 1), f.pointer() + "/bogus_key"),
                HasSubstr("unknown key \"bogus_key\""));
  }
}

// ---- Presence ----

TEST(SpecRules, EveryRequiredFieldIsReportedMissing) {
  for (const spec::SpecField& f : spec::spec_schema()) {
    if (f.presence != spec::Presence::required) continue;
    SCOPED_TRACE(f.path);
    EXPECT_THAT(
        issue_at(set(tiny(), f.pointer(), nullptr), f.pointer()),
        HasSubstr(fmt::format("missing required {} \"{}\"",
                              f.type == spec::FieldType::object ? "section" : "field", f.key())));
  }
}

TEST(SpecRules, MissingFieldSaysWhatToAdd) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/latency_ns", nullptr), "/system/ucie/latency_ns"),
              HasSubstr("missing required field \"latency_ns\"; add a number in ns"));
}

TEST(SpecRules, MissingSectionListsItsRequiredFields) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/pe/gemm", nullptr), "/system/pe/gemm"),
              HasSubstr("missing required section \"gemm\"; add it with at least: peak_TFLOPS"));
}

TEST(SpecRules, NullMeansNotGiven) {
  json doc = tiny();
  doc["system"]["ucie"]["latency_ns"] = nullptr;
  EXPECT_THAT(issue_at(doc, "/system/ucie/latency_ns"), HasSubstr("missing required field"));
}

TEST(SpecRules, EmptyStringIsRefused) {
  EXPECT_THAT(issue_at(set(tiny(), "/name", ""), "/name"), HasSubstr("must not be empty"));
}

// ---- Types ----

TEST(SpecRules, EveryFieldRejectsAWrongType) {
  for (const spec::SpecField& f : spec::spec_schema()) {
    if (f.type == spec::FieldType::object || f.path == "extends") continue;
    SCOPED_TRACE(f.path);
    EXPECT_THAT(issue_at(set(tiny(), f.pointer(), true), f.pointer()),
                HasSubstr("got a boolean (true)"));
  }
}

TEST(SpecRules, WrongTypeSaysExpectedAndGot) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/pes", "16"), "/system/cube/pes"),
              HasSubstr("expected an integer (PEs), got a string (\"16\")"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc", 5), "/system/cube/noc"),
              HasSubstr("expected an object, got 5"));
}

TEST(SpecRules, IntegerFieldRefusesAFraction) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/pes", 4.5), "/system/cube/pes"),
              HasSubstr("expected an integer, got 4.5"));
}

TEST(SpecRules, ExtendsMustBeAPath) {
  const SpecError e = error_of(set(tiny(), "/extends", 3));
  EXPECT_EQ(e.pointer(), "/extends");
  EXPECT_THAT(e.what(), HasSubstr("expected the path of a spec file"));
}

// ---- Allowed values and ranges ----

TEST(SpecRules, ChoiceListsTheAllowedValues) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/topology", "hypercube"), "/system/ucie/topology"),
              HasSubstr("\"hypercube\" is not allowed; allowed values: \"ring\", \"mesh\", "
                        "\"torus\", \"all_to_all\""));
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/inter_sip/topology", "star"), "/system/inter_sip/topology"),
      HasSubstr("allowed values: \"ring\", \"mesh\", \"torus\", \"all_to_all\""));
}

TEST(SpecRules, HbmModelIsOneOfTheRegisteredModels) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/hbm/model", "dram"), "/system/cube/hbm/model"),
              HasSubstr("\"dram\" is not allowed; allowed values: \"simple\", \"banked\""));
  const Spec s = Spec::from_json(tiny(), "t.json");  // tiny.json does not say: the default
  EXPECT_EQ(s.config().cube.hbm.model, "simple");
  EXPECT_EQ(s.json().at(json::json_pointer("/system/cube/hbm/model")), "simple");
}

TEST(SpecRules, ChoiceSuggestsTheNearestValue) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/topology", "all-to-all"), "/system/ucie/topology"),
              HasSubstr("did you mean \"all_to_all\""));
}

TEST(SpecRules, OutOfRangeGivesTheRange) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/sips/count", 0), "/system/sips/count"),
              HasSubstr("0 is out of range; allowed: [1, 4096]"));
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/sips/cubes_per_sip", 257), "/system/sips/cubes_per_sip"),
      HasSubstr("allowed: [1, 256]"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/latency_ns", -1), "/system/ucie/latency_ns"),
              HasSubstr("-1 ns is out of range; allowed: [0, 1000000000] ns"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/pe/clock_GHz", 0), "/system/pe/clock_GHz"),
              HasSubstr("allowed: [0.001, 100] GHz"));
}

TEST(SpecRules, RatesMustBePositive) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/ucie/bandwidth_GBps", 0), "/system/ucie/bandwidth_GBps"),
      HasSubstr("allowed: (0, 1000000] GB/s"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/pe/gemm/peak_TFLOPS/i32", 0),
                       "/system/pe/gemm/peak_TFLOPS/i32"),
              HasSubstr("allowed: (0, 1000000] TFLOP/s"));
}

TEST(SpecRules, MeshDimensionsAreBounded) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/mesh", {65, 1}), "/system/cube/noc/mesh/0"),
              HasSubstr("x = 65 is out of range; allowed: [1, 64]"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/mesh", {2, 0}), "/system/cube/noc/mesh/1"),
              HasSubstr("y = 0 is out of range"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/mesh", {2}), "/system/cube/noc/mesh"),
              HasSubstr("expected [x, y], two integers, got an array of 1 element"));
}

// ---- Sizes ----

TEST(SpecRules, FractionalSizesMustComeToWholeBytes) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/pe/sram_KiB", 0.3), "/system/pe/sram_KiB"),
              HasSubstr("0.3 KiB is 307.2 bytes, not a whole number of bytes; use a multiple of "
                        "1/1024 KiB"));
  const Spec half = Spec::from_json(set(tiny(), "/system/cube/hbm/capacity_GiB", 0.5));
  EXPECT_EQ(half.config().cube.hbm.capacity_bytes, 512u * 1024 * 1024);
  const Spec sram = Spec::from_json(set(tiny(), "/system/pe/sram_KiB", 1.5));
  EXPECT_EQ(sram.config().pe.sram_bytes, 1536u);
}

TEST(SpecRules, InterleaveAndPageSizesArePowersOfTwo) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/memory/interleave_KiB", 3), "/system/memory/interleave_KiB"),
      HasSubstr("3 KiB (3072 bytes) is not a power of two; the nearest are 2 KiB and 4 KiB"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/memory/page_KiB", 48), "/system/memory/page_KiB"),
              HasSubstr("not a power of two; the nearest are 32 KiB and 64 KiB"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/hbm/channel_interleave_bytes", 3000),
                       "/system/cube/hbm/channel_interleave_bytes"),
              HasSubstr("3000 is not a power of two; the nearest are 2048 and 4096"));
  EXPECT_EQ(Spec::from_json(set(tiny(), "/system/memory/interleave_KiB", 0.5))
                .config()
                .memory.interleave_bytes,
            512u);
}

TEST(SpecRules, PagesAreAtLeastFourKiB) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/memory/page_KiB", 2), "/system/memory/page_KiB"),
              HasSubstr("2 KiB is out of range; allowed: [4, 1048576] KiB"));
}

TEST(SpecRules, PagesDivideTheHbmOfACube) {
  // tiny: 0.25 GiB per cube. A 1 GiB page passed validation and failed every functional run.
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/memory/page_KiB", 1048576), "/system/memory/page_KiB"),
      HasSubstr("1048576 KiB pages do not divide a cube's HBM (268435456 bytes): functional "
                "memory is paged within each cube; use a page size that divides it (at most "
                "262144 KiB)"));
  EXPECT_EQ(
      Spec::from_json(set(tiny(), "/system/memory/page_KiB", 262144)).config().memory.page_bytes,
      std::uint64_t{1} << 28);
}

TEST(SpecRules, CapacityIsAWholeNumberOfInterleaveGranules) {
  // 3 bytes: a whole number of bytes, but not of 1024-byte channel granules.
  const json doc = set(tiny(), "/system/cube/hbm/capacity_GiB", 3.0 / (1024.0 * 1024 * 1024));
  EXPECT_THAT(issue_at(doc, "/system/cube/hbm/capacity_GiB"),
              HasSubstr("3 bytes per cube is not a whole number of 1024-byte granules "
                        "(/system/cube/hbm/channel_interleave_bytes)"));
}

// ---- Mesh nodes ----

TEST(SpecRules, PesFillTheMesh) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/pes", 3), "/system/cube/noc/mesh"),
              HasSubstr("a 2x2 mesh has 4 nodes but /system/cube/pes is 3; one PE sits on each "
                        "node"));
}

TEST(SpecRules, NodesLieInsideTheMesh) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/cube/noc/hbm_nodes", {{2, 0}}), "/system/cube/noc/hbm_nodes/0"),
      HasSubstr("[2, 0] is outside the 2x2 mesh; x must be in [0, 1] and y in [0, 1]"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/ucie_nodes", {{0, 0}, {1, 3}}),
                       "/system/cube/noc/ucie_nodes/1"),
              HasSubstr("[1, 3] is outside the 2x2 mesh"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/inter_sip_node", {0, 2}),
                       "/system/cube/noc/inter_sip_node"),
              HasSubstr("[0, 2] is outside the 2x2 mesh"));
}

TEST(SpecRules, NodeSetsTakeAListOneNodeOrEveryNode) {
  const auto config = [](const json& doc) { return Spec::from_json(doc).config(); };
  json doc = set(tiny(), "/system/cube/noc/hbm_nodes", "every_node");
  EXPECT_EQ(config(doc).cube.noc.hbm_nodes,
            (std::vector<MeshCoord>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  doc = set(tiny(), "/system/cube/noc/ucie_nodes", {1, 0});
  EXPECT_EQ(config(doc).cube.noc.ucie_nodes, (std::vector<MeshCoord>{{1, 0}}));
  doc = set(tiny(), "/system/cube/noc/inter_sip_node", {{0, 0}, {1, 1}});
  doc = set(doc, "/system/inter_sip/connections", 2);
  EXPECT_EQ(config(doc).cube.noc.inter_sip_nodes, (std::vector<MeshCoord>{{0, 0}, {1, 1}}));
  EXPECT_EQ(config(doc).inter_sip.connections, 2u);
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/hbm_nodes", "every_nod"),
                       "/system/cube/noc/hbm_nodes"),
              HasSubstr("\"every_node\""));
}

TEST(SpecRules, MeshAndTorusBetweenSipsNeedTheSipGrid) {
  json doc = set(tiny(), "/system/sips/count", 6);
  doc = set(doc, "/system/inter_sip/topology", "torus");
  EXPECT_THAT(issue_at(doc, "/system/sips/grid"),
              HasSubstr("missing: topology \"torus\" needs the grid; add [x, y] with x * y == "
                        "/system/sips/count (6)"));
  EXPECT_THAT(issue_at(set(doc, "/system/sips/grid", {4, 2}), "/system/sips/grid"),
              HasSubstr("a 4x2 grid has 8 nodes but /system/sips/count is 6"));
  const auto c = Spec::from_json(set(doc, "/system/sips/grid", {3, 2})).config();
  EXPECT_EQ(c.inter_sip.topology, GraphKind::torus);
  EXPECT_EQ(c.inter_sip.grid_x, 3u);
  EXPECT_EQ(c.inter_sip.grid_y, 2u);
  json ring = set(set(tiny(), "/system/sips/count", 6), "/system/sips/grid", {3, 2});
  EXPECT_THAT(issue_at(ring, "/system/sips/grid"),
              HasSubstr("only allowed when topology is \"mesh\" or \"torus\", but topology is "
                        "\"ring\""));
  json cubes = set(tiny(), "/system/sips/cubes_per_sip", 4);
  cubes = set(set(cubes, "/system/ucie/topology", "torus"), "/system/ucie/mesh", {2, 2});
  EXPECT_EQ(Spec::from_json(cubes).config().ucie.topology, GraphKind::torus);
}

TEST(SpecRules, EachConnectionOfASideHasItsOwnNode) {
  json doc = set(tiny(), "/system/ucie/connections", 2);  // tiny lists one UCIe node
  EXPECT_THAT(issue_at(doc, "/system/ucie/connections"),
              HasSubstr("2 connections per side need as many distinct nodes, and "
                        "/system/cube/noc/ucie_nodes names 1; list more nodes or use fewer "
                        "connections"));
  doc = set(tiny(), "/system/inter_sip/connections", 3);
  EXPECT_THAT(issue_at(doc, "/system/inter_sip/connections"),
              HasSubstr("3 connections need as many distinct nodes, and "
                        "/system/cube/noc/inter_sip_node names 1"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/connections", 0), "/system/ucie/connections"),
              HasSubstr("out of range"));
}

TEST(SpecRules, NodeListsNameEachNodeOnce) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/ucie_nodes", {{1, 1}, {0, 1}, {1, 1}}),
                       "/system/cube/noc/ucie_nodes/2"),
              HasSubstr("node [1, 1] is listed twice (also at index 0)"));
}

TEST(SpecRules, NodeListsNeedAtLeastOneNode) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/hbm_nodes", json::array()),
                       "/system/cube/noc/hbm_nodes"),
              HasSubstr("needs at least one mesh node"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/ucie_nodes", json::array()),
                       "/system/cube/noc/ucie_nodes"),
              HasSubstr("needs at least one mesh node"));
}

TEST(SpecRules, NodeIsAPairOfIntegers) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/cube/noc/hbm_nodes", {{0}}), "/system/cube/noc/hbm_nodes/0"),
      HasSubstr("expected a mesh node [x, y], two integers"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/hbm_nodes", {{0, 0.5}}),
                       "/system/cube/noc/hbm_nodes/0/1"),
              HasSubstr("expected an integer y, got 0.5"));
}

// ---- UCIe and inter-SIP ----

TEST(SpecRules, UcieMeshIsRequiredForTheMeshTopology) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/topology", "mesh"), "/system/ucie/mesh"),
              HasSubstr("missing: topology \"mesh\" needs the grid; add [x, y] with x * y == "
                        "/system/sips/cubes_per_sip (2)"));
}

TEST(SpecRules, UcieMeshIsRejectedForOtherTopologies) {
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/mesh", {2, 1}), "/system/ucie/mesh"),
              HasSubstr("only allowed when topology is \"mesh\" or \"torus\", but topology is "
                        "\"ring\""));
  // Set by an override after the topology: still refused (a grid for a ring is a mistake).
  const Spec base = Spec::from_json(tiny());
  EXPECT_THROW(base.with("system.ucie.mesh", json{2, 1}), SpecError);
}

TEST(SpecRules, AGridSetBeforeTheTopologyIsIgnoredByTopologiesWithoutOne) {
  // A what-if of a grid spec's topology (a sweep over ring, mesh, torus): the grid is the one
  // mesh and torus need, and ring and all-to-all ignore it.
  json four = set(set(tiny(), "/system/sips/cubes_per_sip", 4), "/system/ucie/topology", "mesh");
  const Spec mesh = Spec::from_json(set(four, "/system/ucie/mesh", {2, 2}));
  for (const char* kind : {"ring", "all_to_all", "torus"}) {
    const SystemConfig c = mesh.with("system.ucie.topology", kind).config();
    EXPECT_EQ(c.ucie.mesh_x, std::string(kind) == "torus" ? 2u : 0u) << kind;
  }
  // Likewise the SIP grid under an inter-SIP topology given by a later override.
  const Spec torus = mesh.with_assignments(std::vector<std::string>{
      "system.sips.count=4", "system.sips.grid=[2,2]", "system.inter_sip.topology=torus"});
  EXPECT_EQ(torus.with("system.inter_sip.topology", "ring").config().inter_sip.grid_x, 0u);
}

// A switch's crossbar latency belongs to the switch topology: refused with another (as a grid
// is), ignored when a later override changes a switch spec's topology (a sweep over topologies),
// and 0 by default.
TEST(SpecRules, SwitchLatencyOnlyWithTheSwitchTopology) {
  for (const char* section : {"ucie", "inter_sip"}) {
    const std::string at = std::string("/system/") + section;
    EXPECT_THAT(issue_at(set(tiny(), at + "/switch_latency_ns", 40), at + "/switch_latency_ns"),
                HasSubstr("only allowed when topology is \"switch\", but topology is \"ring\""));
    const Spec sw = Spec::from_json(
        set(set(tiny(), at + "/topology", "switch"), at + "/switch_latency_ns", 40));
    const SystemConfig c = sw.config();
    const auto& latency =
        std::string(section) == "ucie" ? c.ucie.switch_latency : c.inter_sip.switch_latency;
    EXPECT_EQ(latency, 40000) << section;  // ps
    const std::string topology = std::string("system.") + section + ".topology";
    const SystemConfig ring = sw.with(topology, "ring").config();
    EXPECT_EQ(
        std::string(section) == "ucie" ? ring.ucie.switch_latency : ring.inter_sip.switch_latency,
        0)
        << section;
    EXPECT_EQ(
        Spec::from_json(set(tiny(), at + "/topology", "switch")).config().inter_sip.switch_latency,
        0);
  }
}

TEST(SpecRules, UcieMeshHoldsEveryCube) {
  json doc = set(tiny(), "/system/ucie/topology", "mesh");
  doc = set(doc, "/system/ucie/mesh", {2, 2});
  EXPECT_THAT(issue_at(doc, "/system/ucie/mesh"),
              HasSubstr("a 2x2 grid has 4 nodes but /system/sips/cubes_per_sip is 2"));
  EXPECT_NO_THROW(Spec::from_json(set(doc, "/system/ucie/mesh", {1, 2})));
}

TEST(SpecRules, PortCubeExists) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/inter_sip/port_cube", 2), "/system/inter_sip/port_cube"),
      HasSubstr("cube 2 does not exist: a SIP has 2 cubes (/system/sips/cubes_per_sip); "
                "allowed: 0 to 1"));
  EXPECT_NO_THROW(Spec::from_json(set(tiny(), "/system/inter_sip/port_cube", 1)));
}

TEST(SpecRules, HostIoDieJoinsCubesThatExist) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/host/io_die/cubes", {0, 2}), "/system/host/io_die/cubes/1"),
      HasSubstr("cube 2 does not exist: a SIP has 2 cubes (/system/sips/cubes_per_sip); "
                "allowed: 0 to 1"));
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/host/io_die/cubes", {1, 1}), "/system/host/io_die/cubes/1"),
      HasSubstr("1 is listed twice"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/host/io_die/cubes", json::array()),
                       "/system/host/io_die/cubes"),
              HasSubstr("needs at least one value"));
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/host/io_die/nodes", {{9, 0}}), "/system/host/io_die/nodes/0"),
      HasSubstr("outside"));
  const Spec ok = Spec::from_json(set(tiny(), "/system/host/io_die/cubes", {1, 0}));
  EXPECT_EQ(ok.config().host.io_cubes, (std::vector<std::uint32_t>{1, 0}));
}

// ---- HBM ----

TEST(SpecRules, EveryHbmChannelGetsAtLeastOneBytePerSecond) {
  json doc = set(tiny(), "/system/cube/hbm/bandwidth_GBps", 1e-8);  // 10 B/s over 16 channels
  doc = set(doc, "/system/cube/hbm/channels", 16);
  EXPECT_THAT(issue_at(doc, "/system/cube/hbm/channels"),
              HasSubstr("16 channels share 10 B/s, less than 1 B/s each"));
}

TEST(SpecRules, RatesThatRoundToZeroAreRefused) {
  EXPECT_THAT(
      issue_at(set(tiny(), "/system/ucie/bandwidth_GBps", 1e-10), "/system/ucie/bandwidth_GBps"),
      HasSubstr("cannot be represented: a bandwidth must be greater than 0 B/s"));
}

// ---- Sizes that could never be simulated ----

TEST(SpecRules, HugeSystemsAreRefusedFast) {
  json doc = tiny();
  doc["system"]["sips"] = {{"count", 4096}, {"cubes_per_sip", 256}};
  doc["system"]["cube"]["pes"] = 4096;
  doc["system"]["cube"]["noc"]["mesh"] = {64, 64};
  doc["system"]["cube"]["hbm"]["capacity_GiB"] = 65536;
  const auto start = std::chrono::steady_clock::now();
  const SpecError e = error_of(doc);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(200));
  const std::string what = e.what();
  EXPECT_THAT(what, HasSubstr("4096 SIPs x 256 cubes x 4096 PEs = 4294967296 PEs, more than the "
                              "1048576 cubesim simulates"));
  EXPECT_THAT(what, HasSubstr("= 1048576 cubes, more than the 65536"));
  EXPECT_EQ(e.pointer(), "/system/sips");
}

TEST(SpecRules, TotalHbmStaysBelowTwoToTheSixty) {
  json doc = one_pe_cubes(256, 256);                       // 65536 cubes
  doc = set(doc, "/system/cube/hbm/capacity_GiB", 16384);  // 2^44 bytes each: 2^60 in all
  EXPECT_THAT(issue_at(doc, "/system/cube/hbm/capacity_GiB"), HasSubstr("reaches 2^60 bytes"));
  EXPECT_NO_THROW(Spec::from_json(set(doc, "/system/cube/hbm/capacity_GiB", 8192)));
}

TEST(SpecRules, AllToAllLinkCountsAreBounded) {
  json doc = set(one_pe_cubes(256, 256), "/system/ucie/topology", "all_to_all");
  EXPECT_THAT(issue_at(doc, "/system/ucie/topology"),
              HasSubstr("all_to_all on 256 cubes makes 32640 UCIe links per SIP, 8355840 in all"));
  json sips = set(one_pe_cubes(4096, 1), "/system/inter_sip/topology", "all_to_all");
  sips = set(sips, "/system/inter_sip/port_cube", 0);
  EXPECT_THAT(issue_at(sips, "/system/inter_sip/topology"),
              HasSubstr("all_to_all on 4096 SIPs makes 8386560 links"));
  EXPECT_NO_THROW(Spec::from_json(set(sips, "/system/inter_sip/topology", "ring")));
}

TEST(SpecRules, BuffersHoldAPacketInEveryVirtualChannel) {
  // tiny: 1 KiB packets.
  json doc = set(tiny(), "/system/cube/noc/router",
                 {{"input_buffer_bytes", 3000}, {"virtual_channels", 4}});
  EXPECT_THAT(issue_at(doc, "/system/cube/noc/router/input_buffer_bytes"),
              HasSubstr("3000 bytes over 4 virtual channels is 750 bytes a channel, less than "
                        "one packet (/system/cube/noc/packet_bytes = 1024)"));
  EXPECT_THAT(issue_at(doc, "/system/cube/noc/router/input_buffer_bytes"),
              HasSubstr("make input_buffer_bytes at least 4096"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/ucie/input_buffer_bytes", 512),
                       "/system/ucie/input_buffer_bytes"),
              HasSubstr("less than one packet"));
  EXPECT_THAT(issue_at(set(tiny(), "/system/cube/noc/router", {{"virtual_channels", 0}}),
                       "/system/cube/noc/router/virtual_channels"),
              HasSubstr("[1, 64]"));
  const auto c =
      Spec::from_json(set(doc, "/system/cube/noc/router/input_buffer_bytes", 4096)).config();
  EXPECT_EQ(c.cube.noc.router.vc_bytes(), 1024u);
  EXPECT_EQ(c.cube.noc.router.credit_latency, c.cube.noc.hop_latency);  // the default
  EXPECT_FALSE(c.ucie.buffers.bounded());
}

TEST(SpecRules, BoundedBuffersNeedAChannelPerClassOfPacket) {
  // A ring of 4 cubes: its routes take 3 classes (up, down, on from the dateline), and a UCIe
  // link's buffer holds 2 of them.
  json doc = set(tiny(), "/system/sips/cubes_per_sip", 4);
  doc = set(doc, "/system/ucie/input_buffer_bytes", 1024);
  EXPECT_THAT(issue_at(doc, "/system/ucie/virtual_channels"),
              HasSubstr("1 virtual channel cannot keep the routes free of deadlock: the packets "
                        "in these buffers are of 2 classes (the routes over a ring of 4 cubes "
                        "take 3, of which up to 2 cross one link), each needing a channel of "
                        "its own; set virtual_channels to at least 2"));
  doc = set(set(doc, "/system/ucie/virtual_channels", 2), "/system/ucie/input_buffer_bytes", 2048);
  doc =
      set(doc, "/system/cube/noc/router", {{"input_buffer_bytes", 2048}, {"virtual_channels", 2}});
  EXPECT_THAT(issue_at(doc, "/system/cube/noc/router/virtual_channels"),
              HasSubstr("of 3 classes (the routes over a ring of 4 cubes take 3), each needing a "
                        "channel of its own; set virtual_channels to at least 3"));
  // Bounded inter-SIP buffers: the way to the port and the way from it take 3 classes each.
  json sips = set(set(doc, "/system/sips/count", 4), "/system/inter_sip/input_buffer_bytes", 4096);
  sips =
      set(sips, "/system/cube/noc/router", {{"input_buffer_bytes", 3072}, {"virtual_channels", 3}});
  EXPECT_THAT(issue_at(sips, "/system/cube/noc/router/virtual_channels"),
              HasSubstr("of 6 classes (the routes over a ring of 4 cubes take 3, twice: to the "
                        "inter-SIP port and from it, as the inter-SIP buffers are bounded)"));
  EXPECT_THAT(issue_at(sips, "/system/inter_sip/virtual_channels"),
              HasSubstr("of 4 classes (3 for the routes over a ring of 4 SIPs, and 1 for packets "
                        "entering their SIP)"));
  doc =
      set(doc, "/system/cube/noc/router", {{"input_buffer_bytes", 3072}, {"virtual_channels", 3}});
  EXPECT_EQ(Spec::from_json(doc).config().cube.noc.router.virtual_channels, 3u);
  // Router buffers alone need one channel: every wait ends in the packet's own cube.
  json mesh_only = set(tiny(), "/system/sips/cubes_per_sip", 4);
  mesh_only = set(mesh_only, "/system/cube/noc/router", {{"input_buffer_bytes", 1024}});
  EXPECT_TRUE(Spec::from_json(mesh_only).config().cube.noc.router.bounded());
  // Between 2 SIPs, only the inter-SIP buffers bounded: one hop up or one down, and the class
  // that enters a SIP.
  json two = set(set(tiny(), "/system/sips/cubes_per_sip", 4), "/system/sips/count", 2);
  two = set(two, "/system/inter_sip/input_buffer_bytes", 4096);
  EXPECT_THAT(issue_at(two, "/system/inter_sip/virtual_channels"),
              HasSubstr("of 3 classes (2 for the routes over a ring of 2 SIPs, and 1 for packets "
                        "entering their SIP)"));
}
