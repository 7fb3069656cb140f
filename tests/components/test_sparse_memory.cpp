#include "components/memory/sparse_memory.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "system_config_for_tests.hpp"

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

TEST(SparseMemory, DirectAndInterleavedWindowsSeeTheSameBytes) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  std::vector<std::uint32_t> data(4096);  // 16 KiB: four interleave granules
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 2654435761u + 1);
  mem.write(AddressMap::kInterleavedBase, data.data(), data.size() * 4);
  // Granule 1 of the window is granule 0 of cube 1.
  std::vector<std::uint32_t> back(1024);
  mem.read(map.direct_address({1, 0}), back.data(), 4096);
  EXPECT_EQ(0, std::memcmp(back.data(), data.data() + 1024, 4096));
}

}  // namespace
}  // namespace cubesim::components
