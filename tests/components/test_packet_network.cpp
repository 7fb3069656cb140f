// Transfer timing in the packet model. Every expectation is computed from the configuration (hop
// counts x latencies + the serialisation of the narrowest link), never copied from a run.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "components/network/network.hpp"
#include "components/system/system.hpp"
#include "emu/errors.hpp"
#include "emu/scheduler.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;

using testing::Bench;
using testing::run_one;

constexpr std::uint64_t kSmall = 256;

TEST(PacketNetwork, ReadFromHbmOnTheSameNodeCostsAccessLatencyPlusSerialisation) {
  Bench b(testing::small_config());
  // PE 0 sits on node (0,0), where the HBM controller is; channel 0 holds offset 0.
  const Tick t = run_one(b, [&](auto done) { b.network().read(0, b.addr(0, 0), kSmall, done); });
  const auto& c = b.cfg();
  const Tick channel_ser =
      b.ser(Bandwidth::from_bytes_per_s(c.cube.hbm.bandwidth.bytes_per_s() / c.cube.hbm.channels),
            kSmall);
  const Tick link_ser = b.ser(c.cube.noc.link_bandwidth, kSmall);
  EXPECT_EQ(t, c.cube.hbm.latency + std::max(channel_ser, link_ser));
}

TEST(PacketNetwork, ReadAndWriteOverKMeshHopsAddHopLatencyEachWay) {
  Bench b(testing::small_config());
  const auto& c = b.cfg();
  const std::uint32_t pe = 15;  // node (3,3): six hops from the controller at (0,0)
  const std::uint32_t hops = b.sys.topology().mesh_hops(pe, 0);
  ASSERT_EQ(hops, 6u);
  const Tick ser = b.ser(c.cube.noc.link_bandwidth, kSmall);  // channel and link: same rate here
  const Tick read =
      run_one(b, [&](auto done) { b.network().read(pe, b.addr(0, 0), kSmall, done); });
  EXPECT_EQ(read, 2 * hops * c.cube.noc.hop_latency + c.cube.hbm.latency + ser);
  Bench w(testing::small_config());
  const Tick write =
      run_one(w, [&](auto done) { w.network().write(pe, w.addr(0, 0), kSmall, done); });
  // The write lands, then its response (16 bytes) comes back the same hops.
  EXPECT_EQ(write, 2 * hops * c.cube.noc.hop_latency + c.cube.hbm.latency + ser +
                       b.ser(c.cube.noc.link_bandwidth, c.cube.noc.response_bytes));
}

TEST(PacketNetwork, PeToPeOverKMeshHops) {
  Bench b(testing::small_config());
  const auto& c = b.cfg();
  const Tick t = run_one(b, [&](auto done) { b.network().send(0, 15, kSmall, done); });
  EXPECT_EQ(t, 6 * c.cube.noc.hop_latency + b.ser(c.cube.noc.link_bandwidth, kSmall));
}

TEST(PacketNetwork, ReadFromAnotherCubeCrossesUcieBothWays) {
  Bench b(testing::small_config(1, 2));
  const auto& c = b.cfg();
  // Cube 0's UCIe port to cube 1 is ucie_nodes[0] = (3,0); so is cube 1's port to cube 0.
  // Request: (0,0)->(3,0) in cube 0, UCIe, (3,0)->(0,0) in cube 1; the data comes back the same
  // way.
  const Tick one_way = 6 * c.cube.noc.hop_latency + c.ucie.latency;
  const Tick t = run_one(b, [&](auto done) { b.network().read(0, b.addr(1, 0), kSmall, done); });
  EXPECT_EQ(t, 2 * one_way + c.cube.hbm.latency + b.ser(c.ucie.bandwidth, kSmall));
}

TEST(PacketNetwork, ReadFromAnotherSipCrossesTheInterSipLink) {
  Bench b(testing::small_config(2, 2));
  const auto& c = b.cfg();
  // PE 0 of SIP 0 is on the inter-SIP port node of the port cube; in SIP 1 the data lives on
  // cube 1, one UCIe hop from the port cube: 3 mesh hops to the UCIe port, 3 back to (0,0).
  const std::uint32_t sip1_cube1 = b.sys.address_map().global_cube({1, 1});
  const Tick one_way = c.inter_sip.latency + 6 * c.cube.noc.hop_latency + c.ucie.latency;
  const Tick t =
      run_one(b, [&](auto done) { b.network().read(0, b.addr(sip1_cube1, 0), kSmall, done); });
  EXPECT_EQ(t, 2 * one_way + c.cube.hbm.latency + b.ser(c.inter_sip.bandwidth, kSmall));
}

TEST(PacketNetwork, LargeTransferOnAnIdlePathTakesLatencyPlusBytesOverBottleneck) {
  Bench b(testing::small_config());
  const auto& c = b.cfg();
  const std::uint64_t bytes = 64ull << 20;
  const Tick t = run_one(b, [&](auto done) { b.network().read(15, b.addr(0, 0), bytes, done); });
  // Eight channels of 64 GB/s feed one 64 GB/s mesh path: the mesh link is the bottleneck.
  const Tick latency = 2 * 6 * c.cube.noc.hop_latency + c.cube.hbm.latency;
  const double expected = static_cast<double>(latency + b.ser(c.cube.noc.link_bandwidth, bytes));
  EXPECT_NEAR(static_cast<double>(t), expected, expected * 1e-3);
}

TEST(PacketNetwork, TwoFlowsSharingALinkTakeTwiceAsLongAsOne) {
  const std::uint64_t bytes = 16ull << 20;
  Bench alone(testing::small_config());
  const Tick one = run_one(alone, [&](auto done) { alone.network().send(0, 3, bytes, done); });
  Bench shared(testing::small_config());
  Tick a = 0, c = 0;
  shared.network().send(0, 3, bytes, [&] { a = shared.sched.now(); });  // (0,0) -> (3,0)
  shared.network().send(1, 3, bytes, [&] { c = shared.sched.now(); });  // (1,0) -> (3,0)
  shared.sched.run();
  const double both = static_cast<double>(std::max(a, c));
  EXPECT_NEAR(both, 2.0 * static_cast<double>(one), 0.01 * 2.0 * static_cast<double>(one));
}

TEST(PacketNetwork, FlowsOnDisjointLinksDoNotSlowEachOther) {
  const std::uint64_t bytes = 16ull << 20;
  Bench alone(testing::small_config());
  const Tick one = run_one(alone, [&](auto done) { alone.network().send(0, 1, bytes, done); });
  Bench two(testing::small_config());
  Tick a = 0, c = 0;
  two.network().send(0, 1, bytes, [&] { a = two.sched.now(); });
  two.network().send(2, 3, bytes, [&] { c = two.sched.now(); });
  two.sched.run();
  EXPECT_EQ(a, one);
  EXPECT_EQ(c, one);
}

TEST(PacketNetwork, LinkStatisticsCountBytesAndBusyTime) {
  Bench b(testing::small_config());
  const auto& c = b.cfg();
  const std::uint64_t bytes = 1 << 20;
  const Tick t = run_one(b, [&](auto done) { b.network().send(0, 1, bytes, done); });
  const LinkStats stats = b.network().link_stats(t);
  EXPECT_EQ(stats.bytes(LinkKind::noc), bytes);  // one mesh hop
  EXPECT_EQ(stats.bytes(LinkKind::inject), bytes);
  EXPECT_EQ(stats.packets, bytes / c.cube.noc.packet_bytes);
  const LinkRecord* link = stats.link("sip0.cube0.noc.(0,0)->(1,0).east");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->busy_ps, b.ser(c.cube.noc.link_bandwidth, bytes));
  EXPECT_NE(stats.busiest_link(), nullptr);
}

TEST(PacketNetwork, OutOfRangeTransferNamesTheAddress) {
  Bench b(testing::small_config());
  EXPECT_THAT([&] { b.network().read(0, 0x42, 16, [] {}); },
              ::testing::ThrowsMessage<AddressError>(::testing::HasSubstr("0x42")));
}

// Runs to the end and returns the message of the emu::TimeOverflow that stopped the run.
std::string time_overflow_of(Bench& b) {
  try {
    b.sched.run();
  } catch (const emu::CallbackError& e) {
    try {
      std::rethrow_exception(e.cause());
    } catch (const emu::TimeOverflow& overflow) {
      return overflow.what();
    } catch (const std::exception& other) {
      return std::string("not a TimeOverflow: ") + other.what();
    }
  }
  return "the run ended without an error at " + emu::format_time(b.sched.now());
}

// At 1 B/s (a spec's 1e-9 GB/s) simulated time holds floor(kTickMax / 1e12) bytes of one link's
// traffic; one byte more cannot be carried before the end of time.
constexpr std::uint64_t kBytesPastTheEndOfTimeAtOneBytePerSecond =
    emu::kTickMax / emu::kPsPerSecond + 1;

TEST(PacketNetwork, UcieTrafficPastTheEndOfTimeIsAnErrorNamingTheLinkAndTheSpecField) {
  SystemConfig c = testing::small_config(1, 2);
  c.ucie.bandwidth = Bandwidth::from_bytes_per_s(1);
  Bench b(c);
  // PE 0 of cube 1: every byte crosses the UCIe link cube0->cube1.
  b.network().send(0, c.cube.pes, kBytesPastTheEndOfTimeAtOneBytePerSecond, [] {});
  const std::string what = time_overflow_of(b);
  EXPECT_THAT(what, ::testing::HasSubstr(fmt::format(
                        "bytes over system.ucie.bandwidth_GBps = {} overflows simulated time "
                        "(2^64 ps = 213 days)",
                        1e-9)));
  EXPECT_THAT(what, ::testing::HasSubstr("link sip0.ucie.cube0->cube1"));
  EXPECT_THAT(what, ::testing::HasSubstr("Raise system.ucie.bandwidth_GBps"));
}

TEST(PacketNetwork, NocTrafficPastTheEndOfTimeIsAnErrorNamingTheSpecFieldNotThePast) {
  SystemConfig c = testing::small_config(1, 1);
  c.cube.noc.link_bandwidth = Bandwidth::from_bytes_per_s(1);
  Bench b(c);
  b.network().send(0, 1, kBytesPastTheEndOfTimeAtOneBytePerSecond, [] {});
  const std::string what = time_overflow_of(b);
  EXPECT_THAT(what,
              ::testing::HasSubstr(fmt::format("system.cube.noc.link_bandwidth_GBps = {}", 1e-9)));
  EXPECT_THAT(what, ::testing::HasSubstr("simulated time (2^64 ps = 213 days)"));
  EXPECT_THAT(what, ::testing::Not(::testing::HasSubstr("lies in the past")));
}

TEST(PacketNetwork, IdenticalRunsGiveIdenticalTimes) {
  const SystemConfig c = testing::small_config(1, 2);
  EXPECT_EQ(testing::reads_across_cubes(c), testing::reads_across_cubes(c));
}

}  // namespace
}  // namespace cubesim::components
