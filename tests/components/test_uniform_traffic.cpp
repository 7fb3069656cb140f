// Uniform random traffic on a k x k mesh with XY routing: every node sends single-packet
// messages to the other k^2 - 1 nodes alike. The expectations come from the channel-load bound
// (Dally & Towles, ch. 3), computed here by routing every pair over the mesh and counting what
// each link carries; the generator measures what was delivered, not what was offered.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

#include "components/system/system.hpp"
#include "components/traffic/uniform_traffic.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

SystemConfig mesh_config(std::uint32_t k) {
  SystemConfig c = testing::small_config(1, 1, k);
  c.cube.noc.packet_bytes = 256;  // 4 ns on a 64 GB/s link; hop latency 2 ns
  return c;
}

// Saturation throughput per node (fraction of a link) from first principles: route every
// (source, destination) pair X first then Y, count the pairs on each directed mesh link, and
// divide by the other nodes a source spreads its rate over. The node rate at which the busiest
// link is full is the bound; no node can inject or eject more than one link's worth.
double channel_load_bound(std::uint32_t k) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> pairs_on_link;
  const std::uint32_t n = k * k;
  for (std::uint32_t s = 0; s < n; ++s)
    for (std::uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      std::uint32_t x = s % k, y = s / k;
      const std::uint32_t dx = d % k, dy = d / k;
      while (x != dx) {
        const std::uint32_t nx = x < dx ? x + 1 : x - 1;
        pairs_on_link[{y * k + x, y * k + nx}] += 1;
        x = nx;
      }
      while (y != dy) {
        const std::uint32_t ny = y < dy ? y + 1 : y - 1;
        pairs_on_link[{y * k + x, ny * k + x}] += 1;
        y = ny;
      }
    }
  double busiest = 0;
  for (const auto& [link, pairs] : pairs_on_link) busiest = std::max(busiest, pairs);
  return std::min(1.0, (n - 1) / busiest);
}

// Zero-load latency averaged over all source/destination pairs: hops x hop latency + one
// packet's serialisation (cut-through, every link the same bandwidth).
double zero_load_latency_ps(const System& sys) {
  const auto& topo = sys.topology();
  const auto& c = sys.config();
  double sum = 0;
  const std::uint32_t n = topo.pes_per_cube();
  for (std::uint32_t s = 0; s < n; ++s)
    for (std::uint32_t d = 0; d < n; ++d)
      if (s != d) sum += topo.mesh_hops(s, d);
  const double mean_hops = sum / (double(n) * (n - 1));
  return mean_hops * double(c.cube.noc.hop_latency) +
         double(c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.packet_bytes));
}

UniformTrafficResult offer(std::uint32_t k, double load_of_bound, emu::Tick measure) {
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  UniformTrafficOptions opt;
  opt.offered_load = load_of_bound * channel_load_bound(k);
  opt.warmup = emu::us(2);
  opt.measure = measure;
  return run_uniform_traffic(sched, sys.fabric(), opt);
}

TEST(UniformTrafficBound, IsFourTimesKSquaredMinusOneOverKCubedNotFourOverK) {
  EXPECT_DOUBLE_EQ(channel_load_bound(4), 0.9375);  // 4 x 15 / 64: nobody sends to itself
  EXPECT_DOUBLE_EQ(channel_load_bound(8), 4.0 * 63 / 512);
  EXPECT_DOUBLE_EQ(channel_load_bound(2), 1.0);  // injection-bound
  for (std::uint32_t k : {2u, 3u, 4u, 5u, 6u, 8u, 16u})
    EXPECT_DOUBLE_EQ(uniform_saturation_bound(k), channel_load_bound(k)) << "k=" << k;
}

class UniformTraffic : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(UniformTraffic, ClosedLoopSaturatesWithinFivePercentBelowTheChannelLoadBound) {
  const std::uint32_t k = GetParam();
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  UniformTrafficOptions opt;
  opt.window = 32;
  opt.warmup = emu::us(2);
  opt.measure = emu::us(10);
  const auto r = run_uniform_traffic(sched, sys.fabric(), opt);
  const double bound = channel_load_bound(k);
  // Unbounded buffers (no back-pressure) reach the bound itself; only the window's edges and
  // the random destinations keep the delivered rate a little below it.
  EXPECT_LE(r.accepted_fraction, bound * 1.01) << "k=" << k;
  EXPECT_GE(r.accepted_fraction, bound * 0.95) << "k=" << k;
}

TEST_P(UniformTraffic, BelowSaturationTheNetworkDeliversWhatIsOffered) {
  const std::uint32_t k = GetParam();
  for (const double load : {0.2, 0.6}) {
    const auto r = offer(k, load, emu::us(20));
    ASSERT_GT(r.offered_fraction, 0);
    // Measured against what the sources really generated in the window (a Poisson draw); the
    // window's edges (messages in flight at its start and end) differ by a few packets.
    EXPECT_NEAR(r.accepted_fraction, r.offered_fraction, 0.03 * r.offered_fraction)
        << "k=" << k << ", load " << load;
  }
}

TEST_P(UniformTraffic, PastSaturationTheNetworkDeliversNoMoreThanTheBound) {
  const std::uint32_t k = GetParam();
  const auto r = offer(k, 1.3, emu::us(20));
  const double bound = channel_load_bound(k);
  EXPECT_GT(r.offered_fraction, 1.2 * bound);
  EXPECT_LE(r.accepted_fraction, bound * 1.01) << "k=" << k;
  EXPECT_LT(r.accepted_fraction, 0.95 * r.offered_fraction);
}

TEST_P(UniformTraffic, LatencyAtTwentyPercentLoadIsWithinTwentyFivePercentOfZeroLoad) {
  const std::uint32_t k = GetParam();
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  UniformTrafficOptions opt;
  opt.offered_load = 0.2 * channel_load_bound(k);
  opt.warmup = emu::us(2);
  opt.measure = emu::us(20);
  const auto r = run_uniform_traffic(sched, sys.fabric(), opt);
  const double zero = zero_load_latency_ps(sys);
  ASSERT_GT(r.messages, 1000u);
  // Queueing makes it rise a little (M/D/1 at utilisation 0.2 waits 1/8 of a service time per
  // queue), so it must be above the zero-load figure, but not by more than a quarter.
  EXPECT_GT(r.mean_latency_ps, zero);
  EXPECT_LT(r.mean_latency_ps, 1.25 * zero) << "zero-load " << zero << " ps";
}

INSTANTIATE_TEST_SUITE_P(Mesh, UniformTraffic, ::testing::Values(4u, 8u),
                         [](const auto& param_info) {
                           return std::to_string(param_info.param) + "x" +
                                  std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace cubesim::components
