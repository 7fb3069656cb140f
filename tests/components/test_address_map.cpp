#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "components/memory/address_map.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using ::testing::HasSubstr;

TEST(AddressMap, DirectAddressesRoundTripThroughSipCubeAndOffset) {
  const SystemConfig c = testing::small_config(/*sips=*/3, /*cubes_per_sip=*/4);
  const AddressMap map(c);
  for (std::uint32_t g = 0; g < map.cubes(); ++g)
    for (std::uint64_t off : {std::uint64_t{0}, std::uint64_t{4095}, std::uint64_t{12345678},
                              c.cube.hbm.capacity_bytes - 1}) {
      const std::uint64_t a = map.direct_address({g, off});
      const Location loc = map.decode(a);
      EXPECT_EQ(loc.global_cube, g);
      EXPECT_EQ(loc.offset, off);
      EXPECT_EQ(map.cube_id(g).sip, g / 4);
      EXPECT_EQ(map.cube_id(g).cube, g % 4);
      EXPECT_EQ(map.global_cube(map.cube_id(g)), g);
    }
}

TEST(AddressMap, InterleavedAddressesRoundTrip) {
  const SystemConfig c = testing::small_config(2, 4);
  const AddressMap map(c);
  for (std::uint64_t w : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4096 * 7 + 5},
                          map.interleaved_size() - 1}) {
    const std::uint64_t a = AddressMap::kInterleavedBase + w;
    const Location loc = map.decode(a);
    EXPECT_EQ(map.interleaved_address(loc), a);
    EXPECT_EQ(loc.global_cube, (w / 4096) % 8);
  }
}

TEST(AddressMap, InterleavingSpreadsGranulesEvenlyOverCubesAndChannels) {
  const SystemConfig c = testing::small_config(2, 4);  // 8 cubes, 8 channels, 4 KiB granules
  const AddressMap map(c);
  std::map<std::uint32_t, int> per_cube;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> per_channel;
  const int granules = 8 * 8 * 16;
  for (int i = 0; i < granules; ++i) {
    const Location loc = map.decode(AddressMap::kInterleavedBase + std::uint64_t(i) * 4096);
    ++per_cube[loc.global_cube];
    ++per_channel[{loc.global_cube, map.channel(loc)}];
  }
  ASSERT_EQ(per_cube.size(), 8u);
  for (auto [cube, n] : per_cube) EXPECT_EQ(n, granules / 8) << "cube " << cube;
  ASSERT_EQ(per_channel.size(), 64u);
  for (auto [k, n] : per_channel) EXPECT_EQ(n, granules / 64);
}

TEST(AddressMap, UnmappedAddressErrorNamesTheAddressAndTheRanges) {
  const SystemConfig c = testing::small_config();
  const AddressMap map(c);
  try {
    map.decode(0x1000);
    FAIL() << "no error";
  } catch (const AddressError& e) {
    EXPECT_THAT(e.what(), HasSubstr("0x1000"));
    EXPECT_THAT(e.what(), HasSubstr("outside every HBM range"));
    EXPECT_THAT(e.what(), HasSubstr("[0x100000000, 0x180000000)"));  // 2 cubes of 1 GiB
    EXPECT_THAT(e.what(), HasSubstr("interleaved window"));
  }
  const std::uint64_t end = map.direct_address({1, c.cube.hbm.capacity_bytes - 8});
  EXPECT_NO_THROW(map.check_range(end, 8, "load"));
  EXPECT_THAT([&] { map.check_range(end, 9, "load"); },
              ::testing::ThrowsMessage<AddressError>(HasSubstr("load of 9 bytes")));
}

TEST(AddressMap, PiecesStopAtPacketChannelAndInterleaveBoundaries) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.channel_interleave_bytes = 8192;
  const AddressMap map(c);
  std::vector<std::uint64_t> lens;
  map.for_each_piece(map.direct_address({0, 1000}), 20000, 4096,
                     [&](std::uint64_t, Location, std::uint64_t len) { lens.push_back(len); });
  EXPECT_EQ(lens, (std::vector<std::uint64_t>{3096, 4096, 4096, 4096, 4096, 520}));
  lens.clear();
  map.for_each_piece(AddressMap::kInterleavedBase + 100, 9000, 65536,
                     [&](std::uint64_t, Location loc, std::uint64_t len) {
                       lens.push_back(len);
                       EXPECT_LT(loc.global_cube, 2u);
                     });
  EXPECT_EQ(lens, (std::vector<std::uint64_t>{3996, 4096, 908}));
}

// Pieces are maximal: each ends exactly where the next packet, channel granule or range
// boundary lies, for packet sizes that are and are not powers of two (two code paths).
TEST(AddressMap, PiecesEndAtTheNearestBoundaryForAnyPacketSize) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.channel_interleave_bytes = 8192;
  const AddressMap map(c);
  std::mt19937_64 rng(7);
  for (const std::uint64_t packet : {4096u, 3000u, 64u, 1000u}) {
    for (int trial = 0; trial < 50; ++trial) {
      const std::uint64_t offset = rng() % 100'000, bytes = 1 + rng() % 50'000;
      const std::uint64_t start = map.direct_address({0, offset});
      std::uint64_t expected_addr = start;
      const auto check = [&](std::uint64_t addr, Location loc, std::uint64_t len) {
        ASSERT_EQ(addr, expected_addr);
        const std::uint64_t to_packet = packet - addr % packet;
        const std::uint64_t to_channel = 8192 - loc.offset % 8192;
        const std::uint64_t to_end = start + bytes - addr;
        EXPECT_EQ(len, std::min({to_packet, to_channel, to_end}))
            << "packet " << packet << ", piece at offset " << loc.offset;
        expected_addr += len;
      };
      map.for_each_piece(start, bytes, packet, check);
      EXPECT_EQ(expected_addr, start + bytes);
    }
  }
}

TEST(Divisor, MatchesIntegerDivisionForPowersOfTwoAndOtherValues) {
  // Powers of two take the shift-and-mask path, the others divide; both must agree with / and %.
  const std::uint64_t divisors[] = {1,
                                    2,
                                    3,
                                    7,
                                    4096,
                                    6000,
                                    48 * 1024,
                                    std::uint64_t{1} << 40,
                                    (std::uint64_t{1} << 40) + 1,
                                    std::uint64_t{1} << 63,
                                    ~std::uint64_t{0}};
  std::mt19937_64 rng(20261122);
  for (const std::uint64_t d : divisors) {
    const Divisor div(d);
    EXPECT_EQ(div.value(), d);
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t x = i == 0 ? 0 : i == 1 ? d - 1 : i == 2 ? d : rng();
      ASSERT_EQ(div.quot(x), x / d) << x << " / " << d;
      ASSERT_EQ(div.rem(x), x % d) << x << " % " << d;
    }
  }
}

}  // namespace
}  // namespace cubesim::components
