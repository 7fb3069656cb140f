#pragma once
// Chrome / Perfetto trace-event JSON (the "JSON Array Format" with a traceEvents object),
// streamed to a file as events happen so a long run's trace never sits in memory.
// ui.perfetto.dev and chrome://tracing open the result. Timestamps are microseconds with six
// decimals, i.e. exact picoseconds.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "emu/time.hpp"

namespace cubesim::emu {

class TraceWriter {
 public:
  // A named row in the viewer: `group` becomes a process, `name` a thread within it.
  struct Track {
    std::uint32_t pid;
    std::uint32_t tid;
  };

  // Opens (truncates) `file`; throws std::runtime_error naming the file and the reason.
  explicit TraceWriter(const std::filesystem::path& file);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The same (group, name) gives the same track; tracks appear in the order first asked for.
  Track track(std::string_view group, std::string_view name);

  // A slice [start, start + duration) on a track. `args` (a JSON object) shows when clicked.
  void complete(Track track, std::string_view name, Tick start, Tick duration,
                std::string_view category = "sim", const nlohmann::json& args = nullptr);
  void instant(Track track, std::string_view name, Tick at, std::string_view category = "sim");
  // A counter track under `group`, e.g. a link's utilisation over time.
  void counter(std::string_view group, std::string_view name, Tick at, double value);

  // Ends the JSON document and closes the file; throws if anything failed to write.
  void close();
  std::uint64_t events_written() const { return events_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::uint32_t group_pid(std::string_view group);
  void begin_event();
  void write(std::string_view text);

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::map<std::string, std::uint32_t, std::less<>> groups_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t, std::less<>> tracks_;
  std::uint32_t next_tid_ = 1;
  std::uint64_t events_ = 0;
};

}  // namespace cubesim::emu
