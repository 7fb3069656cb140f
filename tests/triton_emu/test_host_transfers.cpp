// Timed host transfers (Simulation::write / read with cubesim::timed, host_time): they move
// the data as untimed ones do, take the host path's time (components/host/host_path.hpp, whose
// formulas tests/components/test_host_path.cpp works through) and are logged in order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <random>
#include <vector>

#include "spec_path.hpp"

namespace cubesim {
namespace {

// tiny.json with a slow host link (8 GB/s), so that it bounds every transfer.
Spec slow_host() {
  return Spec::load(spec_path("tiny.json")).with("system.host.link_bandwidth_GBps", 8);
}

std::vector<float> random_floats(std::size_t n) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

TEST(HostTransfers, ATimedWriteAndReadMoveTheDataAndTakeTheHostLinksTime) {
  Simulation sim(slow_host());
  const std::size_t n = 1 << 18;  // 1 MiB of f32
  const Ptr p = sim.alloc(n * 4);
  const std::vector<float> v = random_floats(n);
  const HostTransfer in = sim.write<float>(p, v, timed);
  const components::HostConfig& h = sim.config().host;
  EXPECT_EQ(in.direction, HostDirection::to_device);
  EXPECT_EQ(in.bytes, n * 4);
  EXPECT_EQ(in.serialisation, emu::Bandwidth::from_GBps(8).transfer_time(n * 4));
  EXPECT_EQ(in.bottleneck, "sip0.host_link.to_device");
  EXPECT_EQ(in.time, h.setup + in.latency + in.serialisation);
  EXPECT_GE(in.latency, h.link_latency + h.io_latency);

  std::vector<float> back;
  back = sim.read<float>(p, n, timed);
  EXPECT_EQ(back, v);
  ASSERT_EQ(sim.host_transfers().size(), 2u);
  const HostTransfer& out = sim.host_transfers()[1];
  EXPECT_EQ(out.direction, HostDirection::to_host);
  EXPECT_EQ(out.bottleneck, "sip0.host_link.to_host");
  EXPECT_GT(out.latency, in.latency);  // a read's request goes there first
  sim.clear_host_transfers();
  EXPECT_TRUE(sim.host_transfers().empty());
}

// Untimed transfers take no time and log nothing; host_time estimates without moving data,
// on a timing-only simulation too, and several buffers at once share the link.
TEST(HostTransfers, HostTimeEstimatesWithoutMovingData) {
  for (const bool timing_only : {false, true}) {
    Simulation sim(slow_host(), {.timing_only = timing_only});
    const Ptr a = sim.alloc(1 << 20), b = sim.alloc(1 << 20);
    if (!timing_only) sim.write<float>(a, random_floats(1 << 18));
    EXPECT_TRUE(sim.host_transfers().empty());
    const HostBuffer one[] = {{a, 1 << 20}};
    const HostBuffer both[] = {{a, 1 << 20}, {b, 1 << 20}};
    const HostTransfer t1 = sim.host_time(HostDirection::to_device, one);
    const HostTransfer t2 = sim.host_time(HostDirection::to_device, both);
    EXPECT_EQ(t2.bytes, 2u << 20);
    EXPECT_EQ(t2.serialisation, emu::Bandwidth::from_GBps(8).transfer_time(2 << 20));
    EXPECT_EQ(t2.time - t1.time, t2.serialisation - t1.serialisation);
    EXPECT_TRUE(sim.host_transfers().empty());
  }
}

// A first-touch buffer's frames stay with the host until a program touches them.
TEST(HostTransfers, FirstTouchFramesNotYetPlacedTakeNoTime) {
  Simulation sim(slow_host());
  const Ptr p = sim.alloc(4096, Placement::first_touch());
  const std::vector<float> v = random_floats(1024);
  const HostTransfer before = sim.write<float>(p, v, timed);
  EXPECT_EQ(before.bytes, 0u);
  EXPECT_EQ(before.time, 0u);
  sim.launch_on(Grid{.pes = 1, .cubes = 1},
                [&](tl::Context& tl) { (void)tl.load(p, {1024}, DType::f32); });
  const HostTransfer after = sim.read_bytes(p, std::vector<float>(1024).data(), 4096, timed);
  EXPECT_EQ(after.bytes, 4096u);
  EXPECT_GT(after.time, 0u);
  EXPECT_EQ(sim.read<float>(p, 1024), v);
}

TEST(HostTransfers, OutsideABufferIsAUsageError) {
  Simulation sim(slow_host());
  const Ptr p = sim.alloc(4096);
  const HostBuffer past[] = {{p, 8192}};
  EXPECT_THROW(sim.host_time(HostDirection::to_device, past), UsageError);
  std::vector<float> big(2048);
  EXPECT_THROW(sim.write<float>(p, big, timed), UsageError);
  EXPECT_TRUE(sim.host_transfers().empty());
}

}  // namespace
}  // namespace cubesim
