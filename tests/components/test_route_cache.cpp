// The flow model's route cache: each key finds the route the topology gives, and no two kinds
// of transfer or destinations share an entry.
#include <gtest/gtest.h>

#include "components/network/route_cache.hpp"
#include "components/network/topology.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

TEST(RouteCache, ReadsWritesAndSendsNeverShareAnEntry) {
  // 4 PEs per cube and 8 HBM channels per cube: more (cube, channel) pairs than PEs, so a key
  // that packs them into one number can let a send find a read's route.
  const SystemConfig cfg = testing::small_config(1, 2, 2);
  ASSERT_LT(cfg.cube.pes, cfg.cube.hbm.channels);
  const Topology topo(cfg);
  RouteCache cache(topo);
  const std::uint32_t pes = cfg.cube.pes, channels = cfg.cube.hbm.channels;
  for (std::uint32_t round = 0; round < 2; ++round)  // made, then found again
    for (std::uint32_t cube = 0; cube < 2; ++cube)
      for (std::uint32_t ch = 0; ch < channels; ++ch) {
        const Location loc{cube, 0};
        EXPECT_EQ(cache.get(TransferKind::read, 0, 0, loc, ch).links,
                  topo.memory_to_pe(cube, ch, 0).links);
        EXPECT_EQ(cache.get(TransferKind::read, 0, 0, loc, ch).pre_delay,
                  topo.memory_to_pe(cube, ch, 0).pre_delay);
        EXPECT_EQ(cache.get(TransferKind::write, 0, 0, loc, ch).links,
                  topo.pe_to_memory(0, cube, ch).links);
        for (std::uint32_t peer = 1; peer < 2 * pes; ++peer)
          EXPECT_EQ(cache.get(TransferKind::send, 0, peer, {}, 0).links,
                    topo.pe_to_pe(0, peer).links)
              << "after the routes of channel " << ch << " of cube " << cube;
      }
  EXPECT_EQ(cache.size(), 2 * 2 * channels + (2 * pes - 1));
}

TEST(RouteCache, RoutesStayWhereTheyWereAsTheCacheGrows) {
  const SystemConfig cfg = testing::small_config(1, 2, 2);
  const Topology topo(cfg);
  RouteCache cache(topo);
  const Route* first = &cache.get(TransferKind::send, 0, 1, {}, 0);
  const std::vector<LinkId> links = first->links;
  for (std::uint32_t pe = 0; pe < topo.total_pes(); ++pe)
    for (std::uint32_t peer = 0; peer < topo.total_pes(); ++peer)
      (void)cache.get(TransferKind::send, pe, peer, {}, 0);
  EXPECT_EQ(&cache.get(TransferKind::send, 0, 1, {}, 0), first);
  EXPECT_EQ(first->links, links);
}

}  // namespace
}  // namespace cubesim::components
