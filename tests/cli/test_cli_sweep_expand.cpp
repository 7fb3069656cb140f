// Unit tests of the sweep's expansion (tools/cubesim/sweep_expand.hpp): --vary value lists and
// ranges, the cartesian product and its order, and the checks every point passes before a
// sweep runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "components/spec/spec.hpp"
#include "tools/cubesim/sweep_expand.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::cli::sweep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The message of the UsageError that `f` throws ("" when it throws none).
template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string tiny() {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/tiny.json";
}

Definition vector_add_sweep(std::vector<std::string> varies) {
  Definition d;
  d.spec_file = tiny();
  d.kernel = "vector_add";
  for (const auto& v : varies) d.dims.push_back(parse_vary(v));
  return d;
}

TEST(SweepVary, ListOfValues) {
  const Dimension d = parse_vary("system.ucie.bandwidth_GBps=64, 128,512");
  EXPECT_EQ(d.field, "system.ucie.bandwidth_GBps");
  EXPECT_EQ(d.kind, Dimension::Kind::spec);
  EXPECT_THAT(d.values, ElementsAre("64", "128", "512"));
}

TEST(SweepVary, ParametersAndKernel) {
  const Dimension p = parse_vary("param.M=512,1024");
  EXPECT_EQ(p.kind, Dimension::Kind::param);
  EXPECT_EQ(p.name, "M");
  const Dimension k = parse_vary("kernel=sharded_gemm,gemm_2d");
  EXPECT_EQ(k.kind, Dimension::Kind::kernel);
  EXPECT_THAT(k.values, ElementsAre("sharded_gemm", "gemm_2d"));
}

TEST(SweepVary, JsonValuesKeepTheirCommasAndColons) {
  EXPECT_THAT(parse_vary("system.cube.noc.mesh=[2,2],[4, 4]").values,
              ElementsAre("[2,2]", "[4, 4]"));
  EXPECT_THAT(parse_vary("system.ucie={\"latency_ns\":4},{\"latency_ns\":8}").values,
              ElementsAre("{\"latency_ns\":4}", "{\"latency_ns\":8}"));
}

TEST(SweepVary, GeometricRange) {
  EXPECT_THAT(parse_vary("x=64:1024:x2").values, ElementsAre("64", "128", "256", "512", "1024"));
  EXPECT_THAT(parse_vary("x=1:100:*10").values, ElementsAre("1", "10", "100"));
  EXPECT_THAT(parse_vary("x=1024:64:/4").values, ElementsAre("1024", "256", "64"));
  EXPECT_THAT(parse_vary("x=1:10:x3").values, ElementsAre("1", "3", "9"));  // STOP not reached
}

TEST(SweepVary, ArithmeticRange) {
  EXPECT_THAT(parse_vary("x=1:4").values, ElementsAre("1", "2", "3", "4"));
  EXPECT_THAT(parse_vary("x=1:8:+3").values, ElementsAre("1", "4", "7"));
  EXPECT_THAT(parse_vary("x=8:2:-2").values, ElementsAre("8", "6", "4", "2"));
  EXPECT_THAT(parse_vary("x=0.5:1.5:+0.5").values, ElementsAre("0.5", "1", "1.5"));
  EXPECT_THAT(parse_vary("x=0.1:0.3:+0.1").values, ElementsAre("0.1", "0.2", "0.3"));
  EXPECT_THAT(parse_vary("x=5:5").values, ElementsAre("5"));
}

TEST(SweepVary, RangesAndValuesMix) {
  EXPECT_THAT(parse_vary("x=1,4:16:x2,100").values, ElementsAre("1", "4", "8", "16", "100"));
}

TEST(SweepVary, BadListsNameTheFieldAndWhy) {
  EXPECT_THAT(usage_error([] { parse_vary("system.ucie.bandwidth_GBps="); }),
              HasSubstr("--vary system.ucie.bandwidth_GBps: no values given (an empty product)"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1,,2"); }), HasSubstr("value 2 of '1,,2' is empty"));
  EXPECT_THAT(usage_error([] { parse_vary("no-equals-sign"); }), HasSubstr("expected FIELD=V1,V2"));
  EXPECT_THAT(usage_error([] { parse_vary("x=8:1:+1"); }), HasSubstr("is empty"));
  EXPECT_THAT(usage_error([] { parse_vary("x=8:1:+1"); }), HasSubstr("8:1:-1"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1:8:+0"); }), HasSubstr("not a positive number"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1:8:x1"); }), HasSubstr("greater than 1"));
  EXPECT_THAT(usage_error([] { parse_vary("x=0:8:x2"); }), HasSubstr("positive START"));
  EXPECT_THAT(usage_error([] { parse_vary("x=a:8"); }), HasSubstr("'a' is not a number"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1:2:3:4"); }), HasSubstr("is not a range"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1:1e9"); }), HasSubstr("more than 100000 values"));
  EXPECT_THAT(usage_error([] { parse_vary("x=1,2,1"); }), HasSubstr("the value 1 is listed twice"));
  EXPECT_THAT(usage_error([] { parse_vary("param.=1"); }), HasSubstr("param.NAME"));
}

TEST(SweepProduct, FirstVaryChangesSlowest) {
  const Definition d = vector_add_sweep({"param.n=100,200,300", "param.dtype=f32,f16"});
  ASSERT_EQ(point_count(d.dims), 6u);
  std::vector<std::string> labels;
  for (std::uint64_t i = 0; i < 6; ++i) labels.push_back(make_point(d, i).label);
  EXPECT_THAT(labels, ElementsAre("param.n=100, param.dtype=f32", "param.n=100, param.dtype=f16",
                                  "param.n=200, param.dtype=f32", "param.n=200, param.dtype=f16",
                                  "param.n=300, param.dtype=f32", "param.n=300, param.dtype=f16"));
  EXPECT_THAT(coordinates(d.dims, 5), ElementsAre(2u, 1u));
}

TEST(SweepProduct, PointCarriesItsAssignments) {
  Definition d = vector_add_sweep({"system.ucie.bandwidth_GBps=16,32", "param.n=100,200"});
  d.sets = {"system.ucie.latency_ns=5"};
  d.params = {"block=256"};
  const Point p = make_point(d, 3);
  EXPECT_EQ(p.kernel, "vector_add");
  EXPECT_THAT(p.sets, ElementsAre("system.ucie.latency_ns=5", "system.ucie.bandwidth_GBps=32"));
  EXPECT_THAT(p.params, ElementsAre("block=256", "n=200"));
  EXPECT_EQ(p.values["system.ucie.bandwidth_GBps"], 32);
  EXPECT_EQ(p.values["param.n"], 200);
}

TEST(SweepProduct, VariedParameterRecordsTheValueTheKernelRuns) {
  // The CSV shows p.values: it must be the number the point ran with, not --vary's spelling.
  Definition d = vector_add_sweep({"param.temperature=1e1,.5"});
  d.kernel = "attention_similarity";
  EXPECT_EQ(make_point(d, 0).values["param.temperature"], 10.0);
  EXPECT_EQ(make_point(d, 1).values["param.temperature"], 0.5);
}

TEST(SweepProduct, VaryingTheKernel) {
  Definition d = vector_add_sweep({"kernel=vector_add,softmax_rows"});
  d.kernel.clear();
  EXPECT_EQ(make_point(d, 1).kernel, "softmax_rows");
  EXPECT_THAT(kernels_of(d), ElementsAre("vector_add", "softmax_rows"));
  EXPECT_EQ(validate(d).size(), 2u);
}

TEST(SweepValidate, OneKeyPerPointAllDistinct) {
  const Definition d = vector_add_sweep({"system.ucie.bandwidth_GBps=16:64:x2", "param.n=100,200"});
  const auto keys = validate(d);
  ASSERT_EQ(keys.size(), 6u);
  EXPECT_EQ(std::set<std::uint64_t>(keys.begin(), keys.end()).size(), 6u);
  EXPECT_EQ(key_hex(keys[0]).size(), 16u);
}

TEST(SweepValidate, KeysFollowThePointNotItsIndex) {
  // Adding a value (or listing them in another order) keeps the keys of the other points, so a
  // resumed sweep finds them.
  const auto before = validate(vector_add_sweep({"param.n=100,200"}));
  const auto after = validate(vector_add_sweep({"param.n=50,200,100"}));
  EXPECT_EQ(before[0], after[2]);
  EXPECT_EQ(before[1], after[1]);
  // The run options are part of the key: a functional point is not a timing-only one.
  Definition functional = vector_add_sweep({"param.n=100,200"});
  functional.timing_only = false;
  EXPECT_NE(validate(functional)[0], before[0]);
}

TEST(SweepValidate, UnknownSpecPathNamesItAndSuggests) {
  const std::string e =
      usage_error([] { validate(vector_add_sweep({"system.ucie.bandwith_GBps=1,2"})); });
  EXPECT_THAT(e, HasSubstr("--vary system.ucie.bandwith_GBps"));
  EXPECT_THAT(e, HasSubstr("did you mean \"bandwidth_GBps\""));
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"system.nope=1"})); }),
              HasSubstr("--vary system.nope: unknown path"));
}

TEST(SweepValidate, ValueOutOfRangeOrOfWrongTypeNamesPathAndValue) {
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"system.ucie.bandwidth_GBps=8,-1"})); }),
              HasSubstr("--vary system.ucie.bandwidth_GBps=-1: -1 GB/s is out of range"));
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"system.sips.cubes_per_sip=2,1.5"})); }),
              HasSubstr("--vary system.sips.cubes_per_sip=1.5: expected an integer"));
  EXPECT_THAT(
      usage_error([] { validate(vector_add_sweep({"system.ucie.topology=ring,hypercube"})); }),
      HasSubstr("--vary system.ucie.topology=hypercube"));
}

TEST(SweepValidate, BadParametersNameTheValue) {
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"param.n=10,lots"})); }),
              HasSubstr("--vary param.n=lots: parameter n of kernel vector_add: 'lots' is not an "
                        "integer"));
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"param.n=0,10"})); }),
              HasSubstr("--vary param.n=0"));
  EXPECT_THAT(usage_error([] { validate(vector_add_sweep({"param.size=1"})); }),
              HasSubstr("has no parameter 'size'"));
  Definition d = vector_add_sweep({"param.block=64"});
  d.params = {"n=100,200"};
  EXPECT_THAT(usage_error([&] { validate(d); }), HasSubstr("--vary param.n=100,200"));
}

TEST(SweepValidate, ASpecPathThatIsNotUtf8IsRefused) {
  // It reached the workers through JSON with its bad bytes replaced, and they found no file.
  Definition d = vector_add_sweep({"param.n=10,20"});
  d.spec_file = std::string(
      "/tmp/sp\xe9"
      "c.json");
  EXPECT_THAT(usage_error([&] { validate(d); }),
              HasSubstr("is not UTF-8 (byte 7 is 0xe9); the sweep's workers take it as JSON"));
}

TEST(SweepValidate, CombinationsAreCheckedAcrossFields) {
  // Each value is fine alone; mesh topology needs a mesh shape the ring does not.
  const std::string e =
      usage_error([] { validate(vector_add_sweep({"system.ucie.topology=ring,mesh"})); });
  EXPECT_THAT(e, HasSubstr("system.ucie.topology=mesh"));
  EXPECT_THAT(e, HasSubstr("/system/ucie/mesh"));
}

TEST(SweepValidate, FieldsGivenTwiceOrConflicting) {
  EXPECT_THAT(usage_error([] {
                validate(vector_add_sweep({"param.n=1", "param.n=2"}));
              }),
              HasSubstr("given twice"));
  Definition d = vector_add_sweep({"system.ucie.latency_ns=1,2"});
  d.sets = {"system.ucie.latency_ns=3"};
  EXPECT_THAT(usage_error([&] { validate(d); }), HasSubstr("set the same field"));
  Definition p = vector_add_sweep({"param.n=1,2"});
  p.params = {"n=3"};
  EXPECT_THAT(usage_error([&] { validate(p); }), HasSubstr("set the same parameter"));
  Definition k = vector_add_sweep({"kernel=vector_add"});
  EXPECT_THAT(usage_error([&] { validate(k); }), HasSubstr("the kernel is given twice"));
  Definition none = vector_add_sweep({"param.n=1"});
  none.kernel.clear();
  EXPECT_THAT(usage_error([&] { validate(none); }), HasSubstr("no kernel given"));
}

TEST(SweepValidate, UnknownKernelInAVary) {
  Definition d = vector_add_sweep({"kernel=vector_add,vector_sub"});
  d.kernel.clear();
  EXPECT_THAT(usage_error([&] { validate(d); }),
              HasSubstr("--vary kernel: unknown kernel 'vector_sub'"));
}

TEST(SweepValidate, MissingSpecFileIsASpecError) {
  Definition d = vector_add_sweep({"param.n=1"});
  d.spec_file = "no/such/spec.json";
  EXPECT_THROW(validate(d), components::SpecError);
}

}  // namespace
}  // namespace cubesim::cli::sweep
