// Uniform random traffic on a k x k mesh with XY routing. Expectations come from the channel
// load bound (Dally & Towles, ch. 3): with uniform traffic the busiest channels are those
// crossing the bisection, and they saturate when each node injects 4/k of a link's bandwidth;
// injection itself is limited to one link. So the saturation throughput per node is
// min(4/k, 1) x link bandwidth.
#include <gtest/gtest.h>

#include <algorithm>

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

class UniformTraffic : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(UniformTraffic, SaturationThroughputIsWithinTenPercentOfTheChannelLoadBound) {
  const std::uint32_t k = GetParam();
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  UniformTrafficOptions opt;
  opt.window = 32;
  opt.warmup = emu::us(2);
  opt.measure = emu::us(10);
  const auto r = run_uniform_traffic(sched, sys.fabric(), opt);
  const double bound = std::min(4.0 / k, 1.0);
  EXPECT_NEAR(r.accepted_fraction, bound, 0.1 * bound) << "k=" << k;
}

TEST_P(UniformTraffic, LatencyAtTwentyPercentLoadIsWithinTwentyFivePercentOfZeroLoad) {
  const std::uint32_t k = GetParam();
  emu::Scheduler sched;
  System sys(mesh_config(k), sched);
  UniformTrafficOptions opt;
  opt.offered_load = 0.2 * std::min(4.0 / k, 1.0);
  opt.warmup = emu::us(2);
  opt.measure = emu::us(20);
  const auto r = run_uniform_traffic(sched, sys.fabric(), opt);
  const double zero = zero_load_latency_ps(sys);
  ASSERT_GT(r.messages, 1000u);
  // Queueing makes it rise a little (M/D/1 at utilisation 0.2 waits 1/8 of a service time per
  // queue), so it must be above the zero-load figure, but not by more than a quarter.
  EXPECT_GT(r.mean_latency_ps, zero);
  EXPECT_LT(r.mean_latency_ps, 1.25 * zero) << "zero-load " << zero << " ps";
  // Below saturation the network accepts what is offered.
  EXPECT_NEAR(r.accepted_fraction, opt.offered_load, 0.1 * opt.offered_load);
}

INSTANTIATE_TEST_SUITE_P(Mesh, UniformTraffic, ::testing::Values(4u, 8u),
                         [](const auto& param_info) {
                           return std::to_string(param_info.param) + "x" +
                                  std::to_string(param_info.param);
                         });

}  // namespace
}  // namespace cubesim::components
