// The modelled memory as triton_emu uses it (triton_emu/memory/functional_memory.hpp): the byte
// store underneath, and the held-back work that an access settles first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "components/memory/address_map.hpp"
#include "components/memory/sparse_memory.hpp"
#include "components/spec/spec.hpp"
#include "spec_path.hpp"
#include "triton_emu/memory/functional_memory.hpp"

namespace cubesim::detail {
namespace {

using components::AddressMap;

// tiny.json: two cubes, 64 KiB pages, a 4 KiB interleave granule.
class FunctionalMemoryTest : public ::testing::Test {
 protected:
  FunctionalMemoryTest()
      : config_(components::Spec::load(spec_path("tiny.json")).config()),
        map_(config_),
        store_(map_, config_.memory.page_bytes),
        mem_(store_) {}

  components::SystemConfig config_;
  AddressMap map_;
  components::SparseMemory store_;
  FunctionalMemory mem_;
  const std::uint64_t page_ = config_.memory.page_bytes;
};

// Counts settles and, like a real holder, takes its marks back when settling; it may hold back
// a write of `value` to `out`, done when settled.
class CountingHolder final : public FunctionalMemory::Holder {
 public:
  explicit CountingHolder(FunctionalMemory& mem) : mem_(mem) { mem_.attach(*this); }
  ~CountingHolder() override { mem_.detach(*this); }
  void hold(std::uint64_t addr, std::uint64_t bytes, bool write) {
    mem_.hold(*this, addr, bytes, write);
    marks_.push_back({addr, bytes, write});
  }
  void hold_write_of(std::uint64_t addr, std::uint32_t value) {
    hold(addr, sizeof value, true);
    held_write_ = {addr, value};
  }
  void settle() override {
    ++settles;
    for (const auto& m : marks_) mem_.unhold(*this, m.addr, m.bytes, m.write);
    marks_.clear();
    if (held_write_.addr != 0) mem_.write(held_write_.addr, &held_write_.value, 4);
    held_write_ = {};
  }
  int settles = 0;

 private:
  struct Mark {
    std::uint64_t addr, bytes;
    bool write;
  };
  struct HeldWrite {
    std::uint64_t addr = 0;
    std::uint32_t value = 0;
  };
  FunctionalMemory& mem_;
  std::vector<Mark> marks_;
  HeldWrite held_write_;
};

TEST_F(FunctionalMemoryTest, WithNothingHeldItIsTheByteStore) {
  const std::uint64_t a = map_.direct_address({1, 3 * page_ - 8});  // across two pages
  const std::vector<std::uint32_t> data{1, 2, 3, 4, 5, 6};
  mem_.write(a, data.data(), data.size() * 4);
  std::vector<std::uint32_t> back(data.size());
  store_.read(a, back.data(), back.size() * 4);
  EXPECT_EQ(back, data);
  std::fill(back.begin(), back.end(), 0);
  mem_.read(a, back.data(), back.size() * 4);
  EXPECT_EQ(back, data);
  EXPECT_EQ(mem_.write_generation(), store_.write_generation());
  EXPECT_EQ(mem_.newest_write(a, 4), store_.write_generation());
  EXPECT_THROW(mem_.read(AddressMap::kDirectBase - 4, back.data(), 4), components::AddressError);
}

TEST_F(FunctionalMemoryTest, OnlyAccessesThatConflictWithAMarkSettle) {
  CountingHolder holder(mem_);
  const std::uint64_t operand = map_.direct_address({0, 0}),
                      out = map_.direct_address({0, 4 * page_});
  const std::uint64_t elsewhere = map_.direct_address({0, 8 * page_});
  std::vector<unsigned char> buf(64, 0x5A);

  holder.hold(operand, page_ + 10, false);             // two pages to be read
  holder.hold(out, 100, true);                         // one page to be written
  mem_.read(operand + page_, buf.data(), buf.size());  // reading what is still to be read: fine
  mem_.write(elsewhere, buf.data(), buf.size());       // an unmarked page: fine
  mem_.read(out + page_, buf.data(), buf.size());      // the page after the output's: fine
  EXPECT_EQ(holder.settles, 0);
  EXPECT_EQ(mem_.newest_write(operand, page_), 0u);  // no write; no settle either
  EXPECT_EQ(holder.settles, 0);

  mem_.read(out + 50, buf.data(), 1);  // would see a held write
  EXPECT_EQ(holder.settles, 1);

  holder.hold(operand, page_ + 10, false);
  mem_.write(operand + page_ + 9, buf.data(), 1);  // changes what is still to be read
  EXPECT_EQ(holder.settles, 2);

  holder.hold(out, 100, true);
  mem_.write(out, buf.data(), 1);  // a write over a held write: the held one goes first
  EXPECT_EQ(holder.settles, 3);

  holder.hold(out, 100, true);
  EXPECT_EQ(mem_.newest_write(out, 1), mem_.write_generation());  // also settles
  EXPECT_EQ(holder.settles, 4);
}

TEST_F(FunctionalMemoryTest, TheAccessThatSettlesSeesTheHeldWriteAndAWriteLandsAfterIt) {
  CountingHolder holder(mem_);
  const std::uint64_t a = map_.direct_address({1, page_});
  holder.hold_write_of(a, 7);
  std::uint32_t v = 0;
  mem_.read(a, &v, 4);
  EXPECT_EQ(v, 7u);
  holder.hold_write_of(a, 8);
  const std::uint32_t nine = 9;
  mem_.write(a, &nine, 4);  // the held write first, then this one over it
  mem_.read(a, &v, 4);
  EXPECT_EQ(v, 9u);
  EXPECT_EQ(holder.settles, 2);
}

TEST_F(FunctionalMemoryTest, HoldingSettlesWhatItWouldConflictWithExceptOtherHeldWrites) {
  CountingHolder holder(mem_);
  const std::uint64_t a = map_.direct_address({1, 0});
  holder.hold(a, 64, true);
  holder.hold(a, 64, true);   // two held writes: the holder orders them
  holder.hold(a, 64, false);  // reading a page with a held write: settles first
  EXPECT_EQ(holder.settles, 1);
  holder.hold(a, 64, false);
  holder.hold(a, 64, true);  // writing a page still to be read: settles first
  EXPECT_EQ(holder.settles, 2);
}

TEST_F(FunctionalMemoryTest, MarksArePhysicalSoBothWindowsSeeThem) {
  CountingHolder holder(mem_);
  // Granule 1 of the interleaved window is granule 0 of cube 1.
  holder.hold(map_.direct_address({1, 0}), 16, true);
  std::uint32_t v = 0;
  mem_.read(AddressMap::kInterleavedBase, &v, sizeof v);  // granule 0: cube 0, unmarked
  EXPECT_EQ(holder.settles, 0);
  mem_.read(AddressMap::kInterleavedBase + map_.interleave_bytes(), &v, sizeof v);
  EXPECT_EQ(holder.settles, 1);
}

TEST_F(FunctionalMemoryTest, EachHolderSettlesOnlyForItsOwnMarks) {
  CountingHolder reader(mem_), writer(mem_);
  const std::uint64_t p0 = map_.direct_address({0, 0}), p1 = p0 + page_;
  std::uint32_t v = 1;
  reader.hold(p0, 16, false);
  writer.hold(p1, 16, true);
  mem_.write(p0, &v, sizeof v);  // changes what `reader` has still to read; nothing of `writer`
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

TEST_F(FunctionalMemoryTest, MisuseIsALogicError) {
  const std::uint64_t a = map_.direct_address({0, 0});
  struct Idle final : FunctionalMemory::Holder {
    void settle() override {}
  } idle;
  EXPECT_THROW(mem_.hold(idle, a, 16, false), std::logic_error);  // not attached
  EXPECT_THROW(mem_.detach(idle), std::logic_error);
  CountingHolder first(mem_), second(mem_);
  EXPECT_THROW(mem_.attach(idle), std::logic_error);                // kMaxHolders are attached
  EXPECT_THROW(mem_.attach(first), std::logic_error);               // already attached
  EXPECT_THROW(mem_.unhold(first, a, 16, true), std::logic_error);  // never held
  first.hold(a, 16, false);
  EXPECT_THROW(mem_.unhold(first, a, 16, true), std::logic_error);    // held for reading
  EXPECT_THROW(mem_.unhold(second, a, 16, false), std::logic_error);  // held by the other
}

}  // namespace
}  // namespace cubesim::detail
