// The cube cache: its replacement and allocation rules on their own, and what the network does
// with a hit (served by the channel's cache slice after the hit latency) and a miss (HBM).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "components/cache/cube_cache.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

constexpr std::uint64_t kMemory = std::uint64_t{1} << 30;  // per cube

CacheConfig geometry(std::uint64_t bytes, std::uint32_t ways, std::uint32_t line) {
  CacheConfig c;
  c.model = CacheModel::lru;
  c.size_bytes = bytes;
  c.ways = ways;
  c.line_bytes = line;
  return c;
}

TEST(CubeCache, TheLeastRecentlyUsedLineOfASetIsReplaced) {
  CubeCaches c(geometry(4 * 128 * 2, 2, 128), 1, kMemory);  // 4 sets of 2 ways
  ASSERT_EQ(c.sets(), 4u);
  // Lines 1, 5, 9 share set 1.
  EXPECT_FALSE(c.read(0, 1));
  EXPECT_FALSE(c.read(0, 5));
  EXPECT_TRUE(c.read(0, 1));   // 5 is now the least recently used
  EXPECT_FALSE(c.read(0, 9));  // replaces 5
  EXPECT_TRUE(c.read(0, 1));
  EXPECT_TRUE(c.read(0, 9));
  EXPECT_FALSE(c.read(0, 5));  // replaces 1
  EXPECT_FALSE(c.read(0, 1));
  EXPECT_FALSE(c.read(0, 2));  // another set: an empty way, no eviction
  const CacheStats& s = c.stats();
  EXPECT_EQ(s.read_hits, 3u);
  EXPECT_EQ(s.read_misses, 6u);
  EXPECT_EQ(s.evictions, 3u);  // 5, 1, 9
  EXPECT_DOUBLE_EQ(s.hit_rate(), 3.0 / 9.0);
}

TEST(CubeCache, AWorkingSetThatFitsHitsOnItsSecondPassAndOneSetTooManyThrashes) {
  // 64 KiB of 128-byte lines in 4 ways: 128 sets, 512 lines.
  const CacheConfig g = geometry(64 * 1024, 4, 128);
  const std::uint64_t lines = g.size_bytes / g.line_bytes;
  for (const std::uint64_t extra : {std::uint64_t{0}, std::uint64_t{128}}) {
    CubeCaches c(g, 1, kMemory);
    for (int pass = 0; pass < 2; ++pass)
      for (std::uint64_t l = 0; l < lines + extra; ++l) (void)c.read(0, l);
    // Fits: the second pass hits every line. One line more per set, read in a cycle: LRU
    // replaces each line just before it is read again, so nothing ever hits.
    EXPECT_EQ(c.stats().read_hits, extra == 0 ? lines : 0u) << extra;
    EXPECT_EQ(c.stats().read_misses, extra == 0 ? lines : 2 * (lines + extra)) << extra;
  }
}

TEST(CubeCache, WholeLineWritesAllocateAndPartialOnesOnlyRefresh) {
  CubeCaches c(geometry(4 * 128 * 2, 2, 128), 1, kMemory);
  c.write(0, 3, /*whole=*/false);
  EXPECT_FALSE(c.read(0, 3));  // a partial write fetched nothing; the read allocates
  c.write(0, 6, /*whole=*/true);
  EXPECT_TRUE(c.read(0, 6));
  EXPECT_FALSE(c.read(0, 7));      // set 3's second way: 3 is now its least recent
  c.write(0, 3, /*whole=*/false);  // present: refreshed, so 7 is the least recent
  EXPECT_FALSE(c.read(0, 11));     // replaces 7
  EXPECT_TRUE(c.read(0, 3));
  EXPECT_FALSE(c.read(0, 7));
  EXPECT_EQ(c.stats().write_hits, 1u);
  EXPECT_EQ(c.stats().write_misses, 2u);
}

TEST(CubeCache, EachCubeCachesItsOwnLines) {
  CubeCaches c(geometry(4 * 128, 1, 128), 2, kMemory);
  EXPECT_FALSE(c.read(0, 5));
  EXPECT_FALSE(c.read(1, 5));
  EXPECT_TRUE(c.read(0, 5));
  EXPECT_TRUE(c.read(1, 5));
  c.clear();
  EXPECT_FALSE(c.read(0, 5));
}

// Stamps are 32 bits: when a cube's run out, each set's are renumbered in the same order, and
// replacement goes on choosing the least recently used.
TEST(CubeCache, WhenStampsRunOutTheOrderOfUseIsKept) {
  CubeCaches c(geometry(4 * 128 * 2, 2, 128), 1, kMemory);  // 4 sets of 2 ways
  EXPECT_FALSE(c.read(0, 1));
  EXPECT_FALSE(c.read(0, 5));
  c.advance_clock(0, UINT32_MAX - 1);
  EXPECT_TRUE(c.read(0, 1));   // the last stamp: 5 is the least recent
  EXPECT_FALSE(c.read(0, 2));  // another set, after the renumbering
  EXPECT_FALSE(c.read(0, 9));  // replaces 5
  EXPECT_TRUE(c.read(0, 1));
  EXPECT_FALSE(c.read(0, 5));  // replaces 9
  EXPECT_TRUE(c.read(0, 1));
}

TEST(CubeCache, AGeometryOfPartSetsIsRefused) {
  EXPECT_THROW(CubeCaches(geometry(1000, 2, 128), 1, kMemory), std::invalid_argument);
  EXPECT_THROW(CubeCaches(geometry(128, 2, 128), 1, kMemory), std::invalid_argument);
  // One set of one 32-byte line over 2^37 bytes: 2^32 lines a tag must tell apart.
  EXPECT_THROW(CubeCaches(geometry(32, 1, 32), 1, std::uint64_t{1} << 37), std::invalid_argument);
  EXPECT_NO_THROW(CubeCaches(geometry(32, 1, 32), 1, (std::uint64_t{1} << 37) - 64));
}

SystemConfig cached_config() {
  SystemConfig c = testing::small_config();
  c.cube.cache = geometry(std::uint64_t{1} << 20, 8, 128);
  c.cube.cache.hit_latency = emu::ns(10);
  c.cube.cache.bandwidth = Bandwidth::from_GBps(1024);  // 8 slices of 128 GB/s
  return c;
}

// The time from issuing one transfer to its completion, on a bench that may have run before.
Tick time_one(testing::Bench& b, const std::function<void(Network::Done)>& issue) {
  const Tick start = b.sched.now();
  return testing::run_one(b, issue) - start;
}

TEST(CubeCache, AHitIsServedByTheChannelsSliceAfterTheHitLatency) {
  // PE 0 sits on the controller's node: no hops, so a read's time is its access latency and
  // the serialisation on the link it leaves from (the mesh runs at 64 GB/s, slower than a
  // slice at 128: the PE's ejection port serialises too, but cut through after the slice).
  constexpr std::uint64_t kBytes = 256;
  for (const NetworkModel network : {NetworkModel::packet, NetworkModel::flow}) {
    testing::Bench b(cached_config(), SystemOptions{false, network});
    const SystemConfig& c = b.cfg();
    const Bandwidth channel = Bandwidth::from_bytes_per_s(c.cube.hbm.bandwidth.bytes_per_s() / 8);
    const Bandwidth slice = Bandwidth::from_bytes_per_s(c.cube.cache.bandwidth.bytes_per_s() / 8);
    const auto read = [&](auto done) { b.network().read(0, b.addr(0, 0), kBytes, done); };
    const Tick miss = time_one(b, read);
    const Tick hit = time_one(b, read);
    const Tick eject = c.cube.noc.link_bandwidth.transfer_time(kBytes);
    EXPECT_EQ(miss, c.cube.hbm.latency + std::max(channel.transfer_time(kBytes), eject))
        << network_model_name(network);
    EXPECT_EQ(hit, c.cube.cache.hit_latency + std::max(slice.transfer_time(kBytes), eject))
        << network_model_name(network);
    ASSERT_TRUE(b.network().cache());
    EXPECT_EQ(b.network().cache()->stats().read_hits, 2u);  // 256 bytes: two lines
    EXPECT_EQ(b.network().cache()->stats().read_misses, 2u);
  }
}

TEST(CubeCache, AReadIsSplitByLineBetweenTheCacheAndHbmAndWritesGoThrough) {
  for (const NetworkModel network : {NetworkModel::packet, NetworkModel::flow}) {
    testing::Bench b(cached_config(), SystemOptions{false, network});
    const std::uint64_t base = b.addr(1, 64 * 1024);
    (void)time_one(b, [&](auto done) { b.network().read(5, base + 4096, 4096, done); });
    // Lines [4096, 8192) are there; [0, 4096) and [8192, 12288) are not.
    (void)time_one(b, [&](auto done) { b.network().read(9, base, 3 * 4096, done); });
    // A write of whole lines [16384, 16384 + 1024) and part of the next line.
    (void)time_one(b, [&](auto done) { b.network().write(2, base + 16384, 1024 + 64, done); });
    (void)time_one(b, [&](auto done) { b.network().read(3, base + 16384, 1024 + 128, done); });
    const LinkStats s = b.network().link_stats(b.sched.now());
    const std::uint64_t hits = 4096 + 1024;          // read back: the read lines, the written ones
    const std::uint64_t hbm = 4096 + 2 * 4096 + 128  // misses, and the partly written line
                              + 1024 + 64;           // the write, through
    EXPECT_EQ(s.bytes(LinkKind::cache), hits) << network_model_name(network);
    EXPECT_EQ(s.bytes(LinkKind::hbm_channel), hbm) << network_model_name(network);
    ASSERT_TRUE(s.cache);
    EXPECT_EQ(s.cache->read_hits, hits / 128);
    EXPECT_EQ(s.cache->read_misses, (3 * 4096 + 128) / 128);
    EXPECT_EQ(s.cache->write_misses, 9u);  // 8 whole lines allocated, one part line not
  }
}

TEST(CubeCache, WithoutACacheNoSliceExistsAndNothingIsCounted) {
  testing::Bench b(testing::small_config());
  EXPECT_FALSE(b.sys.topology().has_cache());
  EXPECT_EQ(b.network().cache(), nullptr);
  (void)time_one(b, [&](auto done) { b.network().read(0, b.addr(0, 0), 4096, done); });
  EXPECT_FALSE(b.network().link_stats(b.sched.now()).cache);
}

}  // namespace
}  // namespace cubesim::components
