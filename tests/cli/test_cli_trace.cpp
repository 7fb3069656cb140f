// cubesim run's output files and traces, end to end: outputs refused before a run when they
// cannot be written, the trace's filters and cap as a user sees them, and what an interrupted
// run leaves behind.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cli_runner.hpp"

namespace cubesim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class CliTrace : public CliTest {
 protected:
  // Files in the test's folder other than the child's stdout and stderr.
  std::vector<std::string> outputs() const {
    std::vector<std::string> names;
    for (const auto& f : fs::directory_iterator(dir_)) {
      const std::string name = f.path().filename().string();
      if (name != "stdout.txt" && name != "stderr.txt") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

const std::string tiny = spec_file("tiny.json");

TEST_F(CliTrace, JsonAndTraceNamingOneFileAreRefusedBeforeTheRun) {
  const std::string json = path("out.json").string();
  const std::string trace = (dir_ / "." / "out.json").string();
  const auto r = cubesim({"run", tiny, "vector_add", "--json", json, "--trace", trace});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("--json " + json + " and --trace " + trace + " name the same file"));
  EXPECT_THAT(r.out, Not(HasSubstr("simulated time")));
  EXPECT_TRUE(outputs().empty());
}

TEST_F(CliTrace, OutputInAFolderWhereNoFileCanBeMadeIsRefusedBeforeTheRun) {
  if (!fs::is_directory("/proc")) GTEST_SKIP() << "no /proc here";
  const auto r = cubesim({"run", tiny, "vector_add", "--json", "/proc/x.json"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("--json /proc/x.json: cannot create files in the folder /proc ("));
  EXPECT_THAT(r.out, Not(HasSubstr("simulated time")));
}

TEST_F(CliTrace, OutputUnderAFileIsRefusedSayingItIsAFile) {
  std::ofstream(path("plain")) << "a file";
  const std::string under = (path("plain") / "x.json").string();
  const auto r = cubesim({"run", tiny, "vector_add", "--trace", under});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("--trace " + under + ": " + path("plain").string() +
                               " is a file, not a folder"));
}

TEST_F(CliTrace, NegativeSeedSaysTheRangeInDigitsOneCanRead) {
  for (const auto& command :
       {std::vector<std::string>{"run", tiny, "vector_add", "--seed", "-1"},
        std::vector<std::string>{"sweep", tiny, "vector_add", "--vary",
                                 "system.ucie.latency_ns=1,2", "--seed", "-1"}}) {
    const auto r = cubesim(command);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_THAT(r.err, HasSubstr("-1 must be a whole number from 0 to 18446744073709551615"));
    EXPECT_LT(r.err.size(), 300u) << r.err;
  }
  const auto big = cubesim({"run", tiny, "vector_add", "--seed", "18446744073709551616"});
  EXPECT_EQ(big.code, 2) << show(big);
  EXPECT_THAT(big.err, HasSubstr("18446744073709551616 is too large"));
}

TEST_F(CliTrace, TraceIsValidJsonAndNoTemporaryFileRemains) {
  const auto r = cubesim({"run", tiny, "vector_add", "--trace", path("t.json").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  const nlohmann::json j = read_json(path("t.json"));
  int slices = 0;
  for (const auto& e : j.at("traceEvents")) slices += e.at("ph") == "X";
  EXPECT_GT(slices, 0);
  EXPECT_EQ(outputs(), std::vector<std::string>{"t.json"});
  EXPECT_THAT(r.err, Not(HasSubstr("warning")));
}

TEST_F(CliTrace, CappedTraceStaysValidAndItsWarningNamesTheFilters) {
  const auto r = cubesim({"run", tiny, "vector_add", "--trace", path("t.json").string(),
                          "--trace-max-events", "40", "--trace-pes", "sip0.cube0.*"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.err, AllOf(HasSubstr("cubesim: warning: the trace " + path("t.json").string() +
                                     " stopped at --trace-max-events 40 (simulated time "),
                           HasSubstr("it is valid but lacks the rest of the run"),
                           HasSubstr("--trace-links busy (--trace-link-gap 10us), --trace-pes "
                                     "sip0.cube0.*, --trace-window (whole run)")));
  const nlohmann::json j = read_json(path("t.json"));
  EXPECT_EQ(j.at("traceEvents").size(), 41u);  // the cap, and the event that says it stopped
  EXPECT_EQ(outputs(), std::vector<std::string>{"t.json"});
}

TEST_F(CliTrace, TraceOptionsWithoutATraceAreRefused) {
  const auto r = cubesim({"run", tiny, "vector_add", "--trace-links", "all"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--trace-links"), HasSubstr("--trace")));
}

TEST_F(CliTrace, BadTraceWindowsAndPatternsAreRefusedWithTheRule) {
  const auto window = [&](const std::string& w) {
    return cubesim(
        {"run", tiny, "vector_add", "--trace", path("t.json").string(), "--trace-window", w});
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"10us", "--trace-window 10us: not one START:END pair"},
      {"5us:1us", "--trace-window 5us:1us: START is not before END"},
      {"0:10", "--trace-window 0:10: '10' needs a unit: ps, ns, us, ms or s"},
      {"0:1.5ps", "--trace-window 0:1.5ps: '1.5ps' is finer than 1 ps"},
  };
  for (const auto& [w, message] : cases) {
    const auto r = window(w);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_THAT(r.err, HasSubstr(message)) << w;
  }
  const auto gap = cubesim(
      {"run", tiny, "vector_add", "--trace", path("t.json").string(), "--trace-link-gap", "2"});
  EXPECT_EQ(gap.code, 2) << show(gap);
  EXPECT_THAT(gap.err, HasSubstr("--trace-link-gap 2: '2' needs a unit: ps, ns, us, ms or s"));
  const auto pes = cubesim({"run", tiny, "vector_add", "--trace", path("t.json").string(),
                            "--trace-pes", "sip0.cube0.pe0,sip9.*"});
  EXPECT_EQ(pes.code, 2) << show(pes);
  EXPECT_THAT(pes.err, HasSubstr("--trace-pes sip9.*: matches no PE of this system"));
  EXPECT_TRUE(outputs().empty());
}

TEST_F(CliTrace, WindowedTraceHoldsOnlyItsSpan) {
  const auto r = cubesim({"run", tiny, "vector_add", "--trace", path("t.json").string(),
                          "--trace-window", "1us:2us", "--trace-links", "all"});
  ASSERT_EQ(r.code, 0) << show(r);
  int slices = 0;
  const nlohmann::json j = read_json(path("t.json"));
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++slices;
    const double ts = e.at("ts").get<double>(), end = ts + e.at("dur").get<double>();
    EXPECT_LT(ts, 2.0) << e.dump();
    EXPECT_GT(end, 1.0) << e.dump();
  }
  EXPECT_GT(slices, 0);
}

// Ctrl-C in the middle of a long traced run: the trace file is what it was before (here a
// previous trace), nothing temporary stays, and the CLI says what happened.
TEST_F(CliTrace, InterruptedRunLeavesThePreviousTraceAndNoTemporaryFile) {
  const std::string previous = R"({"traceEvents":[]})";
  std::ofstream(path("t.json")) << previous;
  const pid_t pid = spawn_cubesim(
      {"run", spec_file("default.json"), "sharded_gemm", "-p", "M=2048", "-p", "K=2048", "-p",
       "N=8192", "--timing-only", "--trace", path("t.json").string(), "--trace-links", "all"},
      path("stdout.txt"), path("stderr.txt"));
  // Wait until the trace is being written (its temporary file has grown), then interrupt.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto writing = [&] {
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(dir_, ec))
      if (f.path().filename().string().rfind(".t.json.tmp", 0) == 0 &&
          fs::file_size(f.path(), ec) > (1u << 20))
        return true;
    return false;
  };
  while (!writing() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGINT);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(status));
  const std::string err = read_text(path("stderr.txt"));
  if (WEXITSTATUS(status) == 0) GTEST_SKIP() << "the run finished before the interrupt";
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_THAT(err, HasSubstr("cubesim: interrupted (SIGINT): the run stopped; no report was "
                             "written, and the trace was not written (" +
                             path("t.json").string() + " is as it was before the run)"));
  EXPECT_EQ(read_text(path("t.json")), previous);
  EXPECT_EQ(outputs(), std::vector<std::string>{"t.json"});
}

}  // namespace
}  // namespace cubesim::test
