// The harness helpers' arithmetic that the kernels' own tests do not pin down: sum_runs.

#include <gtest/gtest.h>

#include "kernels/harness/sum_runs.hpp"

namespace cubesim::kernels {
namespace {

using components::LinkKind;

RunResult launch_of(emu::Tick time, std::uint64_t flops, std::uint64_t hbm_bytes,
                    std::uint64_t packets, const std::string& link) {
  RunResult r;
  RunStats& s = r.stats;
  s.sips = s.cubes_per_sip = s.pes_per_cube = 1;
  s.grid = {1, 1, 1};
  s.backend = "none";
  s.timing_only = true;
  s.sim_time_ps = time;
  s.flops = flops;
  s.events = 10;
  s.wall_seconds = 0.25;
  s.pes = {{{.finish_ps = time, .flops = flops}, "sip0.cube0.pe0"}};
  s.messages = {
      .messages = packets, .bytes = hbm_bytes, .send_wait_ps = time / 4, .recv_wait_ps = time / 2};
  s.network.elapsed_ps = time;
  s.network.packets = packets;
  s.network.bytes_by_kind[static_cast<std::size_t>(LinkKind::hbm_channel)] = hbm_bytes;
  s.network.links = {{.name = link,
                      .kind = LinkKind::hbm_channel,
                      .bytes = hbm_bytes,
                      .packets = packets,
                      .busy_ps = time / 2}};
  s.network.busiest = 0;
  r.sim_time_ps = time;
  r.report = run_report(s);
  return r;
}

TEST(SumRuns, TotalsAddUpAndTheRestIsTheLastLaunchs) {
  const RunResult a = launch_of(1'000'000, 100, 4096, 1, "sip0.cube0.hbm.ch0");
  const RunResult b = launch_of(3'000'000, 300, 8192, 2, "sip0.cube0.hbm.ch1");
  const RunResult sum = sum_runs({a, b});
  const RunStats& s = sum.stats;
  EXPECT_EQ(sum.sim_time_ps, 4'000'000u);
  EXPECT_EQ(s.sim_time_ps, 4'000'000u);
  EXPECT_EQ(s.flops, 400u);
  EXPECT_EQ(s.events, 20u);
  EXPECT_DOUBLE_EQ(s.wall_seconds, 0.5);
  EXPECT_EQ(s.network.bytes(LinkKind::hbm_channel), 12288u);
  EXPECT_EQ(s.messages.messages, 3u);  // messages add up over launches
  EXPECT_EQ(s.messages.bytes, 12288u);
  EXPECT_EQ(s.messages.send_wait_ps, 1'000'000u);
  EXPECT_EQ(s.messages.recv_wait_ps, 2'000'000u);
  EXPECT_EQ(s.network.packets, 2u);  // the last launch's, as the per-link figures
  ASSERT_EQ(s.network.links.size(), 1u);
  EXPECT_EQ(s.network.links[0].name, "sip0.cube0.hbm.ch1");
  EXPECT_DOUBLE_EQ(s.network.utilisation(s.network.links[0]), 0.5);  // over its own launch
  ASSERT_EQ(s.launches.size(), 2u);
  EXPECT_EQ(sum.report, run_report(s));
  EXPECT_EQ(sum.report["launches"][0], a.report);
  EXPECT_EQ(sum.report["launches"][1], b.report);
  EXPECT_EQ(sum.report["stats"]["hbm_bytes"], 12288u);
  EXPECT_DOUBLE_EQ(sum.report["stats"]["flops_per_second"].get<double>(), 1e8);
}

TEST(SumRuns, OneLaunchIsItself) {
  const RunResult a = launch_of(1'000'000, 100, 4096, 1, "sip0.cube0.hbm.ch0");
  const RunResult one = sum_runs({a});
  EXPECT_EQ(one.report, a.report);
  EXPECT_TRUE(one.stats.launches.empty());
}

}  // namespace
}  // namespace cubesim::kernels
