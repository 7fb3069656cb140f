// The banked HBM model's channel (components/hbm/banked_hbm.hpp): every expected time is worked
// out from the timing parameters and the address mapping the header states.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "components/hbm/banked_hbm.hpp"
#include "components/hbm/hbm_model.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

constexpr Tick kNoRefresh = Tick{1} << 50;        // further than any test runs
const Bandwidth kBus = Bandwidth::from_GBps(64);  // a 32-byte burst in 500 ps
constexpr Tick kBurst = 500;

DramTiming timing() {
  DramTiming t;  // the HBM3-class defaults, refresh out of the way
  t.trefi = kNoRefresh;
  return t;
}

// Serves every request queued, each when the bus frees; the requests' tags are their indices.
std::vector<DramChannel::Served> serve_all(DramChannel& ch) {
  std::vector<DramChannel::Served> out;
  Tick now = 0;
  while (!ch.empty()) {
    out.push_back(ch.serve(now));
    now = ch.bus_free();
  }
  return out;
}

void* tag(std::uintptr_t i) {
  return reinterpret_cast<void*>(i);
}
std::uintptr_t index_of(const DramChannel::Served& s) {
  return reinterpret_cast<std::uintptr_t>(s.tag);
}

// A row span: bank_groups x row_bytes of consecutive bytes, one row of one bank in every
// group. Span s = row * banks_per_group + j lies in bank (j + the row's base-4 digits) % 4.
constexpr std::uint64_t kSpan = 4 * 1024;

TEST(DramChannel, ASequentialStreamRunsAtTheBusRateOnceItsFirstRowsAreOpen) {
  const DramTiming t = timing();
  DramChannel ch(t, kBus, 0, 1);
  constexpr int kRequests = 64;
  for (int i = 0; i < kRequests; ++i)
    ch.push({std::uint64_t(i) * 4096, 4096, false, 0, tag(static_cast<std::uintptr_t>(i))});
  const auto served = serve_all(ch);
  // The first span opens a row in each of the 4 bank groups, tRRD apart; every later span's
  // banks open while earlier spans are read (each bank is reused 4 spans later, long after
  // tRAS + tRP).
  const Tick first = 3 * t.trrd + t.trcd + t.tcl;
  ASSERT_EQ(served.size(), std::size_t{kRequests});
  EXPECT_EQ(served.front().start, first);
  EXPECT_EQ(served.back().end, first + Tick{kRequests} * 128 * kBurst);
  for (std::size_t i = 1; i < served.size(); ++i) EXPECT_EQ(served[i].start, served[i - 1].end);
  EXPECT_EQ(ch.stats().reads, std::uint64_t{kRequests});
  EXPECT_EQ(ch.stats().row_hits, 0u);  // every span is a new row of its banks
}

TEST(DramChannel, RowsOfOneBankInTurnCostTrasPlusTrpEach) {
  // Rows 0, 1 and 2 of bank 0, group 0: bursts 0 of spans 0, 7 (= 1 * 4 + 3: bank (3 + 1) % 4)
  // and 10 (= 2 * 4 + 2: bank (2 + 2) % 4).
  const DramTiming t = timing();
  DramChannel ch(t, kBus, 0, 1);
  const std::uint64_t spans[] = {0, 7, 10};
  for (std::uintptr_t i = 0; i < 3; ++i) ch.push({spans[i] * kSpan, 32, false, 0, tag(i)});
  const auto served = serve_all(ch);
  // Each activate waits for the previous one's tRAS (longer than its tRCD + tCL + a burst),
  // then tRP.
  ASSERT_GT(t.tras, t.trcd + t.tcl + kBurst);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(served[i].end, Tick{i} * (t.tras + t.trp) + t.trcd + t.tcl + kBurst) << i;
  EXPECT_EQ(ch.stats().row_misses, 1u);
  EXPECT_EQ(ch.stats().row_conflicts, 2u);
}

TEST(DramChannel, RandomRowsOfDifferentBanksAreBoundByTrrd) {
  // One 32-byte burst in each of the 16 banks (4 groups x 4 banks): spans 0..3 hold banks
  // 0..3 of row 0, their bursts 0..3 lie in groups 0..3.
  const DramTiming t = timing();
  DramChannel ch(t, kBus, 0, 1);
  std::uintptr_t n = 0;
  for (std::uint64_t span = 0; span < 4; ++span)
    for (std::uint64_t group = 0; group < 4; ++group, ++n)
      ch.push({span * kSpan + group * 32, 32, false, 0, tag(n)});
  const auto served = serve_all(ch);
  ASSERT_EQ(served.size(), 16u);
  ASSERT_GT(t.trrd, kBurst);
  for (std::size_t i = 0; i < 16; ++i)
    EXPECT_EQ(served[i].end, Tick{i} * t.trrd + t.trcd + t.tcl + kBurst) << i;
  // 32 bytes per tRRD: the bus is busy a quarter of the time.
  EXPECT_EQ(ch.stats().row_misses, 16u);
}

TEST(DramChannel, RowHitsGoBeforeOlderRequestsThatNeedAnotherRow) {
  const DramTiming t = timing();
  DramChannel ch(t, kBus, 0, 1);
  ch.push({0, 32, false, 0, tag(0)});          // opens row 0 of bank 0, group 0
  ch.push({7 * kSpan, 32, false, 0, tag(1)});  // row 1 of the same bank: a conflict
  ch.push({128, 32, false, 0, tag(2)});        // row 0 of bank 0, group 0 again: a hit
  const auto served = serve_all(ch);
  ASSERT_EQ(served.size(), 3u);
  EXPECT_EQ(index_of(served[0]), 0u);
  EXPECT_EQ(index_of(served[1]), 2u);  // first ready
  EXPECT_EQ(index_of(served[2]), 1u);
  EXPECT_EQ(served[1].start, served[0].end);  // the open row's next burst follows at once
  EXPECT_EQ(ch.stats().row_hits, 1u);
}

TEST(DramChannel, TheClosedRowPolicyOpensTheRowAgainForEveryAccess) {
  DramTiming t = timing();
  t.row_policy = RowPolicy::closed;
  DramChannel ch(t, kBus, 0, 1);
  ch.push({0, 32, false, 0, tag(0)});
  ch.push({128, 32, false, 0, tag(1)});  // the same row: open would hit
  const auto served = serve_all(ch);
  const Tick first = t.trcd + t.tcl + kBurst;
  EXPECT_EQ(served[0].end, first);
  // Precharged after tRAS (longer than the access), then tRP, activate, tRCD, tCL.
  EXPECT_EQ(served[1].end, t.tras + t.trp + t.trcd + t.tcl + kBurst);
  EXPECT_EQ(ch.stats().row_hits, 0u);
  EXPECT_EQ(ch.stats().row_misses, 2u);
}

TEST(DramChannel, TheBusTurnsRoundBetweenReadsAndWrites) {
  const DramTiming t = timing();
  DramChannel ch(t, kBus, 0, 1);
  ch.push({0, 32, false, 0, tag(0)});   // read, group 0: activate at 0
  ch.push({32, 32, true, 0, tag(1)});   // write, group 1: activate at tRRD
  ch.push({64, 32, false, 0, tag(2)});  // read, group 2: activate at 2 tRRD
  const auto served = serve_all(ch);
  const Tick read_end = t.trcd + t.tcl + kBurst;
  EXPECT_EQ(served[0].end, read_end);
  // The write's data waits for the bus to turn round after the read's (its own row was ready
  // at tRRD + tRCD + tCWL, sooner).
  ASSERT_LT(t.trrd + t.trcd + t.tcwl, read_end + t.trtw);
  EXPECT_EQ(served[1].start, read_end + t.trtw);
  // The read after it: its command no sooner than tWTR after the write's data, then tCL.
  EXPECT_EQ(served[2].start, served[1].end + t.twtr + t.tcl);
  EXPECT_EQ(ch.stats().turnarounds, 2u);
  EXPECT_EQ(ch.stats().writes, 1u);
}

TEST(DramChannel, ABusyChannelPostponesRefreshesAndDoesThemWhenIdle) {
  DramTiming t = timing();
  t.trefi = emu::ns(1000);
  t.trfc = emu::ns(200);
  t.max_postponed_refreshes = 8;
  DramChannel ch(t, kBus, 0, 1);  // one channel: refreshes due at 1, 2, 3 ... us
  // A stream of 4 us, 2 us of data each request: no refresh while it is queued.
  for (std::uintptr_t i = 0; i < 64; ++i) ch.push({i * 4096, 4096, false, 0, tag(i)});
  const auto served = serve_all(ch);
  const Tick first = 3 * t.trrd + t.trcd + t.tcl;
  EXPECT_EQ(served.back().end, first + Tick{64} * 128 * kBurst);
  EXPECT_EQ(ch.stats().refreshes, 0u);
  // Idle for 1 us: the 4 refreshes owed and the one due meanwhile fit in it, delaying nothing;
  // they closed the rows, so the next read opens its row again.
  const Tick later = served.back().end + emu::ns(1000);
  ch.push({64 * 4096, 32, false, later, tag(64)});
  const DramChannel::Served s = ch.serve(later);
  EXPECT_EQ(ch.stats().refreshes, 5u);
  EXPECT_EQ(s.end, later + t.trcd + t.tcl + kBurst);
}

TEST(DramChannel, OwingMoreRefreshesThanAllowedStopsTheStream) {
  DramTiming t = timing();
  t.trefi = emu::ns(1000);
  t.trfc = emu::ns(200);
  t.max_postponed_refreshes = 0;  // every refresh as it falls due
  DramChannel ch(t, kBus, 0, 1);
  for (std::uintptr_t i = 0; i < 48; ++i) ch.push({i * 4096, 4096, false, 0, tag(i)});
  const auto served = serve_all(ch);
  // Each refresh starts when the request being served at its due time ends, takes tRFC, and
  // the next request opens its rows again (tRRD apart over the 4 groups) before its data.
  // Refreshes fall due at 1, 2 and 3 us; the stream (3.07 us of data, 64 ns a request) has
  // ended before the fourth.
  const Tick data = Tick{48} * 128 * kBurst;
  const Tick reopen = 3 * t.trrd + t.trcd + t.tcl;
  ASSERT_LT(reopen + data + 3 * (t.trfc + reopen), emu::ns(4000));
  EXPECT_EQ(ch.stats().refreshes, 3u);
  EXPECT_EQ(served.back().end, reopen + data + 3 * (t.trfc + reopen));
}

TEST(DramChannel, TheFlowModelsStreamRateIsWhatALongStreamSustains) {
  // Over 100 refresh intervals, each refresh done as it falls due.
  DramTiming t;  // the defaults: tREFI 3.9 us, tRFC 350 ns
  t.max_postponed_refreshes = 0;
  DramChannel ch(t, kBus, 0, 1);
  const std::uint64_t requests = 100 * t.trefi / (128 * kBurst);
  for (std::uint64_t i = 0; i < requests; ++i) ch.push({i * 4096, 4096, false, 0, nullptr});
  const auto served = serve_all(ch);
  const double rate =
      static_cast<double>(requests * 4096) / static_cast<double>(served.back().end) * 1e12;
  const double expected =
      static_cast<double>(kBus.bytes_per_s()) * BankedHbm::stream_efficiency(t, kBus);
  EXPECT_NEAR(rate / expected, 1.0, 0.01);  // the formula puts refreshes evenly, not whole
  EXPECT_LT(rate, 0.92 * static_cast<double>(kBus.bytes_per_s()));  // refresh costs ~10 %
}

TEST(DramChannel, BankGroupSpacingSlowsAStreamWhenTccdLIsLongerThanTheGroupsHide) {
  DramTiming t = timing();
  t.tccd_l = 4 * kBurst;                                          // 4 groups hide exactly this
  EXPECT_NEAR(BankedHbm::stream_efficiency(t, kBus), 1.0, 1e-9);  // (refresh out of the way)
  t.tccd_l = 8 * kBurst;  // a group's 32 bursts of a row take 31 x 8 + 1 bursts' time
  EXPECT_NEAR(BankedHbm::stream_efficiency(t, kBus), 128.0 / 249.0, 1e-9);
  DramChannel ch(t, kBus, 0, 1);
  ch.push({0, 4096, false, 0, nullptr});
  const auto served = serve_all(ch);
  EXPECT_EQ(served[0].end - served[0].start, 249 * kBurst);
}

TEST(DramChannel, TimingsOfZeroLeaveTheBusRate) {
  DramTiming t{};
  t.trcd = t.tcl = t.tcwl = t.trp = t.tras = t.twr = t.trfc = t.twtr = t.trtw = t.tccd_l = t.trrd =
      0;
  t.trefi = 1;  // a refresh due every picosecond, and costing nothing
  DramChannel ch(t, kBus, 0, 1);
  for (std::uintptr_t i = 0; i < 8; ++i) ch.push({i * 4096, 4096, i % 2 == 1, 0, tag(i)});
  const auto served = serve_all(ch);
  EXPECT_EQ(served.back().end, Tick{8} * 128 * kBurst);
  EXPECT_EQ(ch.stats().reads + ch.stats().writes, 8u);
}

TEST(DramChannel, DroppedRequestsAreForgotten) {
  DramChannel ch(timing(), kBus, 0, 1);
  for (std::uintptr_t i = 0; i < 100; ++i) ch.push({i * 4096, 4096, false, 0, tag(i)});
  ch.drop_requests();
  EXPECT_TRUE(ch.empty());
  ch.push({0, 32, false, 0, tag(7)});
  EXPECT_EQ(index_of(ch.serve(0)), 7u);
}

// Through the network: the packet model's controllers and the flow model's stream rate.
TEST(BankedHbm, AReadPaysTheControllerLatencyThenOpensItsRow) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.model = "banked";
  c.cube.hbm.banked.trefi = kNoRefresh;
  constexpr std::uint64_t kBytes = 256;  // 8 bursts over the 4 groups, 2 each
  for (const NetworkModel network : {NetworkModel::packet, NetworkModel::flow}) {
    testing::Bench b(c, SystemOptions{false, network});
    const Tick t =
        testing::run_one(b, [&](auto done) { b.network().read(0, b.addr(0, 0), kBytes, done); });
    const DramTiming& d = c.cube.hbm.banked;
    if (network == NetworkModel::packet)  // the last group's row opens 3 tRRD after the first
      EXPECT_EQ(t, c.cube.hbm.latency + 3 * d.trrd + d.trcd + d.tcl + 8 * kBurst);
    else  // a stream's first access, at the stream's rate
      EXPECT_EQ(t, c.cube.hbm.latency + d.trcd + d.tcl +
                       make_hbm_model(c.cube.hbm)->stream_bandwidth().transfer_time(kBytes));
  }
}

TEST(BankedHbm, AWriteIsDeliveredOnceWrittenAndTheControllerLatencyAfter) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.model = "banked";
  c.cube.hbm.banked.trefi = kNoRefresh;
  constexpr std::uint64_t kBytes = 32;
  testing::Bench b(c, SystemOptions{false, NetworkModel::packet});
  const Tick t =
      testing::run_one(b, [&](auto done) { b.network().write(0, b.addr(0, 0), kBytes, done); });
  // Its data crosses into the controller (a burst's time), the row opens, tCWL, the burst;
  // then its 16-byte response leaves through the PE's port.
  const DramTiming& d = c.cube.hbm.banked;
  EXPECT_EQ(t, kBurst + d.trcd + d.tcwl + kBurst + c.cube.hbm.latency +
                   c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.response_bytes));
}

TEST(BankedHbm, ItsStatisticsReachTheLinkStatistics) {
  SystemConfig c = testing::small_config();
  c.cube.hbm.model = "banked";
  testing::Bench b(c, SystemOptions{false, NetworkModel::packet});
  (void)testing::run_one(b, [&](auto done) { b.network().read(0, b.addr(0, 0), 65536, done); });
  const LinkStats s = b.network().link_stats(1);
  ASSERT_TRUE(s.dram.has_value());
  EXPECT_EQ(s.dram->reads, 16u);  // 16 packets of 4 KiB
  b.network().reset_stats();
  EXPECT_EQ(b.network().link_stats(1).dram->reads, 0u);
  testing::Bench f(c, SystemOptions{false, NetworkModel::flow});
  EXPECT_FALSE(f.network().link_stats(1).dram.has_value());
}

}  // namespace
}  // namespace cubesim::components
