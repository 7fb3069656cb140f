#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emu/trace.hpp"

using namespace cubesim::emu;
namespace fs = std::filesystem;

namespace {
fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".json");
}
nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}
}  // namespace

TEST(TraceWriter, WritesCompleteEventsOnNamedTracksThatParseBack) {
  const fs::path file = temp_file("trace");
  {
    TraceWriter t(file);
    const auto pe0 = t.track("cube 0", "pe 0");
    const auto gemm = t.track("cube 0", "pe 0 gemm");
    EXPECT_EQ(t.track("cube 0", "pe 0").tid, pe0.tid);
    t.complete(pe0, "load A", 1'234'567, 2'000'000, "tl", {{"bytes", 4096}});
    t.complete(gemm, "gemm 64x64x64", 3'234'567, 500);
    t.instant(pe0, "done", 5'000'000);
    t.counter("links", "utilisation", 1'000'000, 0.5);
    t.close();
  }
  const nlohmann::json j = read_json(file);
  ASSERT_TRUE(j.contains("traceEvents"));
  const auto& events = j["traceEvents"];
  int complete = 0, names = 0;
  for (const auto& e : events) {
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
    if (e["ph"] != "X") continue;
    ++complete;
    if (e["name"] == "load A") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.234567);  // microseconds, exact to the ps
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.0);
      EXPECT_EQ(e["args"]["bytes"], 4096);
      EXPECT_EQ(e["cat"], "tl");
    } else {
      EXPECT_EQ(e["name"], "gemm 64x64x64");
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.0005);
    }
  }
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(names, 2);
  fs::remove(file);
}

TEST(TraceWriter, EscapesNamesAndStreamsLargeTraces) {
  const fs::path file = temp_file("trace-large");
  constexpr int kEvents = 50'000;  // several flushes of the 1 MiB buffer
  {
    TraceWriter t(file);
    const auto track = t.track("group \"quoted\"", "pe\\0\n");
    for (int i = 0; i < kEvents; ++i) {
      t.complete(track, "ev", static_cast<Tick>(i) * 1'000, 500);
    }
    EXPECT_EQ(t.events_written(), static_cast<std::uint64_t>(kEvents) + 4);
  }
  const nlohmann::json j = read_json(file);
  std::size_t complete = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") ++complete;
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      EXPECT_EQ(e["args"]["name"], "pe\\0\n");
    }
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "group \"quoted\"");
    }
  }
  EXPECT_EQ(complete, static_cast<std::size_t>(kEvents));
  fs::remove(file);
}

TEST(TraceWriter, UnwritablePathIsAClearError) {
  try {
    TraceWriter t("/nonexistent-dir/trace.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write trace file '/nonexistent-dir/trace.json'"),
              std::string::npos);
  }
}

namespace {
// Files in `dir` other than `keep`: what a writer leaves behind.
std::vector<std::string> others_in(const fs::path& dir, const fs::path& keep) {
  std::vector<std::string> names;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path() != keep) names.push_back(f.path().filename().string());
  return names;
}
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
int count_phase(const nlohmann::json& j, const std::string& ph) {
  int n = 0;
  for (const auto& e : j["traceEvents"]) n += e["ph"] == ph;
  return n;
}
}  // namespace

TEST(TraceWriter, WritesBesideTheTargetAndRenamesOnlyOnClose) {
  const fs::path dir = fresh_dir("trace-atomic");
  const fs::path file = dir / "t.json";
  {
    std::ofstream(file) << "previous";
    TraceWriter t(file);
    t.complete(t.track("g", "a"), "x", 0, 10);
    EXPECT_EQ(t.temp_path().parent_path(), dir);
    EXPECT_TRUE(fs::exists(t.temp_path()));
    std::ifstream in(file);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "previous");
    t.close();
  }
  EXPECT_EQ(count_phase(read_json(file), "X"), 1);
  EXPECT_TRUE(others_in(dir, file).empty());
  fs::remove_all(dir);
}

TEST(TraceWriter, AbandonAndRemoveUnfinishedLeaveTheTargetAsItWas) {
  const fs::path dir = fresh_dir("trace-abandon");
  const fs::path file = dir / "t.json", other = dir / "u.json";
  std::ofstream(file) << "previous";
  {
    TraceWriter t(file);
    TraceWriter u(other);
    t.complete(t.track("g", "a"), "x", 0, 10);
    TraceWriter::remove_unfinished();  // as a SIGINT handler does
    EXPECT_FALSE(fs::exists(t.temp_path()));
    EXPECT_FALSE(fs::exists(u.temp_path()));
    t.abandon();
    u.abandon();
  }
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "previous");
  EXPECT_TRUE(others_in(dir, file).empty());
  fs::remove_all(dir);
}

TEST(TraceWriter, WindowKeepsSlicesThatOverlapItAndPointEventsInsideIt) {
  const fs::path file = temp_file("trace-window");
  {
    TraceWriter t(file, {.window_start = 1'000, .window_end = 2'000});
    const auto track = t.track("g", "a");
    t.complete(track, "before", 0, 1'000);        // ends where the window starts
    t.complete(track, "across-start", 500, 600);  // [500, 1100)
    t.complete(track, "inside", 1'200, 100);
    t.complete(track, "across-end", 1'900, 500);
    t.complete(track, "after", 2'000, 10);
    t.instant(track, "in", 1'999);
    t.instant(track, "out", 2'000);
    t.counter("g", "c", 999, 1.0);
    EXPECT_TRUE(t.wants(1'999, 1'999));
    EXPECT_FALSE(t.wants(0, 1'000));
  }
  std::vector<std::string> kept;
  const nlohmann::json j = read_json(file);
  for (const auto& e : j["traceEvents"])
    if (e["ph"] != "M") kept.push_back(e["name"]);
  EXPECT_EQ(kept, (std::vector<std::string>{"across-start", "inside", "across-end", "in"}));
  fs::remove(file);
}

TEST(TraceWriter, ByteCapStopsTheTraceValidAndUnderTheCapAndSaysWhere) {
  const fs::path file = temp_file("trace-cap-bytes");
  constexpr std::uint64_t kCap = 8'192;
  Tick first_dropped = 0;
  {
    TraceWriter t(file, {.max_bytes = kCap});
    const auto track = t.track("g", "a");
    for (Tick i = 0; i < 1'000 && !t.full(); ++i) {
      t.complete(track, "ev", i * 1'000, 500);
      if (t.full()) first_dropped = i * 1'000;
    }
    ASSERT_TRUE(t.truncation().has_value());
    EXPECT_TRUE(t.truncation()->by_bytes);
    EXPECT_EQ(t.truncation()->limit, kCap);
    EXPECT_EQ(t.truncation()->at, first_dropped);
    t.complete(track, "after the cap", 2'000'000, 1);  // dropped: the trace has stopped
    t.close();
  }
  EXPECT_LE(fs::file_size(file), kCap);
  const nlohmann::json j = read_json(file);
  int slices = 0;
  bool said = false;
  for (const auto& e : j["traceEvents"]) {
    slices += e["ph"] == "X";
    if (e["ph"] == "i" && e["name"] == "trace stopped: --trace-max-bytes reached") {
      said = true;
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), static_cast<double>(first_dropped) / 1e6);
    }
  }
  EXPECT_TRUE(said);
  EXPECT_EQ(static_cast<Tick>(slices), first_dropped / 1'000);  // every one before it is there
  fs::remove(file);
}

TEST(TraceWriter, EventCapCountsEveryEventWritten) {
  const fs::path file = temp_file("trace-cap-events");
  {
    TraceWriter t(file, {.max_events = 10});
    const auto track = t.track("g", "a");  // 4 metadata events
    for (Tick i = 0; i < 100; ++i) t.complete(track, "ev", i, 1);
    EXPECT_EQ(t.events_written(), 10u);
    ASSERT_TRUE(t.truncation().has_value());
    EXPECT_FALSE(t.truncation()->by_bytes);
    EXPECT_EQ(t.truncation()->at, 6u);  // slices 0..5 fit beside the 4 metadata events
  }
  const nlohmann::json j = read_json(file);
  EXPECT_EQ(count_phase(j, "X"), 6);
  EXPECT_EQ(count_phase(j, "i"), 1);  // the stop notice
  fs::remove(file);
}

TEST(TraceWriter, FlowEventsShareIdCategoryAndNameSoViewersJoinThem) {
  const fs::path file = temp_file("trace-flow");
  {
    TraceWriter t(file);
    const auto pe = t.track("PEs", "pe0"), link = t.track("links", "l0");
    const std::uint64_t id = t.new_flow_id();
    EXPECT_NE(id, 0u);
    EXPECT_NE(t.new_flow_id(), id);
    t.complete(pe, "load", 100, 1'000);
    t.flow_start(pe, id, 100);
    t.complete(link, "busy", 100, 500);
    t.flow_step(link, id, 350);
    t.flow_end(pe, id, 1'099);
  }
  const nlohmann::json j = read_json(file);
  std::vector<nlohmann::json> flow;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "s" || e["ph"] == "t" || e["ph"] == "f") flow.push_back(e);
  ASSERT_EQ(flow.size(), 3u);
  for (const auto& e : flow) {
    EXPECT_EQ(e["id"], flow[0]["id"]);
    EXPECT_EQ(e["cat"], flow[0]["cat"]);
    EXPECT_EQ(e["name"], flow[0]["name"]);
  }
  EXPECT_NE(flow[0]["tid"], flow[1]["tid"]);
  EXPECT_DOUBLE_EQ(flow[1]["ts"].get<double>(), 0.00035);
  // The end binds to the slice that encloses it (the load), not to the next one to begin.
  EXPECT_EQ(flow[2]["ph"], "f");
  EXPECT_EQ(flow[2]["bp"], "e");
  EXPECT_EQ(flow[2]["tid"], flow[0]["tid"]);
  fs::remove(file);
}
