// A transfer's closed form and zero-load bound (components/network/path_bound.hpp), worked by
// hand on small_config's links: 64 GB/s mesh links and ports with 2 ns hops, 64 GB/s channels.
#include <gtest/gtest.h>

#include "components/network/path_bound.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

Tick at(double GBps, std::uint64_t bytes) {
  return Bandwidth::from_GBps(GBps).transfer_time(bytes);
}

// PE 0 to PE 3 of a 4x4 mesh: its port, 3 mesh links east, the port out.
TEST(PathBound, OneRouteIsItsWayOrItsSlowestLinkAfterTheFirstByteReachesIt) {
  const Topology t(testing::small_config(1, 1));
  const Route r = t.pe_to_pe(0, 3);
  ASSERT_EQ(r.links.size(), 5u);
  PathBound b(t);
  Tick way = 0;
  for (const Tick l : r.latency) way += l;
  b.add_route(r, 1 << 20, way);
  EXPECT_EQ(b.latency(), way);
  EXPECT_EQ(b.serialisation(), at(64, 1 << 20));
  EXPECT_EQ(b.time(), way + at(64, 1 << 20));
  // Every link at 64 GB/s: the last one, reached after the way, bounds it.
  EXPECT_EQ(b.bound(), way + at(64, 1 << 20));
  // The most loaded resource; of equals, resources first, then links by id (mesh links first).
  EXPECT_EQ(b.bottleneck(), "sip0.cube0.noc.(0,0)->(1,0).east");
}

// Two routes that share their last link: it carries both, from when the nearer one's first
// byte reaches it; a resource of the caller's (a slower one) can bound instead.
TEST(PathBound, SharedLinksAddTheirBytesAndResourcesTakePart) {
  const Topology t(testing::small_config(1, 1));
  const Route near = t.pe_to_pe(1, 0), far = t.pe_to_pe(3, 0);
  PathBound b(t);
  const auto sum = [](const Route& r) {
    Tick s = 0;
    for (const Tick l : r.latency) s += l;
    return s;
  };
  b.add_route(near, 4096, sum(near));
  b.add_route(far, 4096, sum(far));
  const Tick near_to_port = sum(near) - near.latency.back();
  EXPECT_EQ(b.bound(), std::max(sum(far), near_to_port + at(64, 8192)));
  EXPECT_EQ(b.bottleneck(), "sip0.cube0.noc.(1,0)->(0,0).west");  // shared too, a lower id
  b.add_resource("read-out", Bandwidth::from_GBps(1), 8192, emu::ns(10));
  EXPECT_EQ(b.bottleneck(), "read-out");
  EXPECT_EQ(b.bound(), emu::ns(10) + at(1, 8192));
  EXPECT_EQ(b.time(), sum(far) + at(1, 8192));
}

}  // namespace
}  // namespace cubesim::components
