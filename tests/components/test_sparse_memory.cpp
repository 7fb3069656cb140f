#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "components/memory/sparse_memory.hpp"
#include "system_config_for_tests.hpp"
#include "tests/resident_memory.hpp"

namespace cubesim::components {
namespace {

TEST(SparseMemory, WrittenBytesReadBackAcrossPagesAndCubes) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  std::mt19937_64 rng(7);
  std::vector<unsigned char> data(300000);
  for (auto& b : data) b = static_cast<unsigned char>(rng() | 1);
  // Straddles the end of cube 0 and the start of cube 1 in the direct window.
  const std::uint64_t addr = map.direct_address({0, c.cube.hbm.capacity_bytes - 100000});
  mem.write(addr, data.data(), data.size());
  std::vector<unsigned char> back(data.size());
  mem.read(addr, back.data(), back.size());
  EXPECT_EQ(back, data);
}

// Small reads and writes hopping between a few pages of two cubes (the page lookup remembers
// the last page: hops, first touches and reads of unwritten pages must all see the right
// page), against a flat model; pages smaller and larger than the interleave granule.
TEST(SparseMemory, SmallAccessesHoppingBetweenPagesMatchAFlatModel) {
  for (const std::uint64_t page : {std::uint64_t{1} << 10, std::uint64_t{16} << 10}) {
    SystemConfig c = testing::small_config(1, 2);
    c.cube.hbm.capacity_bytes = page * 64;
    const AddressMap map(c);
    SparseMemory mem(map, page);
    // Bytes [0, 4 pages) at the end of cube 0 and the start of cube 1, direct window.
    const std::uint64_t base = map.direct_address({0, c.cube.hbm.capacity_bytes - 2 * page});
    std::vector<unsigned char> model(4 * page, 0);
    std::mt19937_64 rng(page);
    std::vector<unsigned char> buf(200);
    for (int op = 0; op < 20000; ++op) {
      const std::uint64_t len = 1 + rng() % buf.size();
      const std::uint64_t off = rng() % (model.size() - len);
      if (rng() % 3 == 0) {
        for (std::uint64_t i = 0; i < len; ++i) buf[i] = static_cast<unsigned char>(rng() | 1);
        mem.write(base + off, buf.data(), len);
        std::memcpy(model.data() + off, buf.data(), len);
      } else {
        mem.read(base + off, buf.data(), len);
        ASSERT_EQ(std::memcmp(buf.data(), model.data() + off, len), 0)
            << "page " << page << ", op " << op << ": read of " << len << " bytes at +" << off;
      }
    }
  }
}

TEST(SparseMemory, PagesArePowersOfTwoThatDivideACubesCapacity) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.capacity_bytes = std::uint64_t{3} << 20;
  const AddressMap map(c);
  EXPECT_THROW(SparseMemory(map, 3 << 10), std::invalid_argument);  // divides, not a power of 2
  EXPECT_THROW(SparseMemory(map, 2 << 20), std::invalid_argument);  // does not divide
  EXPECT_NO_THROW(SparseMemory(map, 1 << 20));
}

TEST(SparseMemory, NeverWrittenBytesReadAsZeroAndAllocateNothing) {
  const SystemConfig c = testing::small_config();
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  std::vector<unsigned char> back(10000, 0xAB);
  mem.read(map.direct_address({1, 5}), back.data(), back.size());
  EXPECT_EQ(back, std::vector<unsigned char>(10000, 0));
  EXPECT_EQ(mem.pages_allocated(), 0u);
}

TEST(SparseMemory, StorageGrowsWithBytesWrittenNotWithCapacity) {
  SystemConfig c = testing::small_config(4, 8);
  c.cube.hbm.capacity_bytes = std::uint64_t{96} << 30;  // 3 TiB modelled
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  const std::uint32_t v = 0x3f800001;
  for (std::uint32_t g = 0; g < map.cubes(); ++g)
    mem.write(map.direct_address({g, c.cube.hbm.capacity_bytes / 2}), &v, sizeof v);
  EXPECT_EQ(mem.pages_allocated(), 32u);
  EXPECT_EQ(mem.bytes_allocated(), 32u * c.memory.page_bytes);
}

TEST(SparseMemory, AHugePageCostsTheHostOnlyWhatIsTouched) {
  // 1 GiB pages (the largest page_KiB): a few words written in each of four cubes' pages
  // must not make 4 GiB resident.
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer's shadow of the pages is resident";
#endif
  SystemConfig c = testing::small_config(1, 4);
  c.memory.page_bytes = std::uint64_t{1} << 30;
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  const std::uint64_t before = test::resident_bytes();
  std::mt19937 rng(5);
  for (std::uint32_t g = 0; g < map.cubes(); ++g) {
    const std::uint32_t v = static_cast<std::uint32_t>(rng()) | 1u;
    mem.write(map.direct_address({g, 12345 * 4}), &v, sizeof v);
    std::uint32_t back = 0;
    mem.read(map.direct_address({g, 12345 * 4}), &back, sizeof back);
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(mem.bytes_allocated(), std::uint64_t{4} << 30);
  if (before != 0) {
    EXPECT_LT(test::resident_bytes() - before, std::uint64_t{256} << 20);
  }
}

TEST(SparseMemory, DirectAndInterleavedWindowsSeeTheSameBytes) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  std::vector<std::uint32_t> data(4096);  // 16 KiB: four interleave granules
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint32_t>(i * 2654435761u + 1);
  mem.write(AddressMap::kInterleavedBase, data.data(), data.size() * 4);
  // Granule 1 of the window is granule 0 of cube 1.
  std::vector<std::uint32_t> back(1024);
  mem.read(map.direct_address({1, 0}), back.data(), 4096);
  EXPECT_EQ(0, std::memcmp(back.data(), data.data() + 1024, 4096));
}

}  // namespace
}  // namespace cubesim::components
