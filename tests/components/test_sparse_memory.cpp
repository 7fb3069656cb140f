#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "components/memory/sparse_memory.hpp"
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

// Counts settles and, like a real holder, takes its marks back when settling.
class CountingHolder final : public SparseMemory::Holder {
 public:
  explicit CountingHolder(SparseMemory& mem) : mem_(mem) { mem_.attach(*this); }
  ~CountingHolder() override { mem_.detach(*this); }
  void hold(std::uint64_t addr, std::uint64_t bytes, bool write) {
    mem_.hold(*this, addr, bytes, write);
    marks_.push_back({addr, bytes, write});
  }
  void settle() override {
    ++settles;
    for (const auto& m : marks_) mem_.unhold(*this, m.addr, m.bytes, m.write);
    marks_.clear();
  }
  int settles = 0;

 private:
  struct Mark {
    std::uint64_t addr, bytes;
    bool write;
  };
  SparseMemory& mem_;
  std::vector<Mark> marks_;
};

TEST(SparseMemoryHold, OnlyAccessesThatConflictWithAMarkSettle) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  CountingHolder holder(mem);
  const std::uint64_t page = c.memory.page_bytes;
  const std::uint64_t operand = map.direct_address({0, 0}), out = map.direct_address({0, 4 * page});
  const std::uint64_t elsewhere = map.direct_address({0, 8 * page});
  std::vector<unsigned char> buf(64, 0x5A);

  holder.hold(operand, page + 10, false);            // two pages to be read
  holder.hold(out, 100, true);                       // one page to be written
  mem.read(operand + page, buf.data(), buf.size());  // reading what is still to be read: fine
  mem.write(elsewhere, buf.data(), buf.size());      // an unmarked page: fine
  mem.read(out + page, buf.data(), buf.size());      // the page after the output's: fine
  EXPECT_EQ(holder.settles, 0);
  EXPECT_EQ(mem.newest_write(operand, page), 0u);  // no write; no settle either
  EXPECT_EQ(holder.settles, 0);

  mem.read(out + 50, buf.data(), 1);  // would see a held write
  EXPECT_EQ(holder.settles, 1);

  holder.hold(operand, page + 10, false);
  mem.write(operand + page + 9, buf.data(), 1);  // changes what is still to be read
  EXPECT_EQ(holder.settles, 2);

  holder.hold(out, 100, true);
  mem.write(out, buf.data(), 1);  // a write over a held write: the held one goes first
  EXPECT_EQ(holder.settles, 3);

  holder.hold(out, 100, true);
  EXPECT_EQ(mem.newest_write(out, 1), mem.write_generation());  // also settles
  EXPECT_EQ(holder.settles, 4);
}

TEST(SparseMemoryHold, HoldingSettlesWhatItWouldConflictWithExceptOtherHeldWrites) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  CountingHolder holder(mem);
  const std::uint64_t a = map.direct_address({1, 0});
  holder.hold(a, 64, true);
  holder.hold(a, 64, true);   // two held writes: the holder orders them
  holder.hold(a, 64, false);  // reading a page with a held write: settles first
  EXPECT_EQ(holder.settles, 1);
  holder.hold(a, 64, false);
  holder.hold(a, 64, true);  // writing a page still to be read: settles first
  EXPECT_EQ(holder.settles, 2);
}

TEST(SparseMemoryHold, MarksArePhysicalSoBothWindowsSeeThem) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  CountingHolder holder(mem);
  // Granule 1 of the interleaved window is granule 0 of cube 1.
  holder.hold(map.direct_address({1, 0}), 16, true);
  std::uint32_t v = 0;
  mem.read(AddressMap::kInterleavedBase, &v, sizeof v);  // granule 0: cube 0, unmarked
  EXPECT_EQ(holder.settles, 0);
  mem.read(AddressMap::kInterleavedBase + map.interleave_bytes(), &v, sizeof v);
  EXPECT_EQ(holder.settles, 1);
}

TEST(SparseMemoryHold, EachHolderSettlesOnlyForItsOwnMarks) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  CountingHolder reader(mem), writer(mem);
  const std::uint64_t page = c.memory.page_bytes;
  const std::uint64_t p0 = map.direct_address({0, 0}), p1 = p0 + page;
  std::uint32_t v = 1;
  reader.hold(p0, 16, false);
  writer.hold(p1, 16, true);
  mem.write(p0, &v, sizeof v);  // changes what `reader` has still to read; nothing of `writer`
  EXPECT_EQ(reader.settles, 1);
  EXPECT_EQ(writer.settles, 0);
  reader.hold(p1, 16, false);  // would read what `writer` holds back
  EXPECT_EQ(writer.settles, 1);
  EXPECT_EQ(reader.settles, 1);
  writer.hold(p0, 16, true);
  writer.hold(p0, 16, true);  // its own held writes: no settle
  EXPECT_EQ(writer.settles, 1);
  reader.hold(p0 + 8, 8, true);  // another holder's held write on the page: that one settles
  EXPECT_EQ(writer.settles, 2);
}

TEST(SparseMemoryHold, MisuseIsALogicError) {
  const SystemConfig c = testing::small_config(1, 2);
  const AddressMap map(c);
  SparseMemory mem(map, c.memory.page_bytes);
  const std::uint64_t a = map.direct_address({0, 0});
  struct Idle final : SparseMemory::Holder {
    void settle() override {}
  } idle;
  EXPECT_THROW(mem.hold(idle, a, 16, false), std::logic_error);  // not attached
  EXPECT_THROW(mem.detach(idle), std::logic_error);
  CountingHolder first(mem), second(mem);
  EXPECT_THROW(mem.attach(idle), std::logic_error);                // kMaxHolders are attached
  EXPECT_THROW(mem.attach(first), std::logic_error);               // already attached
  EXPECT_THROW(mem.unhold(first, a, 16, true), std::logic_error);  // never held
  first.hold(a, 16, false);
  EXPECT_THROW(mem.unhold(first, a, 16, true), std::logic_error);    // held for reading
  EXPECT_THROW(mem.unhold(second, a, 16, false), std::logic_error);  // held by the other
}

}  // namespace
}  // namespace cubesim::components
