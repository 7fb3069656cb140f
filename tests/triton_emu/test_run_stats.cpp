// run_report: a launch's RunStats as the report's JSON, key by key.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "triton_emu/launch/run_stats.hpp"

namespace cubesim {
namespace {

using components::LinkKind;
using nlohmann::json;

std::set<std::string> keys(const json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

// 1 SIP x 2 cubes x 4 PEs; two PEs ran over 2 us; two links carried traffic.
RunStats small_run() {
  RunStats r;
  r.sips = 1;
  r.cubes_per_sip = 2;
  r.pes_per_cube = 4;
  r.grid = {2, 1, 1};
  r.timing_only = false;
  r.network_model = components::NetworkModel::flow;
  r.backend = "cpu";
  r.sim_time_ps = 2'000'000;
  r.events = 300;
  r.wall_seconds = 0.5;
  r.dispatch = "round_robin";
  r.programs = 5;
  r.waves = 3;
  // Their FLOPs and messages make the launch's totals.
  r.add_pe("sip0.cube0.pe0", {.finish_ps = 2'000'000,
                              .vector_busy_ps = 10,
                              .gemm_busy_ps = 1'500'000,
                              .memory_wait_ps = 400'000,
                              .load_wait_ps = 300'000,
                              .store_wait_ps = 90'000,
                              .atomic_wait_ps = 10'000,
                              .gemm_wait_ps = 90,
                              .send_wait_ps = 30,
                              .recv_wait_ps = 70,
                              .dispatch_wait_ps = 20,
                              .barrier_wait_ps = 40,
                              .programs = 3,
                              .flops = 4'000'000,
                              .bytes_loaded = 8192,
                              .bytes_stored = 1024,
                              .messages_sent = 3,
                              .bytes_sent = 3072,
                              .messages_received = 2,
                              .bytes_received = 512,
                              .sram_peak_bytes = 65536});
  r.add_pe("sip0.cube0.pe1", {.finish_ps = 1'000'000, .flops = 2'000'000});
  components::LinkStats& n = r.network;
  n.elapsed_ps = r.sim_time_ps;
  n.transfers = 3;
  n.packets = 7;
  n.packet_hops = 21;
  n.bytes_by_kind[static_cast<std::size_t>(LinkKind::hbm_channel)] = 8192;
  n.bytes_by_kind[static_cast<std::size_t>(LinkKind::noc)] = 4096;
  n.bytes_by_kind[static_cast<std::size_t>(LinkKind::ucie)] = 2048;
  n.bytes_by_kind[static_cast<std::size_t>(LinkKind::inter_sip)] = 0;
  n.bytes_by_kind[static_cast<std::size_t>(LinkKind::inject)] = 99;  // not in the report
  n.links = {{.name = "sip0.cube0.hbm.ch0",
              .kind = LinkKind::hbm_channel,
              .bytes = 8192,
              .packets = 2,
              .busy_ps = 500'000,
              .credit_wait_ps = 0},
             {.name = "sip0.ucie.cube0->cube1.0",
              .kind = LinkKind::ucie,
              .bytes = 2048,
              .packets = 1,
              .busy_ps = 1'500'000,
              .credit_wait_ps = 250}};
  n.busiest = 1;
  return r;
}

TEST(RunReport, HasTheSimulationsKeys) {
  const json j = run_report(small_run());
  EXPECT_EQ(keys(j), (std::set<std::string>{"sim_time_ps", "system", "grid", "launch", "stats",
                                            "wall_seconds", "events_per_second", "timing_only",
                                            "network", "backend"}));
  EXPECT_EQ(keys(j["stats"]),
            (std::set<std::string>{"flops", "flops_per_second", "hbm_bytes", "noc_bytes",
                                   "ucie_bytes", "inter_sip_bytes", "events", "packets", "messages",
                                   "pes", "links", "busiest_link"}));
  EXPECT_EQ(j["stats"]["messages"],
            (json{{"messages", 3}, {"bytes", 3072}, {"send_wait_ps", 30}, {"recv_wait_ps", 70}}));
}

TEST(RunReport, SaysWhatRanOnWhat) {
  const json j = run_report(small_run());
  EXPECT_EQ(j["sim_time_ps"], 2'000'000u);
  EXPECT_EQ(j["system"],
            (json{{"sips", 1}, {"cubes_per_sip", 2}, {"pes_per_cube", 4}, {"total_pes", 8}}));
  EXPECT_EQ(j["grid"], (json{2, 1, 1}));
  EXPECT_EQ(j["launch"], (json{{"dispatch", "round_robin"}, {"programs", 5}, {"waves", 3}}));
  EXPECT_EQ(j["timing_only"], false);
  EXPECT_EQ(j["network"], "flow");
  EXPECT_EQ(j["backend"], "cpu");
}

TEST(RunReport, RatesComeFromTheTotals) {
  const json j = run_report(small_run());
  EXPECT_DOUBLE_EQ(j["stats"]["flops_per_second"].get<double>(), 3e12);  // 6e6 over 2 us
  EXPECT_DOUBLE_EQ(j["wall_seconds"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["events_per_second"].get<double>(), 600.0);
  RunStats idle;
  const json none = run_report(idle);
  EXPECT_EQ(none["stats"]["flops_per_second"].get<double>(), 0.0);
  EXPECT_EQ(none["events_per_second"].get<double>(), 0.0);
}

TEST(RunReport, BytesByKindOfLinkAndPackets) {
  const json s = run_report(small_run())["stats"];
  EXPECT_EQ(s["hbm_bytes"], 8192u);
  EXPECT_EQ(s["noc_bytes"], 4096u);
  EXPECT_EQ(s["ucie_bytes"], 2048u);
  EXPECT_EQ(s["inter_sip_bytes"], 0u);
  EXPECT_EQ(s["packets"], 7u);
  EXPECT_EQ(s["flops"], 6'000'000u);
  EXPECT_EQ(s["events"], 300u);
}

TEST(RunStats, AddPeAddsItsFlopsAndMessagesToTheLaunchTotals) {
  RunStats r;
  r.add_pe("a", {.send_wait_ps = 5,
                 .recv_wait_ps = 7,
                 .flops = 11,
                 .messages_sent = 2,
                 .bytes_sent = 96,
                 .messages_received = 1,
                 .bytes_received = 48});
  r.add_pe("b", {.send_wait_ps = 13,
                 .recv_wait_ps = 17,
                 .flops = 19,
                 .messages_sent = 3,
                 .bytes_sent = 200,
                 .messages_received = 4,
                 .bytes_received = 248});
  EXPECT_EQ(r.flops, 30u);
  EXPECT_EQ(r.messages.messages, 5u);  // sent: each message once
  EXPECT_EQ(r.messages.bytes, 296u);
  EXPECT_EQ(r.messages.send_wait_ps, 18u);
  EXPECT_EQ(r.messages.recv_wait_ps, 24u);
  ASSERT_EQ(r.pes.size(), 2u);
  EXPECT_EQ(r.pes[1].pe, "b");
  EXPECT_EQ(r.pes[1].bytes_received, 248u);
}

// Every statistic of the table, under its key, and the PE's name: nothing else.
TEST(RunReport, PerPeObjectHoldsEveryStatisticOfTheTable) {
  components::PeStatistics values;
  std::uint64_t v = 1000;
  for (const components::PeStatistic& s : components::kPeStatistics) values.*s.member = v += 37;
  RunStats r;
  r.add_pe("sip0.cube1.pe2", values);
  const json pe = run_report(r)["stats"]["pes"][0];
  EXPECT_EQ(pe.size(), std::size(components::kPeStatistics) + 1);
  EXPECT_EQ(pe["pe"], "sip0.cube1.pe2");
  for (const components::PeStatistic& s : components::kPeStatistics)
    EXPECT_EQ(pe[std::string(s.name)], values.*s.member) << s.name;
}

TEST(RunReport, PerPeFigures) {
  const json pes = run_report(small_run())["stats"]["pes"];
  ASSERT_EQ(pes.size(), 2u);
  EXPECT_EQ(pes[0], (json{{"pe", "sip0.cube0.pe0"},
                          {"finish_ps", 2'000'000},
                          {"vector_busy_ps", 10},
                          {"gemm_busy_ps", 1'500'000},
                          {"memory_wait_ps", 400'000},
                          {"gemm_wait_ps", 90},
                          {"load_wait_ps", 300'000},
                          {"store_wait_ps", 90'000},
                          {"atomic_wait_ps", 10'000},
                          {"barrier_wait_ps", 40},
                          {"send_wait_ps", 30},
                          {"dispatch_wait_ps", 20},
                          {"programs", 3},
                          {"recv_wait_ps", 70},
                          {"flops", 4'000'000},
                          {"bytes_loaded", 8192},
                          {"bytes_stored", 1024},
                          {"messages_sent", 3},
                          {"bytes_sent", 3072},
                          {"messages_received", 2},
                          {"bytes_received", 512},
                          {"sram_peak_bytes", 65536},
                          {"vector_elements", 0},
                          {"issue_busy_ps", 0}}));
  EXPECT_EQ(pes[1]["pe"], "sip0.cube0.pe1");
  EXPECT_EQ(pes[1]["flops"], 2'000'000u);
}

TEST(RunReport, LinksByNameWithUtilisationOverTheRun) {
  const json s = run_report(small_run())["stats"];
  EXPECT_EQ(keys(s["links"]),
            (std::set<std::string>{"sip0.cube0.hbm.ch0", "sip0.ucie.cube0->cube1.0"}));
  const json& ucie = s["links"]["sip0.ucie.cube0->cube1.0"];
  EXPECT_EQ(keys(ucie), (std::set<std::string>{"kind", "bytes", "packets", "busy_ps",
                                               "utilisation"}));  // no credit_wait_ps
  EXPECT_EQ(ucie["kind"], "ucie");
  EXPECT_EQ(ucie["bytes"], 2048u);
  EXPECT_EQ(ucie["packets"], 1u);
  EXPECT_EQ(ucie["busy_ps"], 1'500'000u);
  EXPECT_DOUBLE_EQ(ucie["utilisation"].get<double>(), 0.75);
  EXPECT_EQ(s["links"]["sip0.cube0.hbm.ch0"]["kind"], "hbm");
  EXPECT_DOUBLE_EQ(s["links"]["sip0.cube0.hbm.ch0"]["utilisation"].get<double>(), 0.25);
  EXPECT_EQ(s["busiest_link"]["name"], "sip0.ucie.cube0->cube1.0");
  EXPECT_EQ(s["busiest_link"]["busy_ps"], 1'500'000u);
  EXPECT_DOUBLE_EQ(s["busiest_link"]["utilisation"].get<double>(), 0.75);
}

TEST(RunReport, CreditWaitsOnlyWithBoundedBuffers) {
  RunStats r = small_run();
  r.network.bounded_buffers = true;
  r.network.most_held_back = 1;
  const json s = run_report(r)["stats"];
  EXPECT_EQ(s["links"]["sip0.ucie.cube0->cube1.0"]["credit_wait_ps"], 250u);
  EXPECT_EQ(s["links"]["sip0.cube0.hbm.ch0"]["credit_wait_ps"], 0u);
  EXPECT_EQ(s["most_held_back"],
            (json{{"name", "sip0.ucie.cube0->cube1.0"}, {"credit_wait_ps", 250}}));
}

TEST(RunReport, NoTrafficHasAnEmptyLinkTableAndNoBusiestLink) {
  const json s = run_report(RunStats{})["stats"];
  EXPECT_EQ(s["links"], json::object());
  EXPECT_FALSE(s.contains("busiest_link"));
  EXPECT_FALSE(s.contains("most_held_back"));
  EXPECT_EQ(s["pes"], json::array());
}

TEST(RunReport, SeveralLaunchesKeepEachLaunchsReport) {
  RunStats total = small_run();
  RunStats first = small_run();
  first.sim_time_ps = 1'000'000;
  first.network.links.clear();
  first.network.busiest.reset();
  total.launches = {first, small_run()};
  const json j = run_report(total);
  ASSERT_EQ(j["launches"].size(), 2u);
  EXPECT_EQ(j["launches"][0], run_report(first));
  EXPECT_EQ(j["launches"][1], run_report(small_run()));
  EXPECT_FALSE(run_report(small_run()).contains("launches"));
}

}  // namespace
}  // namespace cubesim
