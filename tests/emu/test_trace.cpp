#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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
