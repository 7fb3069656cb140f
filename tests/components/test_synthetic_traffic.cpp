// Synthetic traffic on a k x k mesh with XY routing (BookSim's patterns). The saturation bounds
// are derived by hand below for each pattern and checked against traffic_bound(), which routes
// every pair as the network does; the generator measures what was delivered, not what was
// offered. With unbounded buffers the network saturates at the bound itself; finite buffers
// (the last tests) saturate it below.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "components/system/system.hpp"
#include "components/traffic/synthetic_traffic.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

SystemConfig mesh_config(std::uint32_t k) {
  SystemConfig c = testing::small_config(1, 1, k);
  c.cube.noc.packet_bytes = 256;  // 4 ns on a 64 GB/s link; hop latency 2 ns
  return c;
}

TrafficOptions pattern(TrafficPattern p) {
  TrafficOptions o;
  o.pattern = p;
  return o;
}

// Per node, as a fraction of a link; no node injects or ejects more than one link.
//  - uniform (every node to every node, itself included, alike): the east link between columns
//    c and c + 1 of a row carries the c + 1 nodes left of it to the (k - c - 1) k nodes right
//    of it, each 1/k^2 of a node's rate: (c + 1)(k - c - 1)/k, largest in the middle:
//    floor(k/2) ceil(k/2) / k. So 4/k for even k.
//  - bit-complement ((x, y) -> (k-1-x, k-1-y)): every node crosses the middle of its row, so
//    the middle link carries floor(k/2) nodes' whole rate.
//  - transpose ((x, y) -> (y, x)): in row y the y nodes left of column y all go east to it, so
//    the last east link of row k - 1 carries k - 1 nodes.
//  - neighbor ((x, y) -> (x + 1 mod k, y)): every east link carries one node, and the last node
//    of a row goes back west over the row: one node per west link too.
//  - hotspot (a fraction h of every node's messages to node 0, the rest uniform): node 0's
//    ejection port takes n h + (1 - h) nodes' rate (n = k^2).
double uniform_bound(std::uint32_t k) {
  return std::min(1.0, double(k) / double((k / 2) * (k - k / 2)));
}
double bit_complement_bound(std::uint32_t k) {
  return std::min(1.0, 1.0 / double(k / 2));
}
double transpose_bound(std::uint32_t k) {
  return std::min(1.0, 1.0 / double(k - 1));
}
double hotspot_bound(std::uint32_t k, double h) {
  return 1.0 / (double(k) * k * h + (1 - h));
}

TEST(TrafficBound, EveryPatternsBoundIsItsHandDerivedChannelLoad) {
  for (const std::uint32_t k : {2u, 3u, 4u, 5u, 6u, 8u}) {
    const Topology t(mesh_config(k));
    EXPECT_NEAR(traffic_bound(t, pattern(TrafficPattern::uniform)).fraction_of_link,
                uniform_bound(k), 1e-12)
        << k;
    EXPECT_DOUBLE_EQ(traffic_bound(t, pattern(TrafficPattern::bit_complement)).fraction_of_link,
                     bit_complement_bound(k))
        << k;
    EXPECT_DOUBLE_EQ(traffic_bound(t, pattern(TrafficPattern::transpose)).fraction_of_link,
                     transpose_bound(k))
        << k;
    EXPECT_DOUBLE_EQ(traffic_bound(t, pattern(TrafficPattern::neighbor)).fraction_of_link, 1.0)
        << k;
    TrafficOptions hot = pattern(TrafficPattern::hotspot);
    hot.hotspot_fraction = 0.5;
    EXPECT_NEAR(traffic_bound(t, hot).fraction_of_link, hotspot_bound(k, 0.5), 1e-12) << k;
  }
  EXPECT_DOUBLE_EQ(uniform_bound(8), 0.5);
  EXPECT_EQ(
      traffic_bound(Topology(mesh_config(8)), pattern(TrafficPattern::bit_complement)).bottleneck,
      "sip0.cube0.noc.(3,0)->(4,0).east");
}

TEST(TrafficBound, TransposeNeedsOneSquareMesh) {
  SystemConfig c = testing::small_config(1, 2, 4);
  TrafficOptions o = pattern(TrafficPattern::transpose);
  o.scope = TrafficScope::sip;
  EXPECT_THROW((void)traffic_bound(Topology(c), o), std::invalid_argument);
  c.cube.noc.mesh_x = 8;
  c.cube.noc.mesh_y = 2;
  EXPECT_THROW((void)traffic_bound(Topology(c), pattern(TrafficPattern::transpose)),
               std::invalid_argument);
}

TrafficResult offer(std::uint32_t k, TrafficOptions o, double load_of_bound) {
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  o.offered_load = std::min(1.0, load_of_bound * traffic_bound(sys.topology(), o).fraction_of_link);
  o.warmup = emu::us(2);
  o.measure = emu::us(20);
  return run_traffic(sched, sys.network(), o);
}

TEST(SyntheticTraffic, AVanishingLoadEndsAndJudgesNothing) {
  // Geometric gaps far past the window (past any Tick at 1e-300) send nothing more; with no
  // source sending 100 messages, saturation is not judged rather than reported as "no".
  for (const double load : {1e-300, 1e-12}) {
    emu::Scheduler sched;
    System sys(mesh_config(4), sched);
    TrafficOptions o = pattern(TrafficPattern::uniform);
    o.offered_load = load;
    o.warmup = emu::us(1);
    o.measure = emu::us(10);
    const TrafficResult r = run_traffic(sched, sys.network(), o);
    EXPECT_EQ(r.messages, 0u) << load;
    EXPECT_FALSE(r.judged()) << load;
    EXPECT_FALSE(r.saturated()) << load;
  }
  const TrafficResult busy = offer(4, pattern(TrafficPattern::uniform), 0.5);
  EXPECT_TRUE(busy.judged());
  EXPECT_EQ(busy.judged_sources, 16u);
}

struct Case {
  TrafficPattern pattern;
  std::uint32_t k;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.pattern) << " " << c.k << "x" << c.k;
}

class SyntheticTraffic : public ::testing::TestWithParam<Case> {};

TEST_P(SyntheticTraffic, BelowSaturationTheNetworkDeliversWhatIsOffered) {
  const auto [p, k] = GetParam();
  for (const double load : {0.2, 0.6}) {
    const auto r = offer(k, pattern(p), load);
    ASSERT_GT(r.offered_fraction, 0);
    // Against what the sources generated in the window (a Bernoulli draw); the window's edges
    // (messages in flight at its start and end) differ by a few packets.
    EXPECT_NEAR(r.delivered_fraction, r.offered_fraction, 0.03 * r.offered_fraction)
        << "load " << load;
  }
}

// With unbounded buffers nothing backs up: a flow is held only by a full link on its route.
// So the network saturates at the bound: below it (90 %) every source gets what it sends
// delivered; above it (110 %) the flows over the busiest links fall behind.
TEST_P(SyntheticTraffic, SaturatesWithinTenPercentOfTheBound) {
  const auto [p, k] = GetParam();
  const auto below = offer(k, pattern(p), 0.9);
  EXPECT_FALSE(below.saturated()) << below.worst_source;
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  if (traffic_bound(sys.topology(), pattern(p)).fraction_of_link * 1.1 > 1.0)
    GTEST_SKIP() << "the bound is a full link: no node can offer more";
  const auto above = offer(k, pattern(p), 1.1);
  EXPECT_TRUE(above.saturated()) << above.worst_source;
}

// Where every flow crosses a busiest link (uniform, bit-complement), what the network delivers
// past saturation is the bound itself, within 5 %. (Elsewhere the flows that avoid the busiest
// links keep their rate, so the average rises above the bound.)
TEST(SyntheticTrafficOverload, DeliversTheBoundWhenEveryFlowMeetsTheBusiestLinks) {
  for (const auto& [p, k] :
       {std::pair{TrafficPattern::uniform, 8u}, std::pair{TrafficPattern::bit_complement, 4u},
        std::pair{TrafficPattern::bit_complement, 8u}}) {
    emu::Scheduler sched;
    System sys(mesh_config(k), sched);
    const double bound = traffic_bound(sys.topology(), pattern(p)).fraction_of_link;
    const auto r = offer(k, pattern(p), 1.3);
    EXPECT_GT(r.offered_fraction, 1.2 * bound) << to_string(p) << " " << k;
    EXPECT_LE(r.delivered_fraction, bound * 1.01) << to_string(p) << " " << k;
    EXPECT_GE(r.delivered_fraction, bound * 0.95) << to_string(p) << " " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, SyntheticTraffic,
    ::testing::Values(Case{TrafficPattern::uniform, 4}, Case{TrafficPattern::uniform, 8},
                      Case{TrafficPattern::bit_complement, 4}, Case{TrafficPattern::transpose, 4},
                      Case{TrafficPattern::neighbor, 4}, Case{TrafficPattern::hotspot, 4}),
    [](const auto& param_info) {
      std::string name = to_string(param_info.param.pattern);
      std::replace(name.begin(), name.end(), '-', '_');
      return name + "_" + std::to_string(param_info.param.k);
    });

// Closed loop keeps 32 messages outstanding per node: the network runs at its bound.
TEST(SyntheticTrafficClosedLoop, SaturatesWithinFivePercentBelowTheBound) {
  for (const std::uint32_t k : {4u, 8u}) {
    emu::Scheduler sched;
    System sys(mesh_config(k), sched);
    TrafficOptions o = pattern(TrafficPattern::uniform);
    o.window = 32;
    o.warmup = emu::us(2);
    o.measure = emu::us(10);
    const auto r = run_traffic(sched, sys.network(), o);
    EXPECT_LE(r.delivered_fraction, uniform_bound(k) * 1.01) << k;
    EXPECT_GE(r.delivered_fraction, uniform_bound(k) * 0.95) << k;
  }
}

// At a tenth of the bound nearly every packet crosses an idle network: the mean latency is the
// zero-load figure (hops x hop latency + one packet's serialisation, over all pairs, a node to
// itself included) within 25 %, and never below it; the 99th percentile is above the mean.
TEST(SyntheticTrafficLatency, AtLowLoadIsTheZeroLoadLatency) {
  const std::uint32_t k = 4;
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  const auto& c = sys.config();
  double hops = 0;
  for (std::uint32_t s = 0; s < k * k; ++s)
    for (std::uint32_t d = 0; d < k * k; ++d) hops += sys.topology().mesh_hops(s, d);
  const double zero_load = hops / double(k * k * k * k) * double(c.cube.noc.hop_latency) +
                           double(c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.packet_bytes));
  const auto r = offer(k, pattern(TrafficPattern::uniform), 0.1);
  EXPECT_GE(r.mean_latency_ps, zero_load);
  EXPECT_LE(r.mean_latency_ps, 1.25 * zero_load);
  EXPECT_GE(r.p99_latency_ps, r.mean_latency_ps);
}

// ---- With finite buffers (credit flow control) ----------------------------------------------

TrafficResult offer_buffered(TrafficPattern p, double load_of_bound, std::uint32_t packets,
                             std::uint32_t vcs) {
  SystemConfig c = mesh_config(4);
  c.cube.noc.router = {std::uint64_t{packets} * vcs * c.cube.noc.packet_bytes, vcs, emu::ns(2)};
  emu::Scheduler sched;
  System sys(c, sched);
  TrafficOptions o = pattern(p);
  o.offered_load = std::min(1.0, load_of_bound * traffic_bound(sys.topology(), o).fraction_of_link);
  o.warmup = emu::us(2);
  o.measure = emu::us(20);
  return run_traffic(sched, sys.network(), o);
}

TEST(SyntheticTrafficBuffers, OnePacketBuffersCapEveryLinkAtAPacketPerCreditLoop) {
  // A one-packet buffer takes a packet per credit loop: the hop latency (2 ns), the packet's
  // serialisation onward (4 ns) and the credit's way back (2 ns), so no mesh link carries more
  // than 4 / 8 of its bandwidth. Uniform traffic on 4x4 loads the middle links fully at its
  // bound (1 link per node): it saturates at half the bound at the latest.
  const double ceiling = 4.0 / 8.0;
  EXPECT_FALSE(offer_buffered(TrafficPattern::uniform, 0.2, 1, 1).saturated());
  const TrafficResult past = offer_buffered(TrafficPattern::uniform, 1.0, 1, 1);
  EXPECT_TRUE(past.saturated());
  EXPECT_LE(past.delivered_fraction, ceiling * 1.03);
  EXPECT_TRUE(offer_buffered(TrafficPattern::uniform, ceiling * 1.1, 1, 1).saturated());
}

TEST(SyntheticTrafficBuffers, FifoBuffersSaturateBelowTheBoundAndChannelsWinItBack) {
  // Eight packets per channel cover the credit loop, so what is left is head-of-line blocking:
  // a packet waiting for a busy output holds up those behind it for free ones. With one
  // channel per input, uniform traffic saturates well below the channel-load bound (as an
  // input-queued switch does: 59 % for a large crossbar); with four, a blocked packet holds up
  // only its own channel and saturation comes within a few per cent of the bound.
  const double fifo = offer_buffered(TrafficPattern::uniform, 1.2, 8, 1).delivered_fraction;
  const double four = offer_buffered(TrafficPattern::uniform, 1.2, 8, 4).delivered_fraction;
  const double bound = uniform_bound(4);
  EXPECT_LT(fifo, 0.85 * bound);
  EXPECT_GT(fifo, 0.5 * bound);
  EXPECT_GT(four, 0.88 * bound);
  EXPECT_GT(four, fifo + 0.1 * bound);
}

}  // namespace
}  // namespace cubesim::components
