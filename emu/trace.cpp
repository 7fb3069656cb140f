#include "emu/trace.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "emu/log.hpp"

namespace cubesim::emu {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

std::string quoted(std::string_view s) {
  return nlohmann::json(std::string(s)).dump();
}

// Picoseconds as exact microseconds: 1234567 ps -> "1.234567".
std::string micros(Tick t) {
  return fmt::format("{}.{:06}", t / kPsPerUs, t % kPsPerUs);
}

}  // namespace

TraceWriter::TraceWriter(const std::filesystem::path& file) : path_(file) {
  file_ = std::fopen(file.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot write trace file '{}': {}", file.string(), std::strerror(errno)));
  }
  buffer_.reserve(kFlushBytes + 4096);
  buffer_ += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    log().error("{}", e.what());
  }
}

void TraceWriter::write(std::string_view text) {
  buffer_ += text;
  if (buffer_.size() >= kFlushBytes) {
    std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    buffer_.clear();
  }
}

void TraceWriter::begin_event() {
  if (events_++ > 0) buffer_ += ",\n";
}

std::uint32_t TraceWriter::group_pid(std::string_view group) {
  if (auto it = groups_.find(group); it != groups_.end()) return it->second;
  const auto pid = static_cast<std::uint32_t>(groups_.size() + 1);
  groups_.emplace(std::string(group), pid);
  begin_event();
  write(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                    pid, quoted(group)));
  begin_event();
  write(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,)"
                    R"("args":{{"sort_index":{}}}}})",
                    pid, pid));
  return pid;
}

TraceWriter::Track TraceWriter::track(std::string_view group, std::string_view name) {
  const std::uint32_t pid = group_pid(group);
  auto key = std::make_pair(pid, std::string(name));
  if (auto it = tracks_.find(key); it != tracks_.end()) return {pid, it->second};
  const std::uint32_t tid = next_tid_++;
  tracks_.emplace(std::move(key), tid);
  begin_event();
  write(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                    pid, tid, quoted(name)));
  begin_event();
  write(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},)"
                    R"("args":{{"sort_index":{}}}}})",
                    pid, tid, tid));
  return {pid, tid};
}

void TraceWriter::complete(Track track, std::string_view name, Tick start, Tick duration,
                           std::string_view category, const nlohmann::json& args) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  begin_event();
  write(fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":{})",
                    track.pid, track.tid, micros(start), micros(duration), quoted(name),
                    quoted(category)));
  if (!args.is_null()) write(fmt::format(R"(,"args":{})", args.dump()));
  write("}");
}

void TraceWriter::instant(Track track, std::string_view name, Tick at, std::string_view category) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  begin_event();
  write(fmt::format(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":{}}})",
                    track.pid, track.tid, micros(at), quoted(name), quoted(category)));
}

void TraceWriter::counter(std::string_view group, std::string_view name, Tick at, double value) {
  if (file_ == nullptr) throw std::logic_error("trace '" + path_.string() + "' is closed");
  const std::uint32_t pid = group_pid(group);
  begin_event();
  write(fmt::format(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"value":{}}}}})", pid,
                    micros(at), quoted(name), nlohmann::json(value).dump()));
}

void TraceWriter::close() {
  if (file_ == nullptr) return;
  buffer_ += "\n]}\n";
  const bool wrote = std::fwrite(buffer_.data(), 1, buffer_.size(), file_) == buffer_.size();
  buffer_.clear();
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!(wrote && flushed && closed)) {
    throw std::runtime_error(
        fmt::format("writing trace file '{}' failed (disk full?)", path_.string()));
  }
}

}  // namespace cubesim::emu
