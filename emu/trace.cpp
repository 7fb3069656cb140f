#include "emu/trace.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "emu/log.hpp"

namespace cubesim::emu {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr std::string_view kHead = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
constexpr std::string_view kTail = "\n]}\n";
// Room kept under a byte cap for the event that says the trace stopped, and the tail.
constexpr std::uint64_t kStopReserve = 512;

std::string quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump();
}

// Picoseconds as exact microseconds: 1234567 ps -> "1.234567".
std::string micros(Tick t) {
  return fmt::format("{}.{:06}", t / kPsPerUs, t % kPsPerUs);
}

// The temporary files of open traces, for remove_unfinished() in a signal handler: fixed
// storage and lock-free flags, nothing a handler cannot touch. A slot is free (0), being filled
// (1) or live (2).
constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> g_temp_paths{};
std::array<std::atomic<int>, kSlots> g_slot_state{};

int register_temp(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temp_paths[i].data(), path.c_str(), path.size() + 1);
    g_slot_state[i].store(2);
    return static_cast<int>(i);
  }
  return -1;  // more traces open than slots: this one is not removed on a signal
}

void unregister_temp(int slot) {
  if (slot >= 0) g_slot_state[static_cast<std::size_t>(slot)].store(0);
}

}  // namespace

TraceWriter::TraceWriter(const std::filesystem::path& file, TraceLimits limits)
    : path_(file), limits_(limits) {
  static std::atomic<std::uint64_t> serial{0};
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : ".";
  temp_path_ = folder / fmt::format(".{}.tmp{}-{}", file.filename().string(), ::getpid(),
                                    serial.fetch_add(1));
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd >= 0) file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int err = errno;
    if (fd >= 0) {
      ::close(fd);
      ::unlink(temp_path_.c_str());
    }
    throw std::runtime_error(
        fmt::format("cannot write trace file '{}': {}", file.string(), std::strerror(err)));
  }
  registry_slot_ = register_temp(temp_path_.string());
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ += kHead;
  bytes_ = kHead.size();
}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    log().error("{}", e.what());
  }
}

void TraceWriter::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    write_failed_ = true;
  buffer_.clear();
}

void TraceWriter::write(std::string_view text) {
  buffer_ += text;
  if (buffer_.size() >= kFlushBytes) flush();
}

bool TraceWriter::wants(Tick start, Tick end) const {
  if (truncation_) return false;
  if (end == start) return start >= limits_.window_start && start < limits_.window_end;
  return start < limits_.window_end && end > limits_.window_start;
}

bool TraceWriter::emit(std::string_view event, Tick at) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  if (truncation_) return false;
  const std::uint64_t size = event.size() + 2;  // and the ",\n" before it
  const bool over_events = limits_.max_events != 0 && events_ + 1 > limits_.max_events;
  const bool over_bytes =
      limits_.max_bytes != 0 && bytes_ + size + kStopReserve + kTail.size() > limits_.max_bytes;
  if (over_events || over_bytes) {
    truncation_ = Truncation{over_bytes, over_bytes ? limits_.max_bytes : limits_.max_events, at};
    // Said in the trace too, where someone opening it will see it first: a global instant.
    const std::string stop = fmt::format(
        R"({{"ph":"i","s":"g","pid":0,"tid":0,"ts":{},"name":"trace stopped: {} reached",)"
        R"("cat":"cubesim","args":{{"limit":{}}}}})",
        micros(at), over_bytes ? "--trace-max-bytes" : "--trace-max-events", truncation_->limit);
    if (events_ > 0) write(",\n");
    write(stop);
    bytes_ += stop.size() + 2;
    return false;
  }
  if (events_++ > 0) write(",\n");
  write(event);
  bytes_ += size;
  return true;
}

std::uint32_t TraceWriter::group_pid(std::string_view group) {
  if (auto it = groups_.find(group); it != groups_.end()) return it->second;
  const auto pid = static_cast<std::uint32_t>(groups_.size() + 1);
  groups_.emplace(std::string(group), pid);
  emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                   pid, quoted(group)),
       0);
  emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,)"
                   R"("args":{{"sort_index":{}}}}})",
                   pid, pid),
       0);
  return pid;
}

TraceWriter::Track TraceWriter::track(std::string_view group, std::string_view name) {
  const std::uint32_t pid = group_pid(group);
  auto key = std::make_pair(pid, std::string(name));
  if (auto it = tracks_.find(key); it != tracks_.end()) return {pid, it->second};
  const std::uint32_t tid = next_tid_++;
  tracks_.emplace(std::move(key), tid);
  emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                   pid, tid, quoted(name)),
       0);
  emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},)"
                   R"("args":{{"sort_index":{}}}}})",
                   pid, tid, tid),
       0);
  return {pid, tid};
}

void TraceWriter::complete(Track track, std::string_view name, Tick start, Tick duration,
                           std::string_view category, const nlohmann::json& args) {
  complete_json_args(track, name, start, duration, category,
                     args.is_null() ? std::string() : args.dump());
}

void TraceWriter::complete_json_args(Track track, std::string_view name, Tick start, Tick duration,
                                     std::string_view category, std::string_view args_json) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  if (!wants(start, start + duration)) return;
  std::string event =
      fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":{})", track.pid,
                  track.tid, micros(start), micros(duration), quoted(name), quoted(category));
  if (!args_json.empty()) {
    event += R"(,"args":)";
    event += args_json;
  }
  event += '}';
  emit(event, start);
}

void TraceWriter::instant(Track track, std::string_view name, Tick at, std::string_view category) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  if (!wants(at, at)) return;
  emit(fmt::format(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})",
                   track.pid, track.tid, micros(at), quoted(name), quoted(category)),
       at);
}

void TraceWriter::counter(std::string_view group, std::string_view name, Tick at, double value) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  if (!wants(at, at)) return;
  const std::uint32_t pid = group_pid(group);
  emit(fmt::format(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"value":{}}}}})", pid,
                   micros(at), quoted(name), nlohmann::json(value).dump()),
       at);
}

// Perfetto matches flow events by (id, cat, name): every event of a flow uses the same two.
void TraceWriter::flow_event(char phase, Track track, std::uint64_t id, Tick at) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  if (!wants(at, at)) return;
  // "bp":"e" binds the end to the slice that encloses it, as the start and steps are bound.
  emit(fmt::format(R"({{"ph":"{}","pid":{},"tid":{},"ts":{},"id":{},"name":"transfer",)"
                   R"("cat":"flow"{}}})",
                   phase, track.pid, track.tid, micros(at), id, phase == 'f' ? R"(,"bp":"e")" : ""),
       at);
}

void TraceWriter::flow_start(Track track, std::uint64_t id, Tick at) {
  flow_event('s', track, id, at);
}

void TraceWriter::flow_step(Track track, std::uint64_t id, Tick at) {
  flow_event('t', track, id, at);
}

void TraceWriter::flow_end(Track track, std::uint64_t id, Tick at) {
  flow_event('f', track, id, at);
}

void TraceWriter::finish_file() {
  write(kTail);
  flush();
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!(flushed && closed)) write_failed_ = true;
}

void TraceWriter::close() {
  if (file_ == nullptr) return;
  finish_file();
  std::error_code ec;
  if (!write_failed_) std::filesystem::rename(temp_path_, path_, ec);
  if (write_failed_ || ec) {
    const std::string why = write_failed_ ? "writing it failed (disk full?)" : ec.message();
    std::filesystem::remove(temp_path_, ec);
    unregister_temp(registry_slot_);
    throw std::runtime_error(fmt::format("cannot write trace file '{}': {}", path_.string(), why));
  }
  unregister_temp(registry_slot_);
}

void TraceWriter::abandon() noexcept {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  ::unlink(temp_path_.c_str());
  unregister_temp(registry_slot_);
}

void TraceWriter::remove_unfinished() noexcept {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (g_slot_state[i].load() == 2) ::unlink(g_temp_paths[i].data());
}

}  // namespace cubesim::emu
