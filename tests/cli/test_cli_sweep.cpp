// End-to-end tests of `cubesim sweep`: the cartesian product in a deterministic order whatever
// the parallelism, errors before anything runs, a failing point that does not stop the sweep,
// resuming from --out, Ctrl-C, the plot, and the same results from two MPI ranks.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Splits a CSV line (no quoted newlines in our cells).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        cells.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        cells.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
  std::string at(std::size_t row, const std::string& name) const { return rows[row][column(name)]; }
  // Everything but the host's wall time, which differs from run to run.
  std::vector<std::vector<std::string>> deterministic() const {
    auto copy = rows;
    for (auto& r : copy) r[column("wall_seconds")].clear();
    return copy;
  }
};

Csv read_csv(const fs::path& p) {
  Csv csv;
  const auto lines = lines_of(read_text(p));
  if (lines.empty()) return csv;
  csv.header = csv_cells(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) csv.rows.push_back(csv_cells(lines[i]));
  return csv;
}

class CliSweep : public CliTest {
 protected:
  const std::string tiny = spec_file("tiny.json");
  // 3 x 2 = 6 quick timing-only points of vector_add on the tiny system.
  std::vector<std::string> small_sweep(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a = {"sweep", tiny, "vector_add", "--vary",
                                  "system.ucie.bandwidth_GBps=16:64:x2", "--vary",
                                  "param.n=1000,20000",
                                  // Over every cube, so that the UCIe links carry the data.
                                  "-p", "placement=system"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // sharded_gemm with N = 64: 64 columns shard over 1, 2 and 4 cubes of 4 PEs, not over 3.
  std::vector<std::string> gemm_sweep(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a = {"sweep",
                                  tiny,
                                  "sharded_gemm",
                                  "--vary",
                                  "system.sips.cubes_per_sip=1:4",
                                  "--vary",
                                  "param.K=32,64",
                                  "-p",
                                  "M=32",
                                  "-p",
                                  "N=64"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

TEST_F(CliSweep, CartesianProductOneRowPerPointInOrder) {
  const auto r = cubesim(small_sweep({"--csv", path("out.csv").string()}));
  ASSERT_EQ(r.code, 0) << show(r);
  const Csv csv = read_csv(path("out.csv"));
  ASSERT_EQ(csv.rows.size(), 6u) << show(r);
  EXPECT_EQ(csv.header[0], "index");
  EXPECT_EQ(csv.header[1], "system.ucie.bandwidth_GBps");
  EXPECT_EQ(csv.header[2], "param.n");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"16", "1000"},  {"16", "20000"}, {"32", "1000"},
      {"32", "20000"}, {"64", "1000"},  {"64", "20000"}};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(csv.at(i, "index"), std::to_string(i));
    EXPECT_EQ(csv.at(i, "system.ucie.bandwidth_GBps"), expected[i].first);
    EXPECT_EQ(csv.at(i, "param.n"), expected[i].second);
    EXPECT_EQ(csv.at(i, "kernel"), "vector_add");
    EXPECT_EQ(csv.at(i, "param.dtype"), "f32");
    EXPECT_EQ(csv.at(i, "status"), "ok");
    EXPECT_GT(std::stoull(csv.at(i, "sim_time_ps")), 0u);
    EXPECT_EQ(csv.at(i, "verified"), "");  // timing-only by default
  }
  // More UCIe bandwidth, less time for the larger problem (its data is interleaved over cubes).
  EXPECT_GT(std::stoull(csv.at(1, "sim_time_ps")), std::stoull(csv.at(5, "sim_time_ps")));
  // The table on stdout, nothing on stderr (no progress bar when stderr is not a terminal).
  EXPECT_THAT(r.out, StartsWith("point  system.ucie.bandwidth_GBps  param.n"));
  EXPECT_THAT(r.out, HasSubstr("6 of 6 points (3 x 2) finished"));
  EXPECT_THAT(r.err, Not(HasSubstr("ETA"))) << show(r);
  EXPECT_THAT(r.err, Not(HasSubstr("\r"))) << show(r);
}

TEST_F(CliSweep, FunctionalVerifiesEveryPoint) {
  const auto r = cubesim(small_sweep({"--functional", "--csv", path("out.csv").string()}));
  ASSERT_EQ(r.code, 0) << show(r);
  const Csv csv = read_csv(path("out.csv"));
  ASSERT_EQ(csv.rows.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(csv.at(i, "verified"), "true");
}

TEST_F(CliSweep, ParallelResultsEqualSerialResults) {
  const auto serial = cubesim(gemm_sweep({"--jobs", "1", "--csv", path("serial.csv").string()}));
  const auto parallel =
      cubesim(gemm_sweep({"--jobs", "3", "--csv", path("parallel.csv").string()}));
  EXPECT_EQ(serial.code, parallel.code) << show(serial) << show(parallel);
  const Csv a = read_csv(path("serial.csv")), b = read_csv(path("parallel.csv"));
  ASSERT_EQ(a.rows.size(), 8u);
  EXPECT_EQ(a.header, b.header);
  EXPECT_EQ(a.deterministic(), b.deterministic());
}

TEST_F(CliSweep, FailingPointIsARowAndTheSweepGoesOn) {
  const auto r = cubesim(
      gemm_sweep({"--csv", path("out.csv").string(), "--jsonl", path("out.jsonl").string()}));
  EXPECT_EQ(r.code, 2) << show(r);  // the highest exit code of the points: does not shard
  const Csv csv = read_csv(path("out.csv"));
  ASSERT_EQ(csv.rows.size(), 8u) << show(r);
  for (std::size_t i = 0; i < 8; ++i) {
    const bool three_cubes = csv.at(i, "system.sips.cubes_per_sip") == "3";
    EXPECT_EQ(csv.at(i, "status"), three_cubes ? "usage_error" : "ok") << i;
    EXPECT_EQ(csv.at(i, "exit_code"), three_cubes ? "2" : "0") << i;
    if (three_cubes) {
      EXPECT_THAT(csv.at(i, "error"), HasSubstr("N = 64 is not divisible by the 12 programs"));
      EXPECT_EQ(csv.at(i, "sim_time_ps"), "");
    }
  }
  EXPECT_THAT(r.out, HasSubstr("point 4: N = 64 is not divisible"));
  const auto jsonl = lines_of(read_text(path("out.jsonl")));
  ASSERT_EQ(jsonl.size(), 8u);
  const auto row4 = nlohmann::json::parse(jsonl[4]);
  EXPECT_EQ(row4["status"], "usage_error");
  EXPECT_EQ(row4["values"]["system.sips.cubes_per_sip"], 3);
  EXPECT_EQ(row4["params"]["N"], 64);
}

TEST_F(CliSweep, ImpossibleCombinationsAreRowsWithTheirReason) {
  // A parameter value one kernel takes and another does not, and a grid one SIP count fits and
  // another does not: those points are usage_error rows, the others run; a grid that the ring
  // ignores is no error.
  const auto r = cubesim({"sweep", spec_file("default.json"), "--vary",
                          "kernel=allreduce,allgather", "--vary", "param.algorithm=ring,tree", "-p",
                          "bytes_per_pe=4096", "--csv", path("algo.csv").string()});
  EXPECT_EQ(r.code, 2) << show(r);
  const Csv algo = read_csv(path("algo.csv"));
  ASSERT_EQ(algo.rows.size(), 4u) << show(r);
  for (std::size_t i = 0; i < 4; ++i) {
    const bool impossible =
        algo.at(i, "kernel") == "allgather" && algo.at(i, "param.algorithm") == "tree";
    EXPECT_EQ(algo.at(i, "status"), impossible ? "usage_error" : "ok") << i;
    if (impossible) {
      EXPECT_THAT(algo.at(i, "error"), HasSubstr("'tree' is not one of"));
    }
  }
  const auto t =
      cubesim({"sweep", spec_file("default.json"), "vector_add", "-p", "n=65536", "--set",
               "system.sips.count=6", "--vary", "system.sips.grid=[3,2],[2,2]", "--vary",
               "system.inter_sip.topology=ring,torus", "--csv", path("topo.csv").string()});
  EXPECT_EQ(t.code, 2) << show(t);
  const Csv topo = read_csv(path("topo.csv"));
  ASSERT_EQ(topo.rows.size(), 4u) << show(t);
  for (std::size_t i = 0; i < 4; ++i) {
    const bool impossible = topo.at(i, "system.sips.grid") == "[2,2]" &&
                            topo.at(i, "system.inter_sip.topology") == "torus";
    EXPECT_EQ(topo.at(i, "status"), impossible ? "usage_error" : "ok") << i;
    if (impossible) {
      EXPECT_THAT(topo.at(i, "error"), HasSubstr("a 2x2 grid has 4 nodes"));
    }
  }
  // A value no combination takes is still refused before anything runs.
  const auto bogus =
      cubesim({"sweep", spec_file("default.json"), "--vary", "kernel=allreduce,allgather", "--vary",
               "param.algorithm=ring,bogus"});
  EXPECT_EQ(bogus.code, 2);
  EXPECT_THAT(bogus.err, HasSubstr("--vary param.algorithm=bogus"));
}

TEST_F(CliSweep, CrashedWorkerIsARowAndTheSweepGoesOn) {
  const auto r = run_cubesim(small_sweep({"--csv", path("out.csv").string()}), dir_,
                             {"CUBESIM_SWEEP_TEST_CRASH_POINT=2"});
  EXPECT_EQ(r.code, 3) << show(r);
  const Csv csv = read_csv(path("out.csv"));
  ASSERT_EQ(csv.rows.size(), 6u) << show(r);
  EXPECT_EQ(csv.at(2, "status"), "crashed");
  EXPECT_THAT(csv.at(2, "error"), HasSubstr("died of signal 9"));
  EXPECT_EQ(csv.at(2, "param.n"), "1000");
  for (std::size_t i : {0, 1, 3, 4, 5}) EXPECT_EQ(csv.at(i, "status"), "ok") << i;
}

TEST_F(CliSweep, BadInputIsAnErrorBeforeAnyPointRuns) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::string csv = path("never.csv").string();
  const std::vector<Case> cases = {
      {{"--vary", "system.ucie.bandwith_GBps=1,2"},
       "--vary system.ucie.bandwith_GBps: unknown path"},
      {{"--vary", "system.ucie.bandwidth_GBps=64,0"},
       "--vary system.ucie.bandwidth_GBps=0: 0 GB/s is out of range"},
      {{"--vary", "system.ucie.bandwidth_GBps=64,fast"},
       "--vary system.ucie.bandwidth_GBps=fast: expected a number"},
      {{"--vary", "param.n=10,ten"}, "--vary param.n=ten"},
      {{"--vary", "param.n="}, "no values given (an empty product)"},
      {{"--vary", "param.n=10:1"}, "is empty"},
      {{"--vary", "param.n=10", "--out", "/proc/cubesim-cannot-write-here"},
       "--out /proc/cubesim-cannot-write-here: cannot create"},
      {{"--vary", "param.n=10", "--plot", path("plot.pdf").string()}, "name a .png or .svg"},
      {{"--vary", "param.n=10", "--metric", "busiest_link"}, "not a numeric column"},
      {{"--vary", "param.n=10", "--plot", path("p.svg").string(), "--reference", "kernel"},
       "--reference kernel: not a numeric column"},
      {{"--vary", "param.n=10", "--reference", "sim_time_ps"}, "give --plot FILE.png"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"sweep", tiny, "vector_add", "--csv", csv};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = cubesim(args);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_THAT(r.err, StartsWith("cubesim: ")) << show(r);
    EXPECT_THAT(r.err, HasSubstr(c.says)) << show(r);
    EXPECT_EQ(r.out, "") << show(r);
    EXPECT_FALSE(fs::exists(csv)) << show(r);
  }
  // The output folder's parent is a file: unwritable.
  { std::ofstream(path("file")) << "x"; }
  const auto r = cubesim(small_sweep({"--out", path("file").string() + "/out"}));
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("cannot create the folder"));
}

TEST_F(CliSweep, ProgressCountsPointsDoneRunningAndLeftWhenAskedFor) {
  std::vector<std::string> args = small_sweep({"--jobs", "1"});
  const auto quiet = cubesim(args);  // stderr is not a terminal: no progress
  ASSERT_EQ(quiet.code, 0) << show(quiet);
  EXPECT_THAT(quiet.err, Not(HasSubstr("points, ")));
  args.insert(args.begin(), "--progress");
  const auto shown = cubesim(args);
  ASSERT_EQ(shown.code, 0) << show(shown);
  // The first line comes at once: nothing done yet, one running, the rest left.
  EXPECT_THAT(shown.err, HasSubstr("] 0/6 points, 1 running, 5 left, ")) << shown.err;
}

TEST_F(CliSweep, ResumeSkipsFinishedPoints) {
  const std::string out = path("study").string();
  const auto first = cubesim(small_sweep({"--out", out}));
  ASSERT_EQ(first.code, 0) << show(first);
  EXPECT_EQ(
      std::distance(fs::directory_iterator(fs::path(out) / "points"), fs::directory_iterator{}), 6);
  const auto rows_before = lines_of(read_text(fs::path(out) / "results.jsonl"));

  // The same sweep again runs nothing: every row (wall time included) comes back from disk.
  const auto again = cubesim(small_sweep({"--out", out, "--jobs", "3"}));
  ASSERT_EQ(again.code, 0) << show(again);
  EXPECT_THAT(again.out, HasSubstr("6 of 6 points (3 x 2) finished; 6 kept from " + out));
  // It had 3 jobs to run nothing with, and says so.
  EXPECT_THAT(again.out, HasSubstr(" on 1 job (3 given; 0 points were left to run)"));
  EXPECT_EQ(lines_of(read_text(fs::path(out) / "results.jsonl")), rows_before);

  // One more bandwidth: only its two points run; the others keep their rows.
  const auto wider =
      cubesim({"sweep", tiny, "vector_add", "--vary", "system.ucie.bandwidth_GBps=16:128:x2",
               "--vary", "param.n=1000,20000", "-p", "placement=system", "--out", out});
  ASSERT_EQ(wider.code, 0) << show(wider);
  EXPECT_THAT(wider.out, HasSubstr("8 of 8 points (4 x 2) finished; 6 kept from " + out));
  EXPECT_THAT(wider.out, Not(HasSubstr(" given; ")));  // --jobs unset: as many as points left
  const auto rows_after = lines_of(read_text(fs::path(out) / "results.jsonl"));
  ASSERT_EQ(rows_after.size(), 8u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(rows_after[i], rows_before[i]) << i;
}

TEST_F(CliSweep, PointFilesWithAHugeNumberOrAFifoRunAgain) {
  // A number no double holds aborted the whole sweep with a raw JSON error; a FIFO at a point
  // file's path blocked the sweep for ever when the point was kept again.
  const std::string out = path("fifo").string();
  ASSERT_EQ(cubesim(small_sweep({"--out", out})).code, 0);
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(fs::path(out) / "points")) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 6u);
  std::string text = read_text(files[0]);
  const auto at = text.find("\"sim_time_ps\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(text.find_first_of("0123456789", at), "1e400,\"x\":");
  std::ofstream(files[0], std::ios::trunc) << text;
  fs::remove(files[1]);
  ASSERT_EQ(::mkfifo(files[1].c_str(), 0600), 0);
  const auto again = cubesim(small_sweep({"--out", out}));
  EXPECT_EQ(again.code, 0) << show(again);
  EXPECT_THAT(again.err, HasSubstr(files[0].string() + " is not JSON cubesim can read (a number "
                                                       "out of range)"));
  EXPECT_THAT(again.err, HasSubstr(files[1].string() + " is not a regular file"));
  EXPECT_THAT(again.out, HasSubstr("6 of 6 points (3 x 2) finished; 4 kept from " + out));
  EXPECT_TRUE(fs::is_regular_file(files[1]));  // replaced by the point kept again
}

TEST_F(CliSweep, DamagedPointFilesAreNamedAndTheirPointsRunAgain) {
  const std::string out = path("study").string();
  const auto first = cubesim(small_sweep({"--out", out}));
  ASSERT_EQ(first.code, 0) << show(first);
  const auto rows_before = lines_of(read_text(fs::path(out) / "results.jsonl"));
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(fs::path(out) / "points")) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 6u);

  // Six kinds of damage, one per point file; each keeps the file's own key where it has one.
  auto doc = [&](const fs::path& f) { return nlohmann::json::parse(read_text(f)); };
  auto rewrite = [](const fs::path& f, const std::string& text) {
    std::ofstream(f, std::ios::trunc) << text;
  };
  nlohmann::json d = doc(files[0]);
  d["row"] = nlohmann::json::object();
  rewrite(files[0], d.dump());
  d = doc(files[1]);
  d["row"] = nullptr;
  rewrite(files[1], d.dump());
  d = doc(files[2]);
  d["row"]["status"] = "crashed";
  d["row"]["exit_code"] = 139;
  rewrite(files[2], d.dump());
  d = doc(files[3]);
  d["row"]["sim_time_ps"] = "fast";
  rewrite(files[3], d.dump());
  rewrite(files[4], "{\"key\": ");
  fs::remove(files[5]);
  fs::create_directory(files[5]);

  const auto again = cubesim(small_sweep({"--out", out}));
  EXPECT_EQ(again.code, 0) << show(again);
  for (const auto& f : files)
    EXPECT_THAT(again.err, HasSubstr(f.string() + " ")) << "names the damaged file";
  EXPECT_THAT(again.err, HasSubstr("its row has no \"status\""));
  EXPECT_THAT(again.err, HasSubstr("its row is null, not an object"));
  EXPECT_THAT(again.err, HasSubstr("status \"crashed\" with exit code 139"));
  EXPECT_THAT(again.err, HasSubstr("\"sim_time_ps\" is string"));
  EXPECT_THAT(again.err, HasSubstr("is not JSON"));
  EXPECT_THAT(again.err, HasSubstr("is a folder, not a file"));
  // The folder cannot be replaced: a warning, and the sweep still finishes every point.
  EXPECT_THAT(again.err, HasSubstr("is not kept (cannot write " + files[5].string()));
  EXPECT_THAT(again.out, HasSubstr("6 of 6 points (3 x 2) finished;"));
  EXPECT_THAT(again.out, Not(HasSubstr("kept from")));
  // The rerun rows equal the first run's, wall time aside.
  const auto strip_wall = [](const std::string& line) {
    auto j = nlohmann::json::parse(line);
    j.erase("wall_seconds");
    return j;
  };
  const auto rows_after = lines_of(read_text(fs::path(out) / "results.jsonl"));
  ASSERT_EQ(rows_after.size(), rows_before.size());
  for (std::size_t i = 0; i < rows_after.size(); ++i)
    EXPECT_EQ(strip_wall(rows_after[i]), strip_wall(rows_before[i])) << i;

  // The five repaired files are kept now; the folder's point runs again, with a warning.
  const auto third = cubesim(small_sweep({"--out", out}));
  EXPECT_EQ(third.code, 0) << show(third);
  EXPECT_THAT(third.out, HasSubstr("; 5 kept from " + out));
  EXPECT_THAT(third.err, HasSubstr(files[5].string() + " is a folder, not a file"));
}

TEST_F(CliSweep, InterruptKeepsFinishedPointsAndResumes) {
  // Points of some 40 ms each (much longer in sanitizer builds), one at a time, so the
  // interrupt lands mid-sweep.
  const std::string out = path("study").string();
  std::vector<std::string> args = {
      "sweep",  spec_file("default.json"),     "sharded_gemm", "-p", "M=512",
      "--vary", "system.ucie.latency_ns=1:12", "--out",        out};
  std::vector<std::string> storage = args;
  storage.insert(storage.end(), {"--jobs", "1"});
  const pid_t pid = spawn_cubesim(storage, path("stdout.txt"), path("stderr.txt"));
  // Wait for a finished point, then Ctrl-C.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const fs::path points = fs::path(out) / "points";
  auto finished = [&] {  // points kept, not the sweep's probe or half-written files
    std::error_code ec;
    long n = 0;
    if (!fs::is_directory(points, ec)) return n;
    for (const auto& f : fs::directory_iterator(points, ec)) n += f.path().extension() == ".json";
    return n;
  };
  while (finished() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGINT);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(status));
  const std::string err = read_text(path("stderr.txt"));
  const long kept = finished();
  if (WEXITSTATUS(status) == 0) GTEST_SKIP() << "the sweep finished before the interrupt";
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_THAT(err, HasSubstr("cubesim: sweep interrupted: "));
  EXPECT_THAT(err, HasSubstr("run the same command again to finish the rest"));
  EXPECT_GE(kept, 1);
  EXPECT_LT(kept, 12);
  const Csv partial = read_csv(fs::path(out) / "results.csv");
  EXPECT_EQ(static_cast<long>(partial.rows.size()), kept);

  // The rest, on every core this time: the points' keys do not depend on --jobs.
  const auto rest = cubesim(args);
  ASSERT_EQ(rest.code, 0) << show(rest);
  EXPECT_THAT(rest.out, HasSubstr("12 of 12 points (12) finished; " + std::to_string(kept) +
                                  " kept from " + out));
  EXPECT_EQ(read_csv(fs::path(out) / "results.csv").rows.size(), 12u);
}

TEST_F(CliSweep, PlotIsAValidPngOrSvg) {
  const auto png = cubesim(gemm_sweep({"--plot", path("plot.png").string()}));
  EXPECT_EQ(png.code, 2) << show(png);  // the 3-cube points do not shard; the plot skips them
  const std::string png_bytes = read_text(path("plot.png"));
  ASSERT_GT(png_bytes.size(), 1000u) << show(png);
  EXPECT_EQ(png_bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  const auto svg = cubesim(
      small_sweep({"--plot", path("plot.svg").string(), "--metric", "achieved_bytes_per_second"}));
  ASSERT_EQ(svg.code, 0) << show(svg);
  const std::string text = read_text(path("plot.svg"));
  EXPECT_THAT(text, HasSubstr("<svg"));
  EXPECT_THAT(text, HasSubstr("</svg>"));
  EXPECT_THAT(text, HasSubstr("param.n=20000"));  // the legend: one line per value of the 2nd
  EXPECT_THAT(text, HasSubstr("system.ucie.bandwidth_GBps"));

  // A reference column is drawn dotted beside each line, and named in the legend.
  const auto ref = cubesim(
      small_sweep({"--plot", path("ref.svg").string(), "--reference", "sim_time_ps", "--log-y"}));
  ASSERT_EQ(ref.code, 0) << show(ref);
  EXPECT_THAT(read_text(path("ref.svg")), HasSubstr("sim_time_ps (dotted)"));
}

TEST_F(CliSweep, ACollectiveStudyShowsAndPlotsItsBusBandwidth) {
  const auto r =
      cubesim({"sweep", spec_file("tiny.json"), "allreduce", "-p", "bytes_per_pe=4096", "--vary",
               "param.algorithm=ring,tree", "--plot", path("busbw.svg").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("GB/s busbw"));
  // The default metric, details.busbw_GBps, in its unit.
  EXPECT_THAT(read_text(path("busbw.svg")), HasSubstr("busbw (GB/s)"));
}

#if CUBESIM_TEST_MPI
TEST_F(CliSweep, TwoMpiRanksGiveTheSerialResults) {
  const auto serial = cubesim(gemm_sweep({"--jobs", "1", "--csv", path("serial.csv").string()}));
  std::vector<std::string> args = {"-n", "2", "--oversubscribe", "--allow-run-as-root",
                                   CUBESIM_BINARY};
  const auto sweep = gemm_sweep(
      {"--jobs", "1", "--csv", path("mpi.csv").string(), "--jsonl", path("mpi.jsonl").string()});
  args.insert(args.end(), sweep.begin(), sweep.end());
  // OpenMPI's start-up leaks ~120 KB that LeakSanitizer would report (sanitizer builds).
  const auto r = run_program(CUBESIM_MPIEXEC, args, dir_,
                             {"LSAN_OPTIONS=suppressions=" CUBESIM_LSAN_SUPPRESSIONS
                              ":fast_unwind_on_malloc=0:print_suppressions=0"});
  EXPECT_EQ(r.code, serial.code) << show(r);
  const Csv a = read_csv(path("serial.csv")), b = read_csv(path("mpi.csv"));
  ASSERT_EQ(b.rows.size(), 8u) << show(r);
  EXPECT_EQ(a.header, b.header);
  EXPECT_EQ(a.deterministic(), b.deterministic());
  std::set<int> ranks;
  for (const auto& line : lines_of(read_text(path("mpi.jsonl"))))
    ranks.insert(nlohmann::json::parse(line).value("rank", -1));
  EXPECT_EQ(ranks, (std::set<int>{0, 1})) << "both ranks ran points";
  EXPECT_THAT(r.out, HasSubstr("8 of 8 points (4 x 2) finished"));
  EXPECT_THAT(r.out, HasSubstr("1 job per rank x 2 ranks"));
}
#endif

}  // namespace
}  // namespace cubesim::test
