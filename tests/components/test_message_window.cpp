// The credit loop of each class of message channel and the window the loader gives a class the
// spec leaves out (components/network/message_window.hpp), derived here from the configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "components/network/message_window.hpp"
#include "components/spec/spec.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;

std::filesystem::path shipped(const char* name) {
  return std::filesystem::path(CUBESIM_SOURCE_DIR) / "specs" / name;
}

// small_config: 2 SIPs of 2 cubes of a 4x4 mesh; 64 GB/s mesh links of 2 ns hops, 32 GB/s UCIe
// links of 10 ns, 16 GB/s inter-SIP links of 500 ns; slots in PE SRAM read at 512 GB/s.
TEST(MessageWindow, EachClassLoopIsItsFarthestPathThereAndBackWithTheSlotsCosts) {
  const SystemConfig c = testing::small_config(2, 2, 4);
  const MessagesConfig& m = c.messages;
  const std::uint64_t s = 4096;
  const Tick across_mesh = 6 * c.cube.noc.hop_latency;  // (4 - 1) + (4 - 1) hops
  const Tick read = m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(s);
  // Mesh: the mesh's diameter each way, at the link's rate.
  const CreditLoop mesh = credit_loop(c, ChannelClass::mesh, s);
  const Bandwidth link = c.cube.noc.link_bandwidth;
  EXPECT_EQ(mesh.one_way, across_mesh);
  EXPECT_EQ(mesh.round_trip, 2 * across_mesh + link.transfer_time(s) + 2 * m.pe_sram_latency +
                                 read + link.transfer_time(m.credit_bytes));
  EXPECT_EQ(mesh.rate(), link.bytes_per_s());
  // UCIe: a ring of two cubes, one crossing, a mesh's width before it and after.
  const CreditLoop ucie = credit_loop(c, ChannelClass::ucie, s);
  const Bandwidth u = c.ucie.bandwidth;
  const Tick sip_one_way = c.ucie.latency + 2 * across_mesh;
  EXPECT_EQ(ucie.one_way, sip_one_way);
  EXPECT_EQ(ucie.round_trip, 2 * sip_one_way + u.transfer_time(s) + 2 * m.pe_sram_latency + read +
                                 u.transfer_time(m.credit_bytes));
  EXPECT_EQ(ucie.rate(), u.bytes_per_s());
  // Inter-SIP: to the port cube and from it on the far SIP, and one inter-SIP crossing.
  const CreditLoop sip = credit_loop(c, ChannelClass::inter_sip, s);
  const Bandwidth x = c.inter_sip.bandwidth;
  const Tick one_way = 2 * sip_one_way + c.inter_sip.latency + across_mesh;
  EXPECT_EQ(sip.one_way, one_way);
  EXPECT_EQ(sip.round_trip, 2 * one_way + x.transfer_time(s) + 2 * m.pe_sram_latency + read +
                                x.transfer_time(m.credit_bytes));
  // Slots: the loop's bytes at the rate, in slots, rounded up; at least two.
  for (const CreditLoop& l : {mesh, ucie, sip}) {
    const double bdp = static_cast<double>(l.round_trip) * 1e-12 * static_cast<double>(l.rate());
    EXPECT_NEAR(static_cast<double>(l.bdp_bytes()), bdp, 1.0);
    EXPECT_EQ(l.slots_needed(),
              std::max<std::uint32_t>(2, static_cast<std::uint32_t>(
                                             std::ceil(static_cast<double>(l.bdp_bytes()) / s))));
    EXPECT_DOUBLE_EQ(l.covered(l.slots_needed()), 1.0);
    EXPECT_LT(l.covered(1), 1.0);
  }
  EXPECT_GT(sip.slots_needed(), ucie.slots_needed());
}

TEST(MessageWindow, HbmSlotsAddTheWriteAndAReadAcrossTheMeshAtAChannelsRate) {
  SystemConfig c = testing::small_config(1, 2, 4);
  c.messages.memory = SlotMemory::hbm;
  const std::uint64_t s = 4096;
  const CreditLoop l = credit_loop(c, ChannelClass::mesh, s);
  const Tick across_mesh = 6 * c.cube.noc.hop_latency;
  const Bandwidth channel = Bandwidth::from_bytes_per_s(c.cube.hbm.bandwidth.bytes_per_s() /
                                                        c.cube.hbm.channels);  // 64 GB/s
  EXPECT_EQ(l.rate(), channel.bytes_per_s());
  EXPECT_EQ(l.round_trip, 2 * across_mesh + channel.transfer_time(s) + c.cube.hbm.latency +
                              2 * across_mesh + c.cube.hbm.latency + channel.transfer_time(s) +
                              c.cube.noc.link_bandwidth.transfer_time(c.messages.credit_bytes));
}

// An access from a PE to its cube's HBM: across the mesh and back, the HBM's latency, the bytes
// at one channel's rate.
TEST(MessageWindow, AnHbmRoundTripIsTheMeshBothWaysTheLatencyAndTheBytesAtAChannel) {
  SystemConfig c = testing::small_config(1, 2, 4);
  const Tick across_mesh = 6 * c.cube.noc.hop_latency;  // (4 - 1) + (4 - 1) hops
  const Bandwidth channel =
      Bandwidth::from_bytes_per_s(c.cube.hbm.bandwidth.bytes_per_s() / c.cube.hbm.channels);
  for (const std::uint64_t bytes : {64u, 4096u, 65536u})
    EXPECT_EQ(hbm_round_trip(c, bytes),
              2 * across_mesh + c.cube.hbm.latency + channel.transfer_time(bytes))
        << bytes;
  c.cube.hbm.latency = emu::ns(1000);
  EXPECT_EQ(hbm_round_trip(c, 4096), 2 * across_mesh + emu::ns(1000) + channel.transfer_time(4096));
}

TEST(MessageWindow, TheDefaultCoversTheLoopUpToAQuarterOfTheSlotsMemory) {
  SystemConfig c = testing::small_config(2, 2, 4);
  const std::uint64_t s = 4096;
  for (ChannelClass k : kAllChannelClasses)
    EXPECT_EQ(default_slots(c, k, s), credit_loop(c, k, s).slots_needed()) << channel_class_name(k);
  c.pe.sram_bytes = 16 * 1024;  // a quarter is one slot
  EXPECT_EQ(default_slots(c, ChannelClass::inter_sip, s), 1u);
  c.messages.memory = SlotMemory::hbm;  // no cap but the spec's limit
  c.inter_sip.latency = emu::ns(1'000'000);
  EXPECT_EQ(default_slots(c, ChannelClass::inter_sip, s), kMaxMessageSlots);
}

TEST(MessageWindow, TheLoaderFillsEachClassFromItsFieldsTheSectionsOrTheLoop) {
  const Spec large = Spec::load(shipped("large.json"));
  for (ChannelClass k : kAllChannelClasses) {
    const MessageWindow& w = large.config().messages.window(k);
    EXPECT_TRUE(w.automatic) << channel_class_name(k);
    EXPECT_EQ(w.slot_bytes, 4096u);
    EXPECT_EQ(w.slots, default_slots(large.config(), k, 4096)) << channel_class_name(k);
  }
  // large.json's inter-SIP loop needs more than a quarter of a PE's SRAM: capped, and said.
  const CreditLoop far = credit_loop(large.config(), ChannelClass::inter_sip, 4096);
  EXPECT_EQ(large.config().messages.window(ChannelClass::inter_sip).slots,
            large.config().pe.sram_bytes / 4 / 4096);
  EXPECT_LT(far.covered(large.config().messages.window(ChannelClass::inter_sip).slots), 1.0);

  const Spec all = large.with("system.messages.slots", 3);
  for (ChannelClass k : kAllChannelClasses) {
    EXPECT_EQ(all.config().messages.window(k).slots, 3u);
    EXPECT_FALSE(all.config().messages.window(k).automatic);
  }
  const Spec one = large.with({{"system.messages.slots", 3},
                               {"system.messages.inter_sip.slots", 200},
                               {"system.messages.ucie.slot_KiB", 8}});
  const MessagesConfig& m = one.config().messages;
  EXPECT_EQ(m.window(ChannelClass::mesh).slots, 3u);
  EXPECT_EQ(m.window(ChannelClass::inter_sip).slots, 200u);
  EXPECT_EQ(m.window(ChannelClass::ucie).slots, 3u);
  EXPECT_EQ(m.window(ChannelClass::ucie).slot_bytes, 8192u);
  EXPECT_EQ(m.window(ChannelClass::mesh).slot_bytes, 4096u);
}

// HBM slots that are whole turns of the channel interleave would all begin on the same HBM
// channel: hbm_slot_stride skews them so that the first channel of each of a buffer's slots
// differs, spread over the turn; slots that are not whole turns keep their size as stride.
TEST(MessageWindow, HbmSlotsOfWholeTurnsStartOnDifferentChannels) {
  HbmConfig hbm;
  for (const std::uint32_t channels : {4U, 32U, 128U})
    for (const std::uint64_t granule : {std::uint64_t{1024}, std::uint64_t{4096}}) {
      hbm.channels = channels;
      hbm.channel_interleave_bytes = granule;
      const std::uint64_t turn = channels * granule;
      for (const std::uint64_t slot : {turn, 4 * turn})
        for (const std::uint32_t slots : {2U, 3U, 4U}) {
          const std::uint64_t stride = hbm_slot_stride(hbm, slot, slots);
          EXPECT_GT(stride, slot);
          EXPECT_EQ(stride % granule, 0U);
          std::set<std::uint64_t> first;
          for (std::uint32_t i = 0; i < slots; ++i) first.insert(i * stride / granule % channels);
          EXPECT_EQ(first.size(), slots) << channels << " " << granule << " " << slot;
          // Spread: consecutive slots a share of the turn apart.
          EXPECT_GE((stride - slot) / granule, std::max<std::uint64_t>(1, channels / slots))
              << channels << " " << slots;
        }
      EXPECT_EQ(hbm_slot_stride(hbm, turn + granule, 4), turn + granule);
      EXPECT_EQ(hbm_slot_stride(hbm, turn / 2, 4), turn / 2);
    }
}

TEST(MessageWindow, AChannelsClassIsTheFarthestLinkItsRouteCrosses) {
  const SystemConfig c = testing::small_config(2, 2, 4);
  EXPECT_EQ(c.channel_class(0, 15), ChannelClass::mesh);
  EXPECT_EQ(c.channel_class(0, 16), ChannelClass::ucie);
  EXPECT_EQ(c.channel_class(31, 32), ChannelClass::inter_sip);
  EXPECT_EQ(c.channel_class(40, 50), ChannelClass::ucie);
  EXPECT_TRUE(has_channel_class(c, ChannelClass::inter_sip));
  EXPECT_FALSE(has_channel_class(testing::small_config(1, 2, 4), ChannelClass::inter_sip));
  EXPECT_FALSE(has_channel_class(testing::small_config(1, 1, 4), ChannelClass::ucie));
}

}  // namespace
}  // namespace cubesim::components
