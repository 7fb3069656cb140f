// measure_links: what the links of a Topology hold, as LinkStats.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "components/network/link_stats.hpp"
#include "components/network/topology.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;

class LinkStatsTest : public ::testing::Test {
 protected:
  Topology topology{testing::small_config()};
  // The link's counters as if `packets` packets of `bytes` in all had crossed it.
  LinkId carry(LinkId id, std::uint64_t bytes, std::uint64_t packets, Tick busy,
               Tick credit_wait = 0) {
    Link& l = topology.link(id);
    l.bytes = bytes;
    l.packets = packets;
    l.busy = busy;
    l.credit_wait = credit_wait;
    return id;
  }
};

TEST_F(LinkStatsTest, NoTrafficGivesNoLinksAndNoBusiestLink) {
  const LinkStats s = measure_links(topology, 1000, false);
  EXPECT_TRUE(s.links.empty());
  EXPECT_EQ(s.busiest_link(), nullptr);
  EXPECT_EQ(s.most_held_back_link(), nullptr);
  for (std::size_t k = 0; k < kLinkKinds; ++k) EXPECT_EQ(s.bytes_by_kind[k], 0u);
}

TEST_F(LinkStatsTest, RecordsTheLinksThatCarriedTrafficInLinkOrder) {
  const LinkId eject = carry(topology.eject_port(1), 4096, 1, 64'000);
  const LinkId inject = carry(topology.inject_port(0), 4096, 1, 64'000);
  const LinkId channel = carry(topology.hbm_channel(1, 3), 8192, 2, 16'000);
  const LinkStats s = measure_links(topology, 128'000, false);
  std::vector<LinkId> ids = {eject, inject, channel};
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(s.links.size(), 3u);
  for (std::size_t i = 0; i < ids.size(); ++i)
    EXPECT_EQ(s.links[i].name, topology.link_name(ids[i]));
  const LinkRecord* c = s.link(topology.link_name(channel));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->kind, LinkKind::hbm_channel);
  EXPECT_EQ(c->bytes, 8192u);
  EXPECT_EQ(c->packets, 2u);
  EXPECT_EQ(c->busy_ps, 16'000u);
  EXPECT_EQ(s.link("sip0.cube0.noc.(0,0)->(1,0).east"), nullptr);  // carried nothing
}

TEST_F(LinkStatsTest, SumsBytesByKindOfLink) {
  carry(topology.inject_port(0), 4096, 1, 1);
  carry(topology.inject_port(5), 100, 1, 1);
  carry(topology.hbm_channel(0, 0), 3000, 1, 1);
  const LinkStats s = measure_links(topology, 10, false);
  EXPECT_EQ(s.bytes(LinkKind::inject), 4196u);
  EXPECT_EQ(s.bytes(LinkKind::hbm_channel), 3000u);
  EXPECT_EQ(s.bytes(LinkKind::noc), 0u);
  EXPECT_EQ(s.bytes(LinkKind::ucie), 0u);
}

TEST_F(LinkStatsTest, UtilisationIsBusyTimeOverElapsedTime) {
  carry(topology.inject_port(0), 4096, 1, 25'000);
  const LinkStats s = measure_links(topology, 100'000, false);
  EXPECT_DOUBLE_EQ(s.utilisation(s.links[0]), 0.25);
  EXPECT_EQ(measure_links(topology, 0, false).utilisation(s.links[0]), 0.0);  // over no time
}

TEST_F(LinkStatsTest, TheBusiestLinkIsTheFirstOfTheLongestBusyTimes) {
  carry(topology.inject_port(0), 1, 1, 500);
  const LinkId first = carry(topology.inject_port(1), 1, 1, 900);
  carry(topology.inject_port(2), 1, 1, 900);
  const LinkStats s = measure_links(topology, 1000, false);
  ASSERT_NE(s.busiest_link(), nullptr);
  EXPECT_EQ(s.busiest_link()->name, topology.link_name(first));
}

TEST_F(LinkStatsTest, TheLinkHeldBackMostHasTheLongestCreditWait) {
  carry(topology.inject_port(0), 1, 1, 900, 10);
  const LinkId held = carry(topology.inject_port(1), 1, 1, 100, 70);
  const LinkStats s = measure_links(topology, 1000, true);
  EXPECT_TRUE(s.bounded_buffers);
  ASSERT_NE(s.most_held_back_link(), nullptr);
  EXPECT_EQ(s.most_held_back_link()->name, topology.link_name(held));
  EXPECT_EQ(s.most_held_back_link()->credit_wait_ps, 70u);
}

}  // namespace
}  // namespace cubesim::components
