#include "emu/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <stdexcept>
#include <string>

namespace cubesim::emu {
namespace {

thread_local const Tick* t_clock = nullptr;

class SimTimeFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text = t_clock ? format_time(*t_clock) : std::string("-");
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SimTimeFlag>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<SimTimeFlag>('*').set_pattern("[cubesim %^%l%$] [sim %*] %v");
  return f;
}

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("cubesim", sink);
    l->set_formatter(make_log_formatter());
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return *logger;
}

void set_log_level(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str maps anything unknown to "off"; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && level != "off") {
    throw std::invalid_argument("unknown log level '" + std::string(level) +
                                "': use trace, debug, info, warn, error, critical or off");
  }
  log().set_level(parsed);
}

const Tick* log_clock() {
  return t_clock;
}

LogClockScope::LogClockScope(const Tick* clock) : previous_(t_clock) {
  t_clock = clock;
}
LogClockScope::~LogClockScope() {
  t_clock = previous_;
}

}  // namespace cubesim::emu
