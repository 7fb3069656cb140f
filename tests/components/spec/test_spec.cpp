// Loading specs: the shipped files, "extends", dotted overrides, and file-level errors.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "components/spec/spec.hpp"

using cubesim::DType;
using namespace cubesim::components;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = CUBESIM_SOURCE_DIR;
const fs::path kSpecs = kRoot / "specs";
const fs::path kData = kRoot / "tests/components/spec/data";

constexpr std::uint64_t kKiB = 1024, kGiB = 1024 * 1024 * 1024;

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

SpecError load_error(const fs::path& p) {
  try {
    Spec::load(p);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << p << " loaded without error";
  return SpecError("", "", "");
}

template <typename F>
SpecError error_from(F&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "no SpecError thrown";
  return SpecError("", "", "");
}

// A scratch file, removed with the test.
class TempSpec {
 public:
  TempSpec(const std::string& name, const std::string& text)
      : path_(fs::temp_directory_path() /
              ("cubesim_test_spec_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~TempSpec() { fs::remove(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

// ---- The shipped specs ----

TEST(SpecFiles, EveryShippedSpecLoadsAndDescribesWhatItModels) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kSpecs)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const Spec s = Spec::load(entry.path());
    EXPECT_EQ(s.config().name, s.json().at("name"));
    EXPECT_GT(s.config().description.size(), 40u) << "say what the spec models";
    EXPECT_EQ(s.config().total_pes(),
              std::uint64_t{s.config().sips} * s.config().cubes_per_sip * s.config().cube.pes);
    ++count;
  }
  EXPECT_GE(count, 4);
}

TEST(SpecFiles, EveryShippedSpecStaysValidWithMoreSipsCubesOrAnotherTopology) {
  // What-if overrides of the counts and the topologies, up to the schema's limits: the buffers'
  // virtual channels must still cover the classes the routes take (which do not grow with the
  // system). A grid is given where a topology needs one.
  const auto grid = [](std::uint32_t n) {
    std::uint32_t y = 1;
    for (std::uint32_t d = 1; d * d <= n; ++d)
      if (n % d == 0) y = d;
    return fmt::format("[{},{}]", n / y, y);
  };
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kSpecs)) {
    if (entry.path().extension() != ".json") continue;
    const Spec base = Spec::load(entry.path());
    const std::uint64_t pes = base.config().cube.pes;
    for (const std::uint32_t sips : {1u, 2u, 3u, 5u, 8u, 64u, 4096u})
      for (const std::uint32_t cubes : {1u, 2u, 3u, 4u, 8u, 9u, 16u, 256u}) {
        if (sips * cubes * pes > 1'048'576 || sips * cubes > 65'536) continue;
        for (const char* ucie : {"ring", "mesh", "torus", "all_to_all"})
          for (const char* inter : {"ring", "mesh", "torus", "all_to_all"}) {
            if ((sips > 64 || cubes > 16) && std::string(ucie) != std::string(inter)) continue;
            std::vector<std::string> set{fmt::format("system.sips.count={}", sips),
                                         fmt::format("system.sips.cubes_per_sip={}", cubes),
                                         fmt::format("system.ucie.topology={}", ucie),
                                         fmt::format("system.inter_sip.topology={}", inter),
                                         fmt::format("system.inter_sip.port_cube=0")};
            const std::string u(ucie), i(inter);
            if (u == "mesh" || u == "torus") set.push_back("system.ucie.mesh=" + grid(cubes));
            if (i == "mesh" || i == "torus") set.push_back("system.sips.grid=" + grid(sips));
            SCOPED_TRACE(entry.path().filename().string() + ": " +
                         fmt::format("{}", fmt::join(set, " ")));
            // Either a system, or (all-to-all on very many nodes) a limit that names the override.
            try {
              base.with_assignments(set);
              ++checked;
            } catch (const SpecError& e) {
              EXPECT_THAT(e.what(), Not(HasSubstr("virtual channel")));
              EXPECT_THAT(e.what(), HasSubstr("all_to_all on"));
              EXPECT_THAT(e.what(), HasSubstr("(set by override"));
            }
          }
      }
  }
  EXPECT_GT(checked, 1000);
}

TEST(SpecFiles, TinyIsOneSipOfTwoCubesOfFourPes) {
  const Spec s = Spec::load(kSpecs / "tiny.json");
  const SystemConfig& c = s.config();
  EXPECT_EQ(c.sips, 1u);
  EXPECT_EQ(c.cubes_per_sip, 2u);
  EXPECT_EQ(c.cube.pes, 4u);
  EXPECT_EQ(c.cube.noc.mesh_x, 2u);
  EXPECT_EQ(c.cube.noc.mesh_y, 2u);
  EXPECT_EQ(c.cube.noc.hop_latency, 1'000u);  // 1.0 ns
  EXPECT_EQ(c.cube.noc.link_bandwidth.bytes_per_s(), 32'000'000'000u);
  EXPECT_EQ(c.pe.clock.hz(), 1'000'000'000u);
  EXPECT_EQ(c.cube.hbm.capacity_bytes, kGiB / 4);  // 0.25 GiB
  EXPECT_EQ(c.pe.sram_bytes, 256 * kKiB);
  EXPECT_EQ(c.ucie.latency, 10'000u);
  EXPECT_EQ(c.ucie.topology, GraphKind::ring);
  EXPECT_DOUBLE_EQ(c.pe.gemm.peak(DType::f32), 0.25e12);
  EXPECT_EQ(c.cube.noc.hbm_nodes, (std::vector<MeshCoord>{{0, 0}}));
  EXPECT_EQ(c.cube.noc.ucie_nodes, (std::vector<MeshCoord>{{1, 1}}));
}

TEST(SpecFiles, DefaultConvertsEveryTimeAndRateFromItsJsonValue) {
  const Spec s = Spec::load(kSpecs / "default.json");
  const SystemConfig& c = s.config();
  const json sys = read_json(kSpecs / "default.json").at("system");
  EXPECT_EQ(c.total_pes(), 64u);
  EXPECT_EQ(c.cube.noc.hop_latency,
            static_cast<std::uint64_t>(sys["cube"]["noc"]["hop_latency_ns"].get<double>() * 1000));
  EXPECT_EQ(c.cube.hbm.latency, sys["cube"]["hbm"]["latency_ns"].get<std::uint64_t>() * 1000);
  EXPECT_EQ(c.ucie.bandwidth.bytes_per_s(),
            sys["ucie"]["bandwidth_GBps"].get<std::uint64_t>() * 1'000'000'000);
  EXPECT_EQ(c.cube.hbm.capacity_bytes,
            sys["cube"]["hbm"]["capacity_GiB"].get<std::uint64_t>() * kGiB);
  EXPECT_EQ(c.pe.clock.hz(), 1'500'000'000u);
  EXPECT_EQ(c.pe.gemm.startup, 50'000u);
  for (DType t : cubesim::kAllDTypes) {
    const auto& peak = sys["pe"]["gemm"]["peak_TFLOPS"];
    const std::string name(cubesim::dtype_name(t));
    // A dtype the spec gives no rate (i8, i64, f8, bool are optional) has none.
    EXPECT_DOUBLE_EQ(c.pe.gemm.peak(t), peak.contains(name) ? peak[name].get<double>() * 1e12 : 0);
  }
}

TEST(SpecFiles, LargeHasTerabytesOfHbmOverFourSips) {
  const SystemConfig c = Spec::load(kSpecs / "large.json").config();
  EXPECT_EQ(c.sips, 4u);
  EXPECT_EQ(c.cubes_per_sip, 8u);
  EXPECT_EQ(c.cube.pes, 64u);
  EXPECT_EQ(c.total_pes(), 2048u);
  EXPECT_GE(c.total_cubes() * c.cube.hbm.capacity_bytes, 1024 * kGiB);
  EXPECT_EQ(c.ucie.topology, GraphKind::mesh);
  EXPECT_EQ(std::uint64_t{c.ucie.mesh_x} * c.ucie.mesh_y, c.cubes_per_sip);
}

TEST(SpecFiles, JsonIsTheFullEffectiveSpecAndReloadsToItself) {
  const Spec s = Spec::load(kSpecs / "default-fast-ucie.json");
  EXPECT_FALSE(s.json().contains("extends"));
  const Spec again = Spec::from_json(s.json());
  EXPECT_EQ(again.json(), s.json());
}

// ---- Defaults ----

TEST(SpecDefaults, OmittedOptionalFieldsAreFilledIntoJson) {
  json doc = read_json(kSpecs / "tiny.json");
  doc["system"]["cube"]["noc"].erase("hop_latency_ns");
  doc["system"]["cube"]["noc"].erase("packet_bytes");
  doc["system"]["cube"]["noc"].erase("inter_sip_node");
  doc["system"]["pe"].erase("dma");
  doc["system"]["pe"].erase("vector");
  doc["system"].erase("memory");
  doc["system"]["sips"].erase("count");
  const Spec s = Spec::from_json(doc);
  EXPECT_EQ(s.json()["system"]["cube"]["noc"]["hop_latency_ns"], 1.0);
  EXPECT_EQ(s.json()["system"]["cube"]["noc"]["packet_bytes"], 4096);
  EXPECT_EQ(s.json()["system"]["pe"]["dma"]["max_outstanding_packets"], 32);
  EXPECT_EQ(s.json()["system"]["memory"]["page_KiB"], 64);
  EXPECT_EQ(s.json()["system"]["sips"]["count"], 1);
  EXPECT_EQ(s.config().cube.noc.hop_latency, 1'000u);
  EXPECT_EQ(s.config().memory.page_bytes, 64 * kKiB);
  EXPECT_EQ(s.config().memory.interleave_bytes, 4 * kKiB);
  EXPECT_EQ(s.config().pe.vector.lanes, 64u);
  EXPECT_EQ(s.config().cube.noc.inter_sip_nodes, (std::vector<MeshCoord>{{0, 0}}));
  EXPECT_EQ(s.config().ucie.connections, 1u);
  EXPECT_EQ(s.config().inter_sip.connections, 1u);
}

TEST(SpecDefaults, WholeFloatsAreStoredAsIntegers) {
  json doc = read_json(kSpecs / "tiny.json");
  doc["system"]["cube"]["pes"] = 4.0;
  const Spec s = Spec::from_json(doc);
  EXPECT_TRUE(s.json()["system"]["cube"]["pes"].is_number_unsigned());
  EXPECT_EQ(s.config().cube.pes, 4u);
}

// ---- extends ----

TEST(SpecExtends, VariantOverridesOnlyWhatItSets) {
  const SystemConfig base = Spec::load(kSpecs / "default.json").config();
  const Spec v = Spec::load(kSpecs / "default-fast-ucie.json");
  const json own = read_json(kSpecs / "default-fast-ucie.json");
  EXPECT_EQ(v.config().name, own["name"]);
  EXPECT_EQ(v.config().ucie.bandwidth.bytes_per_s(),
            own["system"]["ucie"]["bandwidth_GBps"].get<std::uint64_t>() * 1'000'000'000);
  EXPECT_NE(v.config().ucie.bandwidth.bytes_per_s(), base.ucie.bandwidth.bytes_per_s());
  EXPECT_EQ(v.config().cube.hbm.capacity_bytes, base.cube.hbm.capacity_bytes);
  EXPECT_EQ(v.config().total_pes(), base.total_pes());
  EXPECT_EQ(v.origin(), (kSpecs / "default-fast-ucie.json").lexically_normal().generic_string());
}

TEST(SpecExtends, ChainsApplyInOrderAndNullRestoresDefaults) {
  const Spec s = Spec::load(kData / "chain_top.json");
  const SystemConfig& c = s.config();
  EXPECT_EQ(c.name, "chain-top");
  EXPECT_EQ(c.ucie.bandwidth.bytes_per_s(), 256'000'000'000u);  // top beats mid
  EXPECT_EQ(c.pe.clock.hz(), 2'000'000'000u);                   // from mid
  EXPECT_EQ(c.cube.pes, 4u);                                    // from tiny
  EXPECT_EQ(c.pe.vector.lanes, 64u);  // tiny says 16; top deletes the section: the default
  EXPECT_THAT(c.description, HasSubstr("2 GHz"));  // inherited from mid
  EXPECT_EQ(s.layers().size(), 3u);
}

TEST(SpecExtends, CycleIsReportedWithTheChain) {
  const SpecError e = load_error(kData / "cycle_a.json");
  EXPECT_THAT(e.what(), HasSubstr("cycle"));
  const std::string a = (kData / "cycle_a.json").lexically_normal().generic_string();
  const std::string b = (kData / "cycle_b.json").lexically_normal().generic_string();
  EXPECT_THAT(e.what(), HasSubstr(a + " -> " + b + " -> " + a));
  EXPECT_EQ(e.pointer(), "/extends");
  EXPECT_THAT(e.file(), HasSubstr("cycle_b.json"));  // the file whose extends closes the loop
}

TEST(SpecExtends, MissingBaseNamesTheReferencingFileAndThePath) {
  const SpecError e = load_error(kData / "missing_base.json");
  EXPECT_THAT(e.file(), HasSubstr("missing_base.json"));
  EXPECT_EQ(e.pointer(), "/extends");
  EXPECT_THAT(e.what(), HasSubstr("no_such_spec.json"));
  EXPECT_THAT(e.what(), HasSubstr("does not exist"));
  EXPECT_THAT(e.what(), HasSubstr((kData / "no_such_spec.json").generic_string()));
}

TEST(SpecExtends, MissingFileIsNamed) {
  const SpecError e = load_error(kSpecs / "no-such-spec.json");
  EXPECT_THAT(e.what(), StartsWith((kSpecs / "no-such-spec.json").generic_string() + ": "));
  EXPECT_THAT(e.what(), HasSubstr("not found"));
}

TEST(SpecExtends, AVariantMustNameItself) {
  const SpecError e = load_error(kData / "unnamed_child.json");
  EXPECT_THAT(e.file(), HasSubstr("unnamed_child.json"));
  EXPECT_EQ(e.pointer(), "/name");
  EXPECT_THAT(e.what(), HasSubstr("must set its own name"));
}

TEST(SpecExtends, ErrorsNameTheFileThatSetTheBadValue) {
  const SpecError e = load_error(kData / "child_of_broken.json");
  ASSERT_EQ(e.issues().size(), 2u);
  for (const SpecIssue& i : e.issues()) {
    if (i.pointer == "/system/cube/hbm/channels") {
      EXPECT_THAT(i.file, HasSubstr("broken_base.json"));
    } else if (i.pointer == "/system/ucie/topology") {
      EXPECT_THAT(i.file, HasSubstr("child_of_broken.json"));
    } else {
      ADD_FAILURE() << "unexpected issue " << i.message();
    }
  }
}

TEST(SpecExtends, FromJsonResolvesExtendsFromTheWorkingDirectory) {
  const fs::path old = fs::current_path();
  fs::current_path(kSpecs);
  json doc = {{"extends", "tiny.json"}, {"name", "inline-variant"}};
  doc["system"]["sips"]["cubes_per_sip"] = 1;
  const Spec s = Spec::from_json(doc);
  fs::current_path(old);
  EXPECT_EQ(s.config().cubes_per_sip, 1u);
  EXPECT_EQ(s.config().cube.pes, 4u);
  EXPECT_EQ(s.origin(), "<inline>");
}

// ---- invalid JSON ----

TEST(SpecParse, InvalidJsonReportsLineAndColumn) {
  // Line 5 is `    "sips": {"count": 1, "cubes_per_sip": 2,}`; the '}' after the trailing
  // comma is its 45th character.
  const SpecError e = load_error(kData / "invalid_json.json");
  EXPECT_THAT(e.what(), StartsWith((kData / "invalid_json.json").generic_string() + ": "));
  EXPECT_THAT(e.what(), HasSubstr("line 5, column 45"));
  EXPECT_THAT(e.what(), HasSubstr("invalid JSON"));
}

TEST(SpecParse, ColumnCountsFromTheStartOfTheLine) {
  const TempSpec t("column.json", "{\n  \"name\": \"x\",\n  \"description\": @\n}\n");
  EXPECT_THAT(load_error(t.path()).what(), HasSubstr("line 3, column 18"));
}

TEST(SpecParse, UnterminatedDocumentPointsAtTheEnd) {
  const TempSpec t("eof.json", "{\n  \"name\": \"x\"\n");
  EXPECT_THAT(load_error(t.path()).what(), HasSubstr("line 3"));
}

TEST(SpecParse, DuplicateKeyIsAnError) {
  const SpecError e = load_error(kData / "duplicate_key.json");
  EXPECT_EQ(e.pointer(), "/system/cube/pes");
  EXPECT_THAT(e.what(), HasSubstr("\"pes\" appears more than once"));
}

TEST(SpecParse, DuplicateKeyInsideAnArrayElementHasItsIndex) {
  const TempSpec t("dup_array.json", R"({"a": [1, {"b": 1, "b": 2}]})");
  EXPECT_EQ(load_error(t.path()).pointer(), "/a/1/b");
}

TEST(SpecParse, TopLevelMustBeAnObject) {
  const TempSpec t("array.json", "[1, 2]");
  EXPECT_THAT(load_error(t.path()).what(), HasSubstr("expected a JSON object at the top level"));
  EXPECT_THAT(error_from([] { Spec::from_json(json::array()); }).what(),
              HasSubstr("expected a JSON object"));
}

TEST(SpecParse, DirectoryIsNotASpec) {
  EXPECT_THAT(load_error(kSpecs).what(), HasSubstr("is a directory"));
}

// ---- dotted overrides ----

TEST(SpecOverride, SetsAFieldAndRevalidates) {
  const Spec s = Spec::load(kSpecs / "tiny.json");
  const Spec t = s.with("system.ucie.bandwidth_GBps", 512);
  EXPECT_EQ(t.config().ucie.bandwidth.bytes_per_s(), 512'000'000'000u);
  EXPECT_EQ(t.json()["system"]["ucie"]["bandwidth_GBps"], 512);
  EXPECT_EQ(s.config().ucie.bandwidth.bytes_per_s(), 64'000'000'000u);  // s is unchanged
  EXPECT_EQ(t.origin(), s.origin());
}

TEST(SpecOverride, CreatesSectionsTheSchemaHas) {
  json doc = read_json(kSpecs / "tiny.json");
  doc["system"].erase("memory");
  const Spec s = Spec::from_json(doc).with("system.memory.page_KiB", 128);
  EXPECT_EQ(s.config().memory.page_bytes, 128 * kKiB);
}

TEST(SpecOverride, ObjectValueMergesIntoTheSection) {
  const Spec s = Spec::load(kSpecs / "tiny.json")
                     .with("system.ucie", {{"topology", "mesh"}, {"mesh", {2, 1}}});
  EXPECT_EQ(s.config().ucie.topology, GraphKind::mesh);
  EXPECT_EQ(s.config().ucie.latency, 10'000u);  // kept from tiny
}

TEST(SpecOverride, NullRestoresTheDefault) {
  const Spec s = Spec::load(kSpecs / "tiny.json").with("system.cube.noc.packet_bytes", nullptr);
  EXPECT_EQ(s.config().cube.noc.packet_bytes, 4096u);
}

TEST(SpecOverride, UnknownPathNamesItAndTheAllowedKeys) {
  const SpecError e =
      error_from([] { Spec::load(kSpecs / "tiny.json").with("system.ucie.bandwith_GBps", 1); });
  EXPECT_EQ(e.pointer(), "/system/ucie/bandwith_GBps");
  EXPECT_THAT(e.what(), HasSubstr("unknown path \"system.ucie.bandwith_GBps\""));
  EXPECT_THAT(e.what(), HasSubstr("topology, mesh, latency_ns, switch_latency_ns, bandwidth_GBps"));
  EXPECT_THAT(e.what(), HasSubstr("did you mean \"bandwidth_GBps\""));
}

TEST(SpecOverride, UnknownFirstComponentListsTopLevelKeys) {
  const SpecError e = error_from([] { Spec::load(kSpecs / "tiny.json").with("sytem.x", 1); });
  EXPECT_EQ(e.pointer(), "/sytem");
  EXPECT_THAT(e.what(), HasSubstr("name, description, system"));
  EXPECT_THAT(e.what(), HasSubstr("did you mean \"system\""));
}

TEST(SpecOverride, PathBelowAValueIsRefused) {
  const SpecError e = error_from(
      [] { Spec::load(kSpecs / "tiny.json").with("system.ucie.topology.kind", "ring"); });
  EXPECT_THAT(e.what(), HasSubstr("system.ucie.topology is a value, not a section"));
}

TEST(SpecOverride, MalformedPathIsRefused) {
  EXPECT_THAT(error_from([] { Spec::load(kSpecs / "tiny.json").with("system..ucie", 1); }).what(),
              HasSubstr("not a dotted path"));
  EXPECT_THAT(error_from([] { Spec::load(kSpecs / "tiny.json").with("", 1); }).what(),
              HasSubstr("not a dotted path"));
}

TEST(SpecOverride, ExtendsCannotBeOverridden) {
  EXPECT_THAT(error_from([] { Spec::load(kSpecs / "tiny.json").with("extends", "x.json"); }).what(),
              HasSubstr("cannot be overridden"));
}

TEST(SpecOverride, WrongTypeNamesTheOverride) {
  const SpecError e = error_from(
      [] { Spec::load(kSpecs / "tiny.json").with("system.ucie.bandwidth_GBps", "fast"); });
  EXPECT_EQ(e.pointer(), "/system/ucie/bandwidth_GBps");
  EXPECT_THAT(e.what(), HasSubstr("expected a number in GB/s, got a string (\"fast\")"));
  EXPECT_THAT(e.what(), HasSubstr("set by override system.ucie.bandwidth_GBps=\"fast\""));
  EXPECT_THAT(e.file(), HasSubstr("tiny.json"));
}

TEST(SpecOverride, AssignmentParsesJsonOrTakesAString) {
  const Spec s = Spec::load(kSpecs / "default.json");
  EXPECT_EQ(
      s.with_assignment("system.ucie.bandwidth_GBps=1024").config().ucie.bandwidth.bytes_per_s(),
      1'024'000'000'000u);
  EXPECT_EQ(s.with_assignment("system.ucie.topology=all_to_all").config().ucie.topology,
            GraphKind::all_to_all);
  EXPECT_EQ(s.with_assignment("system.ucie.topology=\"all_to_all\"").config().ucie.topology,
            GraphKind::all_to_all);
  EXPECT_EQ(s.with_assignment("system.cube.noc.hbm_nodes=[[1,1]]").config().cube.noc.hbm_nodes,
            (std::vector<MeshCoord>{{1, 1}}));
  EXPECT_EQ(s.with_assignment("name=what-if").config().name, "what-if");
}

TEST(SpecOverride, AssignmentsThatMustChangeTogetherApplyTogether) {
  const Spec s = Spec::load(kSpecs / "default.json");
  EXPECT_THROW(s.with_assignment("system.ucie.topology=mesh"), SpecError);  // mesh is missing
  const std::vector<std::string> both = {"system.ucie.topology=mesh", "system.ucie.mesh=[2,2]"};
  const Spec m = s.with_assignments(both);
  EXPECT_EQ(m.config().ucie.topology, GraphKind::mesh);
  EXPECT_EQ(m.config().ucie.mesh_x, 2u);
  // The same as a braced list, and as typed values set together: a chain of with() calls
  // validates after each and is refused at the first.
  const Spec braced = s.with_assignments({"system.ucie.topology=torus", "system.ucie.mesh=[2,2]"});
  EXPECT_EQ(braced.config().ucie.topology, GraphKind::torus);
  EXPECT_THROW(s.with("system.ucie.topology", "mesh").with("system.ucie.mesh", {2, 2}), SpecError);
  const Spec together = s.with({{"system.ucie.topology", "mesh"}, {"system.ucie.mesh", {1, 4}}});
  EXPECT_EQ(together.config().ucie.topology, GraphKind::mesh);
  EXPECT_EQ(together.config().ucie.mesh_x, 1u);
  EXPECT_EQ(together.config().ucie.mesh_y, 4u);
  // Validated once, together: a bad pair is still refused, naming both overrides' field.
  EXPECT_THAT(error_from([&] {
                s.with({{"system.ucie.topology", "mesh"}, {"system.ucie.mesh", {3, 3}}});
              }).what(),
              HasSubstr("/system/ucie/mesh"));
}

TEST(SpecOverride, AssignmentWithoutEqualsIsRefused) {
  const SpecError e = error_from(
      [] { Spec::load(kSpecs / "tiny.json").with_assignment("system.ucie.latency_ns"); });
  EXPECT_THAT(e.what(), HasSubstr("not PATH=VALUE"));
}
