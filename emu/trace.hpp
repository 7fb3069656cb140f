#pragma once
// Chrome / Perfetto trace-event JSON (the "JSON Array Format" with a traceEvents object),
// streamed to a file as events happen so a long run's trace never sits in memory.
// ui.perfetto.dev and chrome://tracing open the result. Timestamps are microseconds with six
// decimals, i.e. exact picoseconds.
//
// Contract: the events go to a temporary file beside the target, renamed over it by close(), so
// the target is either the previous file or a complete trace, never half of one. The limits
// (a time window, a size cap) drop events without ever breaking the JSON: a capped trace stops
// at the cap, stays valid, and says so through truncation().

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "emu/time.hpp"

namespace cubesim::emu {

// What a trace keeps. Slices that overlap [window_start, window_end) are kept whole; instants,
// counters and flow events are kept when they fall inside it. A cap of 0 means no cap.
struct TraceLimits {
  Tick window_start = 0;
  Tick window_end = kTickMax;
  std::uint64_t max_bytes = 0;
  std::uint64_t max_events = 0;
};

class TraceWriter {
 public:
  // A named row in the viewer: `group` becomes a process, `name` a thread within it.
  struct Track {
    std::uint32_t pid;
    std::uint32_t tid;
  };

  // Which cap stopped the trace, and the simulated time of the first event it dropped.
  struct Truncation {
    bool by_bytes = false;  // max_bytes, else max_events
    std::uint64_t limit = 0;
    Tick at = 0;
  };

  // Creates the temporary file beside `file`; throws std::runtime_error naming the file and the
  // reason.
  explicit TraceWriter(const std::filesystem::path& file, TraceLimits limits = {});
  // Closes (renames into place) a trace that was not closed or abandoned.
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The same (group, name) gives the same track; tracks appear in the order first asked for.
  Track track(std::string_view group, std::string_view name);

  // Whether an event spanning [start, end) would be written (inside the window, below the cap):
  // callers skip building the arguments of events that would not.
  bool wants(Tick start, Tick end) const;
  bool full() const { return truncation_.has_value(); }

  // A slice [start, start + duration) on a track. `args` (a JSON object) shows when clicked.
  void complete(Track track, std::string_view name, Tick start, Tick duration,
                std::string_view category = "sim", const nlohmann::json& args = nullptr);
  // The same with `args_json` already a JSON object's text, for events written by the million.
  void complete_json_args(Track track, std::string_view name, Tick start, Tick duration,
                          std::string_view category, std::string_view args_json);
  void instant(Track track, std::string_view name, Tick at, std::string_view category = "sim");
  // A counter track under `group`, e.g. a link's utilisation over time.
  void counter(std::string_view group, std::string_view name, Tick at, double value);

  // Flow arrows between slices (phases "s", "t" and "f"): flow_start binds flow `id` to the
  // slice of `track` that encloses `at`; each flow_step continues it to the slice enclosing `at`
  // on another track, in time order; flow_end ends it at the slice enclosing `at`. Write a
  // flow_start after the slice it binds to, at a time inside it, each step at a time later than
  // the start and the end after them all.
  std::uint64_t new_flow_id() { return ++last_flow_id_; }
  void flow_start(Track track, std::uint64_t id, Tick at);
  void flow_step(Track track, std::uint64_t id, Tick at);
  void flow_end(Track track, std::uint64_t id, Tick at);

  // Ends the JSON document, closes the file and renames it over the target; throws if anything
  // failed to write.
  void close();
  // Removes the temporary file; the target is left as it was.
  void abandon() noexcept;

  std::uint64_t events_written() const { return events_; }
  std::uint64_t bytes_written() const { return bytes_; }
  const std::optional<Truncation>& truncation() const { return truncation_; }
  const TraceLimits& limits() const { return limits_; }
  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

  // Unlinks the temporary file of every trace of this process that is neither closed nor
  // abandoned. Async-signal-safe: for a SIGINT handler, so an interrupted run leaves nothing
  // behind.
  static void remove_unfinished() noexcept;

 private:
  void flow_event(char phase, Track track, std::uint64_t id, Tick at);  // "s", "t" or "f"
  std::uint32_t group_pid(std::string_view group);
  // Writes one event (without the separator); false when a cap is reached at simulated time
  // `at`, after which nothing more is written.
  bool emit(std::string_view event, Tick at);
  void write(std::string_view text);
  void flush();
  void finish_file();

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int registry_slot_ = -1;
  TraceLimits limits_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  std::map<std::string, std::uint32_t, std::less<>> groups_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t, std::less<>> tracks_;
  std::uint32_t next_tid_ = 1;
  std::uint64_t events_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t last_flow_id_ = 0;
  std::optional<Truncation> truncation_;
  bool write_failed_ = false;
};

}  // namespace cubesim::emu
