// HBM models: the registry, the simple model's numbers, and where the network uses them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "components/hbm/hbm_model.hpp"
#include "components/network/topology.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HbmModel, EveryExpectedModelIsRegistered) {
  EXPECT_THAT(hbm_models().names(), ElementsAre("simple", "banked"));
  HbmConfig c = testing::small_config().cube.hbm;
  for (const std::string& name : hbm_models().names()) {
    c.model = name;
    EXPECT_NE(make_hbm_model(c), nullptr) << name;
  }
}

TEST(HbmModel, SimpleServesAnEvenShareOfTheBandwidthAfterAFixedLatency) {
  const HbmConfig c = testing::small_config().cube.hbm;  // 512 GB/s over 8 channels, 100 ns
  ASSERT_EQ(c.model, "simple");
  const auto m = make_hbm_model(c);
  EXPECT_EQ(m->channel_bandwidth().bytes_per_s(), 64'000'000'000u);
  EXPECT_EQ(m->access_latency(), emu::ns(100));
}

TEST(HbmModel, SimpleRoundsTheShareDownToWholeBytesPerSecond) {
  HbmConfig c = testing::small_config().cube.hbm;
  c.bandwidth = Bandwidth::from_bytes_per_s(1000);
  c.channels = 3;
  EXPECT_EQ(make_hbm_model(c)->channel_bandwidth().bytes_per_s(), 333u);
  c.channels = 1001;
  EXPECT_THROW(make_hbm_model(c), std::invalid_argument);  // less than 1 B/s per channel
}

TEST(HbmModel, AnUnknownNameListsTheKnownModels) {
  HbmConfig c = testing::small_config().cube.hbm;
  c.model = "ramulator";
  try {
    (void)make_hbm_model(c);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown HBM model 'ramulator' (system.cube.hbm.model); "));
    for (const std::string& name : hbm_models().names())
      EXPECT_THAT(e.what(), HasSubstr("'" + name + "'"));
  }
}

TEST(HbmModel, ChannelLinksRunAtTheModelsBandwidth) {
  const SystemConfig c = testing::small_config();
  const Topology t(c);
  const auto m = make_hbm_model(c.cube.hbm);
  for (std::uint32_t cube = 0; cube < t.cubes(); ++cube)
    for (std::uint32_t ch = 0; ch < c.cube.hbm.channels; ++ch)
      EXPECT_EQ(t.link(t.hbm_channel(cube, ch)).bandwidth.bytes_per_s(),
                m->channel_bandwidth().bytes_per_s());
  EXPECT_EQ(t.hbm().access_latency(), m->access_latency());
}

TEST(HbmModel, AReadAndAWritePayTheAccessLatencyOnce) {
  // PE 0 sits on the controller's node: no hops, so the time is the access and the serialisation.
  constexpr std::uint64_t kBytes = 256;
  for (const NetworkModel network : {NetworkModel::packet, NetworkModel::flow})
    for (const bool write : {false, true}) {
      testing::Bench b(testing::small_config(), SystemOptions{false, network});
      const Tick t = testing::run_one(b, [&](auto done) {
        if (write)
          b.network().write(0, b.addr(0, 0), kBytes, done);
        else
          b.network().read(0, b.addr(0, 0), kBytes, done);
      });
      const auto m = make_hbm_model(b.cfg().cube.hbm);
      // A write's response comes back through the PE's ejection port, 16 bytes at 64 GB/s.
      const Tick response =
          write ? b.cfg().cube.noc.link_bandwidth.transfer_time(b.cfg().cube.noc.response_bytes)
                : 0;
      EXPECT_EQ(t, m->access_latency() + m->channel_bandwidth().transfer_time(kBytes) + response)
          << (write ? "write" : "read") << " on the " << network_model_name(network)
          << " network";  // the channel and the mesh link run at 64 GB/s alike
    }
}

// PE 5 sits at (1, 1), 2 hops of 2 ns from the controller at (0, 0): a write's data goes
// there (cut through, serialised once at 64 GB/s) and lands after the access; its 16-byte
// response comes back the same 2 hops.
TEST(HbmModel, AWriteCompletesWhenItsResponseIsBackAndHoldsItsDmaSlotTillThen) {
  for (const NetworkModel network : {NetworkModel::packet, NetworkModel::flow}) {
    SystemConfig c = testing::small_config();
    c.pe.dma.max_outstanding_packets = 1;  // each packet waits for the one before's response
    testing::Bench b(c, SystemOptions{false, network});
    const auto& noc = c.cube.noc;
    const Tick way = 2 * noc.hop_latency;
    const Tick one = way + noc.link_bandwidth.transfer_time(4096) + c.cube.hbm.latency + way +
                     noc.link_bandwidth.transfer_time(noc.response_bytes);
    EXPECT_EQ(
        testing::run_one(b, [&](auto done) { b.network().write(5, b.addr(0, 0), 4096, done); }),
        one)
        << network_model_name(network);
    // Two packets (to two channels of the one controller): the second leaves when the first's
    // response is back.
    const Tick start = b.sched.now();
    const Tick two = testing::run_one(
        b, [&](auto done) { b.network().write(5, b.addr(0, 8 * 4096), 8192, done); });
    EXPECT_EQ(two - start, 2 * one) << network_model_name(network);
    // A posted write completes when its data has landed.
    const Tick posted_start = b.sched.now();
    EXPECT_EQ(testing::run_one(
                  b, [&](auto done) { b.network().write_posted(5, b.addr(0, 0), 4096, done); }) -
                  posted_start,
              one - way - noc.link_bandwidth.transfer_time(noc.response_bytes))
        << network_model_name(network);
  }
}

}  // namespace
}  // namespace cubesim::components
