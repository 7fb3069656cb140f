// The host's way to HBM (components/host/host_path.hpp): every expected time is worked from
// the config's figures: setup + the longest way's latency + the most loaded resource's bytes
// over its rate.
#include <gtest/gtest.h>

#include <vector>

#include "components/host/host_path.hpp"
#include "components/memory/address_map.hpp"
#include "components/network/topology.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using testing::small_config;

constexpr std::uint64_t kMiB = 1 << 20;

struct Path {
  explicit Path(const SystemConfig& c)
      : config(c), topology(config), map(config), host(topology, map) {}
  HostTransferTime time(HostDirection d, std::uint64_t addr, std::uint64_t bytes) const {
    const HostRange r{addr, bytes};
    return host.time(d, {&r, 1});
  }
  // The first byte of cube `cube`'s direct range.
  std::uint64_t cube_start(std::uint32_t cube) const { return map.cube_base(cube); }
  SystemConfig config;
  Topology topology;
  AddressMap map;
  HostPath host;
};

Tick serialise(double GBps, std::uint64_t bytes) {
  return Bandwidth::from_GBps(GBps).transfer_time(bytes);
}

// One cube, its controllers and the IO die's port on node (0, 0): the host link (55 GB/s)
// bounds a 1 MiB write; the way is the link, the IO die, and the HBM access.
TEST(HostPath, HostLinkBoundsAWriteOnOneCube) {
  const Path p(small_config(1, 1));
  const HostConfig& h = p.config.host;
  const HostTransferTime t = p.time(HostDirection::to_device, p.cube_start(0), kMiB);
  const Tick latency = h.link_latency + h.io_latency + p.topology.router_delay() + emu::ns(100);
  EXPECT_EQ(t.bytes, kMiB);
  EXPECT_EQ(t.setup, h.setup);
  EXPECT_EQ(t.latency, latency);
  EXPECT_EQ(t.serialisation, serialise(55, kMiB));
  EXPECT_EQ(t.time, h.setup + latency + serialise(55, kMiB));
  EXPECT_EQ(t.bottleneck, "sip0.host_link.to_device");
}

// A port on the far corner: 6 mesh hops to the controllers on (0, 0); with a fast host link
// the mesh links (64 GB/s, every byte crosses them) bound it.
TEST(HostPath, MeshLinksBoundAFastHostLink) {
  SystemConfig c = small_config(1, 1);
  c.host.io_nodes = {{3, 3}};
  c.host.link_bandwidth = Bandwidth::from_GBps(1000);
  c.host.io_bandwidth = Bandwidth::from_GBps(1000);
  const Path p(c);
  const Tick hop = emu::ns(2) + p.topology.router_delay();
  const HostTransferTime t = p.time(HostDirection::to_device, p.cube_start(0), kMiB);
  EXPECT_EQ(t.latency, c.host.link_latency + c.host.io_latency + p.topology.router_delay() +
                           6 * hop + emu::ns(100));
  EXPECT_EQ(t.serialisation, serialise(64, kMiB));
  EXPECT_NE(t.bottleneck.find("sip0.cube0"), std::string::npos) << t.bottleneck;
  EXPECT_EQ(t.bottleneck.find("io_port"), std::string::npos) << t.bottleneck;
}

// The IO die's port bounds it; a second port takes the odd channels and halves the time on
// the ports, its one hop to the controllers carrying half the bytes at 64 GB/s.
TEST(HostPath, PortsShareTheChannels) {
  SystemConfig c = small_config(1, 1);
  c.host.link_bandwidth = Bandwidth::from_GBps(1000);
  c.host.io_bandwidth = Bandwidth::from_GBps(16);
  const HostTransferTime one = Path(c).time(HostDirection::to_device, Path(c).cube_start(0), kMiB);
  EXPECT_EQ(one.serialisation, serialise(16, kMiB));
  EXPECT_EQ(one.bottleneck, "sip0.cube0.io_port0.to_device");
  c.host.io_nodes = {{0, 0}, {1, 0}};
  const Path two(c);
  const HostTransferTime t = two.time(HostDirection::to_device, two.cube_start(0), kMiB);
  EXPECT_EQ(t.serialisation, serialise(16, kMiB / 2));
  const Tick hop = emu::ns(2) + two.topology.router_delay();
  EXPECT_EQ(t.latency, c.host.link_latency + c.host.io_latency + two.topology.router_delay() + hop +
                           emu::ns(100));
}

// Two SIPs: an interleaved buffer's halves cross the two host links at once.
TEST(HostPath, EachSipHasItsOwnHostLink) {
  const Path one(small_config(1, 1)), two(small_config(2, 1));
  const std::uint64_t start = two.map.interleaved_address({0, 0});
  const HostTransferTime t = two.time(HostDirection::to_device, start, 2 * kMiB);
  EXPECT_EQ(t.serialisation, serialise(55, kMiB));
  const HostTransferTime alone =
      one.time(HostDirection::to_device, one.map.interleaved_address({0, 0}), 2 * kMiB);
  EXPECT_EQ(alone.serialisation, serialise(55, 2 * kMiB));
  EXPECT_EQ(t.latency, alone.latency);
}

// A read: the request from the port to the controller, the access, the data back, the IO die
// and the host link.
TEST(HostPath, AReadWaitsForItsRequest) {
  SystemConfig c = small_config(1, 1);
  c.host.io_nodes = {{3, 3}};
  const Path p(c);
  const Tick router = p.topology.router_delay(), hop = emu::ns(2) + router;
  const HostTransferTime t = p.time(HostDirection::to_host, p.cube_start(0), 64 * 1024);
  EXPECT_EQ(t.latency, c.host.io_latency + router + 6 * hop + emu::ns(100) + router + 6 * hop +
                           c.host.io_latency + c.host.link_latency);
  EXPECT_EQ(t.bottleneck, "sip0.host_link.to_host");
  EXPECT_EQ(t.time, c.host.setup + t.latency + serialise(55, 64 * 1024));
}

// Bytes of a cube the IO die does not join enter through the nearest joined cube and cross
// UCIe (32 GB/s here, below the host link's 55): the UCIe link bounds them.
TEST(HostPath, OtherCubesAreReachedOverUcie) {
  SystemConfig c = small_config(1, 4);
  c.host.io_cubes = {0, 3};
  const Path p(c);
  EXPECT_EQ(p.host.entry_cube(0), 0u);
  EXPECT_EQ(p.host.entry_cube(1), 0u);
  EXPECT_EQ(p.host.entry_cube(2), 3u);  // a ring of 4: one hop from cube 3, two from cube 0
  EXPECT_EQ(p.host.entry_cube(3), 3u);
  const HostTransferTime joined = p.time(HostDirection::to_device, p.cube_start(3), kMiB);
  EXPECT_EQ(joined.bottleneck, "sip0.host_link.to_device");
  const HostTransferTime far = p.time(HostDirection::to_device, p.cube_start(2), kMiB);
  EXPECT_EQ(far.serialisation, serialise(32, kMiB));
  EXPECT_GT(far.latency, joined.latency + emu::ns(10));  // a UCIe link's latency at least
  EXPECT_NE(far.bottleneck.find("ucie"), std::string::npos) << far.bottleneck;
}

TEST(HostPath, NothingToMoveTakesNoTime) {
  const Path p(small_config(1, 1));
  const HostTransferTime t = p.time(HostDirection::to_device, p.cube_start(0), 0);
  EXPECT_EQ(t.time, 0u);
  EXPECT_EQ(t.bytes, 0u);
  EXPECT_TRUE(t.bottleneck.empty());
}

TEST(HostPath, UnmappedBytesAreRefused) {
  const Path p(small_config(1, 1));
  EXPECT_THROW(p.time(HostDirection::to_device, p.cube_start(0) + (std::uint64_t{1} << 30) - 4, 8),
               AddressError);
}

}  // namespace
}  // namespace cubesim::components
