// A router's pipeline, its channels' turnaround and its inputs' crossbar ports in the packet
// model, and the pipeline in the flow model (system.cube.noc.router; docs/hardware-model.md,
// "Routers"). Expected times are derived from the configuration.
#include <gtest/gtest.h>

#include <cstdint>

#include "components/system/system.hpp"
#include "components/traffic/synthetic_traffic.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;
using testing::Bench;
using testing::run_one;

// One cube whose links move a 16 B packet in a 1 ns cycle, routers of a `cycles`-cycle pipeline
// at 1 GHz, and, when `vcs` is not 0, router buffers of 8 packets per channel with 1 ns credits.
SystemConfig pipelined(std::uint32_t cycles, std::uint32_t vcs) {
  SystemConfig c = testing::small_config(1, 1);
  c.cube.noc.link_bandwidth = Bandwidth::from_GBps(16);
  c.cube.noc.packet_bytes = 16;
  RouterTiming& r = c.cube.noc.router_timing;
  r.pipeline_cycles = cycles;
  r.pipeline = emu::ns(cycles);
  r.turnaround = cycles == 0 ? 0 : emu::ns(cycles - 1);
  if (vcs != 0)
    c.cube.noc.router = {std::uint64_t{8} * vcs * c.cube.noc.packet_bytes, vcs, emu::ns(1)};
  return c;
}

TEST(Router, ZeroLoadLatencyCountsThePipelineOncePerRouterCrossed) {
  // PE 0 -> PE 3 on the 4x4 mesh: three links east, so four routers (the source's included):
  // the injection port and each mesh link end in a pipeline.
  for (const std::uint32_t vcs : {0u, 2u}) {
    const SystemConfig c = pipelined(3, vcs);
    const Tick p = c.cube.noc.router_timing.pipeline, hop = c.cube.noc.hop_latency;
    const Tick ser = c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.packet_bytes);
    Bench packet(c);
    EXPECT_EQ(run_one(packet, [&](auto done) { packet.network().send(0, 3, 16, done); }),
              4 * p + 3 * hop + ser)
        << vcs << " VCs";
    Bench flow(c, {.timing_only = true, .network = NetworkModel::flow});
    EXPECT_EQ(run_one(flow, [&](auto done) { flow.network().send(0, 3, 16, done); }),
              4 * p + 3 * hop + ser)
        << vcs << " VCs";
  }
}

TEST(Router, AChannelOfSmallPacketsPassesOnePacketPerPipeline) {
  // PE 0 -> PE 1, one channel per input: each packet leaves a channel the turnaround (pipeline
  // less a cycle) after the one ahead of it left, a cycle after it crossed: one packet per
  // pipeline, whatever the links could carry. The first arrives after two pipelines (routers
  // 0 and 1), a hop and its serialisation.
  const SystemConfig c = pipelined(3, 1);
  const Tick p = c.cube.noc.router_timing.pipeline, hop = c.cube.noc.hop_latency;
  const Tick ser = c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.packet_bytes);
  const Tick every = std::max(p, ser + c.cube.noc.router_timing.turnaround);
  const std::uint64_t packets = 40;
  Bench b(c);
  EXPECT_EQ(run_one(b, [&](auto done) { b.network().send(0, 1, packets * 16, done); }),
            2 * p + hop + ser + (packets - 1) * every);
  // The flow model limits the stream to the same turn of its channel.
  Bench flow(c, {.timing_only = true, .network = NetworkModel::flow});
  EXPECT_EQ(run_one(flow, [&](auto done) { flow.network().send(0, 1, packets * 16, done); }),
            2 * p + hop + ser + (packets - 1) * every);
  // Without a pipeline the same stream runs at the links' rate.
  const SystemConfig plain = pipelined(0, 1);
  Bench q(plain);
  EXPECT_EQ(run_one(q, [&](auto done) { q.network().send(0, 1, packets * 16, done); }),
            plain.cube.noc.hop_latency + packets * ser);
}

TEST(Router, TwoChannelsOfAnInputShareItsCrossbarPort) {
  // Uniform traffic through routers of four channels: with input speedup 1 an input's channels
  // take its one crossbar port in turn, so the mesh saturates lower than with a port per
  // channel.
  const auto delivered = [](std::uint32_t speedup) {
    SystemConfig c = pipelined(0, 4);
    c.cube.noc.router_timing.input_speedup = speedup;
    emu::Scheduler sched;
    System sys(c, sched);
    TrafficOptions o;
    o.pattern = TrafficPattern::uniform;
    o.offered_load = 1.0;
    o.warmup = emu::ns(1000);
    o.measure = emu::ns(4000);
    return run_traffic(sched, sys.network(), o).delivered_fraction;
  };
  EXPECT_LT(delivered(1), delivered(4));
}

TEST(Router, AllocationPoliciesAllDeliverEverything) {
  // Every policy serves every waiting packet: a closed loop drains on all three.
  for (const RouterAllocation a :
       {RouterAllocation::fcfs, RouterAllocation::round_robin, RouterAllocation::age}) {
    SystemConfig c = pipelined(3, 2);
    c.cube.noc.router_timing.allocation = a;
    Bench b(c);
    std::uint32_t done_count = 0;
    for (std::uint32_t pe = 0; pe < c.cube.pes; ++pe)
      b.network().send(pe, (pe * 7 + 3) % c.cube.pes, 64 * 16, [&] { ++done_count; });
    b.sched.run();
    EXPECT_EQ(done_count, c.cube.pes) << router_allocations().name_of(a);
  }
}

}  // namespace
}  // namespace cubesim::components
