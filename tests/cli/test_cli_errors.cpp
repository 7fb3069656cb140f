// End-to-end tests of cubesim's error paths: each exits with its category's code and says on
// stderr, in one message prefixed "cubesim: ", what was wrong and what would fix it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "components/network/network.hpp"
#include "tests/cli/cli_runner.hpp"
#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CliErrors : public CliTest {
 protected:
  const std::string tiny = spec_file("tiny.json");
};

TEST_F(CliErrors, UnknownKernelListsTheKernels) {
  const auto r = cubesim({"run", tiny, "vector_ad"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cubesim: unknown kernel 'vector_ad'"));
  EXPECT_THAT(r.err, HasSubstr("vector_add"));
  EXPECT_THAT(r.err, HasSubstr("sharded_gemm"));
}

TEST_F(CliErrors, BadGridsAreUsageErrors) {
  expect_usage_error({"run", tiny, "vector_add", "--grid", "0"}, "each axis takes 1 to 2^31 - 1");
  expect_usage_error({"run", tiny, "vector_add", "--grid", "4x"}, "'' is not a whole number");
  expect_usage_error({"run", tiny, "vector_add", "--grid", "1x2x3x4"}, "more than three axes");
  expect_usage_error({"run", tiny, "vector_add", "--grid", "2147483648"}, "2^31 - 1");
  expect_usage_error({"run", tiny, "allreduce", "--grid", "8"}, "runs on the hardware grid only");
  expect_usage_error({"run", tiny, "vector_add", "-p", "grid=triton", "--grid", "8"},
                     "leave out --grid");
}

TEST_F(CliErrors, UnknownParameterListsTheValidOnes) {
  expect_usage_error({"run", tiny, "vector_add", "-p", "size=4"}, "no parameter 'size'");
  expect_usage_error({"run", tiny, "vector_add", "-p", "size=4"}, "n, block, dtype");
}

TEST_F(CliErrors, ParameterOfWrongType) {
  expect_usage_error({"run", tiny, "vector_add", "-p", "n=lots"}, "'lots' is not an integer");
  expect_usage_error({"run", tiny, "vector_add", "-p", "dtype=f8"}, "is not one of");
  expect_usage_error({"run", tiny, "vector_add", "-p", "n"}, "expected NAME=VALUE");
}

TEST_F(CliErrors, ParameterOutOfRange) {
  expect_usage_error({"run", tiny, "vector_add", "-p", "n=0"}, "out of range");
}

TEST_F(CliErrors, SizeNotDivisibleByTheGrid) {
  // tiny has 8 PEs: N = 12 columns cannot be split evenly over them.
  expect_usage_error({"run", tiny, "sharded_gemm", "-p", "M=8", "-p", "K=8", "-p", "N=12"},
                     "not divisible");
}

TEST_F(CliErrors, MissingSpecFile) {
  expect_usage_error({"run", path("missing.json").string(), "vector_add"}, "missing.json");
}

TEST_F(CliErrors, InvalidSpecNamesFileAndJsonPath) {
  const auto bad = path("bad.json");
  std::ofstream(bad) << R"({"name": "bad", "extends": ")" << tiny
                     << R"(", "system": {"pe": {"clock_Ghz": 2}}})";
  const auto r = cubesim({"run", bad.string(), "vector_add"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cubesim: " + bad.string()));
  EXPECT_THAT(r.err, HasSubstr("/system/pe/clock_Ghz"));
  EXPECT_THAT(r.err, HasSubstr("clock_GHz"));  // the suggestion
}

TEST_F(CliErrors, MalformedJsonSpec) {
  const auto bad = path("broken.json");
  std::ofstream(bad) << "{\"name\": \"x\",\n  \"system\": {\n";
  expect_usage_error({"validate", bad.string()}, "invalid JSON");
}

TEST_F(CliErrors, BadSetPath) {
  expect_usage_error({"run", tiny, "vector_add", "--set", "system.ucie.speed=3"},
                     "unknown path \"system.ucie.speed\"");
  expect_usage_error({"run", tiny, "vector_add", "--set", "system.ucie.bandwidth_GBps=-1"},
                     "/system/ucie/bandwidth_GBps");
}

TEST_F(CliErrors, BuffersThatCouldDeadlockOrHoldNoPacketAreRefused) {
  // default.json: a ring of 4 cubes, whose UCIe buffers hold 2 classes of packets.
  const std::string def = spec_file("default.json");
  expect_usage_error({"run", def, "vector_add", "--set", "system.ucie.virtual_channels=1"},
                     "/system/ucie/virtual_channels: 1 virtual channel cannot keep the routes "
                     "free of deadlock");
  // The overrides that make too few channels are named.
  expect_usage_error({"run", def, "vector_add", "--set", "system.sips.count=4", "--set",
                      "system.inter_sip.input_buffer_bytes=65536"},
                     "the overrides system.sips.count=4, system.inter_sip.input_buffer_bytes=65536 "
                     "make it so; set virtual_channels to at least 4");
  expect_usage_error(
      {"traffic", def, "--load", "0.5", "--set", "system.cube.noc.router.input_buffer_bytes=4096"},
      "4096 bytes over 6 virtual channels is 682 bytes a channel, less than one "
      "packet");
  expect_usage_error({"info", def, "--set", "system.cube.noc.router.virtual_channels=0"},
                     "/system/cube/noc/router/virtual_channels");
}

TEST_F(CliErrors, ABarrierKernelOnMoreProgramsThanPesIsRefusedBeforeItRuns) {
  // tiny has 8 PEs: 16 programs would run in two waves, and the first wave's barrier would wait
  // for programs that start only when it ends (it faulted mid-run, exit 3).
  expect_usage_error({"run", tiny, "attention_similarity", "--grid", "16"},
                     "attention_similarity needs every program running at once (its programs "
                     "meet at tl.barrier once the keys are projected), but the grid 16 x 1 x 1 "
                     "(logical) has 16 programs for 8 PEs, so they would run in 2 waves");
}

TEST_F(CliErrors, AShippedSpecsPathFromAnotherFolderPointsAtTheSpecOfThatName) {
  // specs/default.json from a folder without specs/: the file is not found, and the message
  // names the spec of that name the program finds and how to ask for it.
  const std::string elsewhere = path("specs/default.json").string();
  expect_usage_error({"run", elsewhere, "vector_add"},
                     "spec file not found (looked for " + elsewhere + ")");
  const auto r = cubesim({"run", elsewhere, "vector_add"});
  EXPECT_THAT(r.err, HasSubstr("; a spec named \"default\" is "));
  EXPECT_THAT(r.err, HasSubstr(": give its name, default, or that path"));
  const auto none = cubesim({"run", path("no-such-spec.json").string(), "vector_add"});
  EXPECT_THAT(none.err, Not(HasSubstr("a spec named")));
}

TEST_F(CliErrors, UnknownHbmModelListsTheKnownOnes) {
  expect_usage_error({"run", tiny, "vector_add", "--set", "system.cube.hbm.model=dram"},
                     "/system/cube/hbm/model: \"dram\" is not allowed; allowed values: "
                     "\"simple\", \"banked\"");
}

// The option's choices come from the library's table: the error lists every name in it.
TEST_F(CliErrors, BadBackendListsTheBuiltOnes) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", tiny, "vector_add"},
        std::vector<std::string>{"sweep", tiny, "vector_add", "--vary", "param.n=64"}}) {
    std::vector<std::string> bad = args;
    bad.insert(bad.end(), {"--backend", "tpu"});
    expect_usage_error(bad, "--backend: unknown GEMM backend 'tpu'");
    for (const std::string& name : backends::gemm_backends().names())
      EXPECT_THAT(cubesim(bad).err, HasSubstr("'" + name + "'")) << args[0];
  }
}

TEST_F(CliErrors, UnknownNetworkModelListsTheValidOnes) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", tiny, "vector_add"},
        std::vector<std::string>{"sweep", tiny, "vector_add", "--vary", "param.n=64"},
        std::vector<std::string>{"traffic", tiny, "--load", "0.5"}}) {
    std::vector<std::string> bad = args;
    bad.insert(bad.end(), {"--network", "fluid"});
    expect_usage_error(bad, "unknown network model 'fluid' (--network)");
    for (const std::string& name : components::network_models().names())
      EXPECT_THAT(cubesim(bad).err, HasSubstr("'" + name + "'")) << args[0];
  }
}

TEST_F(CliErrors, BadStackSize) {
  expect_usage_error({"run", tiny, "vector_add", "--stack-size", "lots"}, "--stack-size lots");
  expect_usage_error({"run", tiny, "vector_add", "--stack-size", "64X"}, "unknown suffix");
  expect_usage_error({"run", tiny, "vector_add", "--stack-size", "1K"}, "out of range");
}

TEST_F(CliErrors, BadSeed) {
  expect_usage_error({"run", tiny, "vector_add", "--seed", "-1"}, "--seed");
  expect_usage_error({"run", tiny, "vector_add", "--seed", "abc"}, "--seed");
}

TEST_F(CliErrors, UnwritableOutputFailsBeforeRunning) {
  expect_usage_error({"run", tiny, "vector_add", "--json", path("no/such/dir/r.json").string()},
                     "does not exist");
  expect_usage_error({"run", tiny, "vector_add", "--trace", dir_.string()}, "is a folder");
}

TEST_F(CliErrors, ASystemTooLargeForTheHostIsRefusedBeforeItIsBuilt) {
  // tiny.json needs some 8 MiB; a limit of 1 MiB stands for a host that has less.
  const auto r = run_cubesim({"run", tiny, "vector_add"}, dir_, {"CUBESIM_MEMORY_LIMIT=1M"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cubesim: this system needs at least "));
  EXPECT_THAT(r.err, HasSubstr("and 1 MiB is available (CUBESIM_MEMORY_LIMIT); reduce "
                               "system.sips.count (1), system.sips.cubes_per_sip (2) or "
                               "system.cube.pes (4)"));
  EXPECT_THAT(r.out, Not(HasSubstr("sim time")));
  const auto bad = run_cubesim({"run", tiny, "vector_add"}, dir_, {"CUBESIM_MEMORY_LIMIT=lots"});
  EXPECT_EQ(bad.code, 2) << show(bad);
  EXPECT_THAT(bad.err, HasSubstr("CUBESIM_MEMORY_LIMIT lots: not a size"));
  const auto ok = run_cubesim({"run", tiny, "vector_add"}, dir_, {"CUBESIM_MEMORY_LIMIT=1G"});
  EXPECT_EQ(ok.code, 0) << show(ok);
  // info builds the system too: the same check, before it does.
  const auto info = run_cubesim({"info", tiny}, dir_, {"CUBESIM_MEMORY_LIMIT=1M"});
  EXPECT_EQ(info.code, 2) << show(info);
  EXPECT_THAT(info.err, HasSubstr("and 1 MiB is available (CUBESIM_MEMORY_LIMIT)"));
  EXPECT_EQ(run_cubesim({"info", tiny}, dir_, {"CUBESIM_MEMORY_LIMIT=1G"}).code, 0);
}

TEST_F(CliErrors, RunningOutOfHostMemorySaysWhatWasBeingDone) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer needs more address space than the limit leaves";
#endif
  // 512 MiB per vector, under 1 GB of address space: the harness cannot draw its inputs.
  const auto r = run_program("sh",
                             {"-c", "ulimit -v 1000000 && exec \"$0\" \"$@\"", CUBESIM_BINARY,
                              "run", spec_file("default.json"), "vector_add", "-p", "n=134217728"},
                             dir_);
  EXPECT_EQ(r.code, 3) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cubesim: error: out of host memory while running vector_add "
                               "(its inputs, launches and checks); run a smaller system or "
                               "problem, use --timing-only"));
}

TEST_F(CliErrors, UnknownSubcommand) {
  expect_usage_error({"frobnicate", tiny}, "unknown subcommand 'frobnicate'");
  expect_usage_error({"swep", tiny, "vector_add"},
                     "the subcommands are: run, sweep, validate, info, list");
}

TEST_F(CliErrors, NoSubcommand) {
  expect_usage_error({}, "no subcommand given");
}

TEST_F(CliErrors, UnknownFlag) {
  expect_usage_error({"run", tiny, "vector_add", "--fast"}, "--fast");
  expect_usage_error({"list", "--verbose"}, "--verbose");
}

TEST_F(CliErrors, MissingPositional) {
  expect_usage_error({"run", tiny}, "KERNEL is required");
}

TEST_F(CliErrors, BadLogLevel) {
  expect_usage_error({"--log-level", "loud", "list"}, "--log-level");
}

}  // namespace
}  // namespace cubesim::test
