#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "emu/log.hpp"
#include "emu/scheduler.hpp"

using namespace cubesim::emu;

namespace {
// Captures what the cubesim logger prints, with the real formatter.
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink =
      std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  std::vector<spdlog::sink_ptr> saved = log().sinks();
  CapturedLog() {
    sink->set_formatter(make_log_formatter());
    log().sinks() = {sink};
  }
  ~CapturedLog() {
    log().sinks() = saved;
    log().set_level(spdlog::level::warn);
  }
};
}  // namespace

TEST(Log, QuietByDefault) {
  CapturedLog cap;
  log().info("routine detail");
  log().warn("something odd");
  EXPECT_EQ(cap.out.str().find("routine detail"), std::string::npos);
  EXPECT_NE(cap.out.str().find("something odd"), std::string::npos);
}

TEST(Log, LinesCarryTheSimulatedTimeDuringARun) {
  CapturedLog cap;
  set_log_level("info");
  Scheduler s;
  s.spawn("p", [&] {
    s.wait_for(ns(42));
    log().info("packet arrived");
  });
  s.run();
  log().info("after the run");
  const std::string text = cap.out.str();
  EXPECT_NE(text.find("[sim 42 ns] packet arrived"), std::string::npos) << text;
  EXPECT_NE(text.find("[sim -] after the run"), std::string::npos) << text;
}

TEST(Log, UnknownLevelIsRejected) {
  EXPECT_THROW(set_log_level("verbose"), std::invalid_argument);
  EXPECT_NO_THROW(set_log_level("off"));
  set_log_level("warn");
}
