// What --log-level info/debug/trace prints during a launch: a user debugging a kernel sees the
// launch, each program's start and end on its PE, faults and TL calls, with simulated time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cubesim/cubesim.hpp>
#include <sstream>

#include "emu/log.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink =
      std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  std::vector<spdlog::sink_ptr> saved = emu::log().sinks();
  explicit CapturedLog(const char* level) {
    sink->set_formatter(emu::make_log_formatter());
    emu::log().sinks() = {sink};
    emu::set_log_level(level);
  }
  ~CapturedLog() {
    emu::log().sinks() = saved;
    emu::set_log_level("warn");
  }
};

void kernel(tl::Context& tl, Ptr p) {
  const auto t = tl.load(p + tl.program_id(0) * 64, {16}, DType::f32);
  tl.barrier();
  if (tl.program_id(0) == 1) tl.fault("on purpose");
  tl.store(p + tl.program_id(0) * 64, t);
}

TEST(LaunchLog, DebugShowsEachProgramsStartEndAndFaultWithSimulatedTime) {
  CapturedLog cap("debug");
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  sim.set_kernel_name("mine");
  const Ptr p = sim.alloc(4096);
  EXPECT_THROW(sim.launch_on(Grid{.pes = 2, .cubes = 1}, kernel, p), KernelError);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, kernel, p);
  const std::string text = cap.out.str();
  EXPECT_THAT(text, AllOf(HasSubstr("launch 1 of 'mine': grid [2, 1, 1], 2 program(s)"),
                          HasSubstr("[sim 0 ps] program (0, 0, 0) starts on sip0.cube0.pe0"),
                          HasSubstr("program (1, 0, 0) on sip0.cube0.pe1 stops: on purpose"),
                          HasSubstr("launch 2 of 'mine'"),
                          HasSubstr("program (0, 0, 0) ends on sip0.cube0.pe0"),
                          HasSubstr("launch 2 done:")))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("load of 64 bytes")));  // TL calls are trace level
}

TEST(LaunchLog, TraceAddsEveryCallAndInfoOnlyTheLaunches) {
  {
    CapturedLog cap("trace");
    Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
    const Ptr p = sim.alloc(4096);
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, kernel, p);
    EXPECT_THAT(cap.out.str(), AllOf(HasSubstr("sip0.cube0.pe0: load of 64 bytes in 1 transfer"),
                                     HasSubstr("sip0.cube0.pe0: arrives at barrier 0"),
                                     HasSubstr("sip0.cube0.pe0: store of 64 bytes")));
  }
  CapturedLog cap("info");
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr p = sim.alloc(4096);
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, kernel, p);
  EXPECT_THAT(cap.out.str(), AllOf(HasSubstr("launch 1 done"), Not(HasSubstr("starts on"))));
}

}  // namespace
}  // namespace cubesim
