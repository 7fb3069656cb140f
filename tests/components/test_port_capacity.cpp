// What the mesh delivers to HBM, UCIe and inter-SIP ports: channel-load bounds checked against
// figures derived by hand for XY routing on small meshes.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "components/network/port_capacity.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

const PortCapacity& find(const std::vector<PortCapacity>& all, const std::string& resource) {
  for (const auto& p : all)
    if (p.resource == resource) return p;
  throw std::runtime_error("no " + resource);
}

double gbps(double bytes_per_s) {
  return bytes_per_s / 1e9;
}

// One controller on the corner (0,0) of a 4x4 mesh: reads leave (0,0) east to the 12 PEs with
// x >= 1, south to the 3 others below it, and one stays on the node. The east link carries
// 12/16 of the pattern, so the pattern gets at most 16/12 of a link.
TEST(PortCapacity, ACornerControllerIsHeldByTheLinkBesideIt) {
  SystemConfig c = testing::small_config(1, 1, 4);
  c.cube.hbm.bandwidth = Bandwidth::from_GBps(2000);
  const auto ports = port_capacities(Topology(c));
  const PortCapacity& read = find(ports, "hbm_read");
  EXPECT_DOUBLE_EQ(read.peak_bytes_per_s, 2000e9);
  EXPECT_NEAR(gbps(read.delivered_bytes_per_s), 64.0 * 16 / 12, 1e-6);
  EXPECT_EQ(read.bottleneck, "sip0.cube0.noc.(0,0)->(1,0).east");
  EXPECT_EQ(read.bottleneck_field, "system.cube.noc.link_bandwidth_GBps");
  // Writes converge on (0,0): its west-bound link from (1,0) carries the same 12/16.
  EXPECT_NEAR(gbps(find(ports, "hbm_write").delivered_bytes_per_s), 64.0 * 16 / 12, 1e-6);
}

// HBM on every node of a k x k mesh makes reads uniform node-to-node traffic: the busiest
// link, in the middle of a row, carries the k/2 sources left of it in its row to the k^2/2
// destinations right of it: (k/2)(k^2/2)/k^4 = 1/(4k) of the pattern, so 4k links; each PE's
// ejection port takes 1/k^2 of it, so k^2 links. The bound is the smaller, unless the channels
// (the HBM itself) give less.
TEST(PortCapacity, HbmOnEveryNodeIsBoundByTheBisectionOrTheHbm) {
  for (const std::uint32_t k : {2u, 4u, 6u}) {
    SystemConfig c = testing::small_config(1, 1, k);
    c.cube.hbm.channels = k * k;
    c.cube.noc.hbm_nodes.clear();
    for (std::uint32_t y = 0; y < k; ++y)
      for (std::uint32_t x = 0; x < k; ++x) c.cube.noc.hbm_nodes.push_back({x, y});
    c.cube.hbm.bandwidth = Bandwidth::from_GBps(100000);  // far above the mesh
    const PortCapacity read = find(port_capacities(Topology(c)), "hbm_read");
    EXPECT_NEAR(gbps(read.delivered_bytes_per_s), 64.0 * std::min(4 * k, k * k), 1e-6) << k;
    c.cube.hbm.bandwidth = Bandwidth::from_GBps(32.0 * k);  // below it: the HBM is the bound
    const PortCapacity slow = find(port_capacities(Topology(c)), "hbm_read");
    EXPECT_NEAR(gbps(slow.delivered_bytes_per_s), 32.0 * k, 1e-6) << k;
    EXPECT_EQ(slow.bottleneck_field, "system.cube.hbm.bandwidth_GBps") << k;
  }
}

// Every PE of cube 0 sends to every PE of cube 1 (4x4 meshes, 64 GB/s mesh links).
//  - One 32 GB/s connection on (3,0): every pair crosses it, so it delivers its peak.
//  - Four on (3,0)..(3,3): each source leaves by its own row's connection, a quarter each, and
//    the busiest mesh link beside them, (2,y)->(3,y), carries 3 of 16 sources: 128 GB/s, the
//    four links' peak.
//  - One 128 GB/s connection on (3,0): XY routes bring the 12 sources of rows 1..3 north along
//    column 3 into (3,0), so (3,1)->(3,0) carries 12/16 of the pattern (as does (3,0)->(2,0)
//    in cube 1, a later link): 64 x 16/12 GB/s, a third below the port's peak.
TEST(PortCapacity, UcieConnectionsMultiplyWhatTheMeshDelivers) {
  SystemConfig c = testing::small_config(1, 2, 4);
  c.cube.noc.ucie_nodes = {{3, 0}};
  const PortCapacity one = find(port_capacities(Topology(c)), "ucie");
  EXPECT_NEAR(gbps(one.peak_bytes_per_s), 32, 1e-9);
  EXPECT_NEAR(gbps(one.delivered_bytes_per_s), 32, 1e-6);
  c.ucie.connections = 4;
  c.cube.noc.ucie_nodes = {{3, 0}, {3, 1}, {3, 2}, {3, 3}};
  const PortCapacity four = find(port_capacities(Topology(c)), "ucie");
  EXPECT_NEAR(gbps(four.peak_bytes_per_s), 128, 1e-9);
  EXPECT_NEAR(gbps(four.delivered_bytes_per_s), 128, 1e-6);
  c.ucie.connections = 1;
  c.cube.noc.ucie_nodes = {{3, 0}};
  c.ucie.bandwidth = Bandwidth::from_GBps(128);
  const PortCapacity fast = find(port_capacities(Topology(c)), "ucie");
  EXPECT_NEAR(gbps(fast.delivered_bytes_per_s), 64.0 * 16 / 12, 1e-6);
  EXPECT_EQ(fast.bottleneck, "sip0.cube0.noc.(3,1)->(3,0).north");
}

}  // namespace
}  // namespace cubesim::components
