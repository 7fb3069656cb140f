// Finite input buffers and credit flow control in the packet model (InputBuffers, VcPlan).
// Expected times are derived from the configuration: the credit loop of a buffer is the
// serialisation of a packet, the hop latency and the credit latency.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "components/network/input_buffers.hpp"
#include "components/network/network.hpp"
#include "components/network/virtual_channels.hpp"
#include "components/system/system.hpp"
#include "components/traffic/synthetic_traffic.hpp"
#include "emu/errors.hpp"
#include "emu/scheduler.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;
using testing::Bench;
using testing::run_one;

// small_config with every router input buffer holding `packets` packets in `vcs` channels.
SystemConfig with_router_buffers(SystemConfig c, std::uint32_t packets, std::uint32_t vcs = 1,
                                 Tick credit = emu::ns(10)) {
  c.cube.noc.router.input_buffer_bytes = std::uint64_t{packets} * vcs * c.cube.noc.packet_bytes;
  c.cube.noc.router.virtual_channels = vcs;
  c.cube.noc.router.credit_latency = credit;
  return c;
}

TEST(Credits, AStreamThroughOnePacketBuffersMovesAPacketPerCreditLoop) {
  // PE 0 -> PE 1: injection port, one mesh link, ejection port. With one packet of room in each
  // router input buffer, packet k may cross the mesh link only once packet k-1's tail has left
  // the buffer beyond it (onto the ejection port) and the credit is back: a packet every
  // ser + hop + credit, the first after ser + hop.
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 1);
  Bench b(c);
  const std::uint64_t packets = 64;
  const std::uint64_t bytes = packets * c.cube.noc.packet_bytes;
  const Tick t = run_one(b, [&](auto done) { b.network().send(0, 1, bytes, done); });
  const Tick ser = b.ser(c.cube.noc.link_bandwidth, c.cube.noc.packet_bytes);
  const Tick hop = c.cube.noc.hop_latency;
  const Tick loop = ser + hop + c.cube.noc.router.credit_latency;
  EXPECT_EQ(t, ser + hop + (packets - 1) * loop);
  // Every packet after the first reaches the mesh link as its credit is still a hop away: the
  // credit comes back when the packet ahead has gone on to the ejection port, hop ns after it
  // arrived.
  const LinkStats stats = b.network().link_stats(t);
  const LinkRecord* link = stats.link("sip0.cube0.noc.(0,0)->(1,0).east");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->credit_wait_ps, (packets - 1) * hop);
  EXPECT_NE(stats.most_held_back_link(), nullptr);

  Bench unbounded(testing::small_config(1, 1));
  EXPECT_EQ(run_one(unbounded, [&](auto done) { unbounded.network().send(0, 1, bytes, done); }),
            hop + packets * ser);
}

TEST(Credits, TheFlowModelLimitsAStreamToTheSameCreditLoop) {
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 1);
  const std::uint64_t packets = 64;
  const std::uint64_t bytes = packets * c.cube.noc.packet_bytes;
  Bench packet(c);
  Bench flow(c, {.timing_only = true, .network = NetworkModel::flow});
  EXPECT_EQ(run_one(flow, [&](auto done) { flow.network().send(0, 1, bytes, done); }),
            run_one(packet, [&](auto done) { packet.network().send(0, 1, bytes, done); }));
}

TEST(Credits, ABufferThatCoversTheCreditLoopCostsNothing) {
  // Two packets of room: the loop (ser + hop + credit) is shorter than two serialisations, so
  // the link never waits for a credit and the stream runs as with unbounded buffers.
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 2);
  const Tick ser = c.cube.noc.link_bandwidth.transfer_time(c.cube.noc.packet_bytes);
  ASSERT_LT(ser + c.cube.noc.hop_latency + c.cube.noc.router.credit_latency, 2 * ser);
  const std::uint64_t bytes = 64 * std::uint64_t{c.cube.noc.packet_bytes};
  Bench bounded(c);
  Bench unbounded(testing::small_config(1, 1));
  EXPECT_EQ(run_one(bounded, [&](auto done) { bounded.network().send(0, 15, bytes, done); }),
            run_one(unbounded, [&](auto done) { unbounded.network().send(0, 15, bytes, done); }));
}

TEST(Credits, ALonePacketTakesItsZeroLoadTime) {
  const SystemConfig c = with_router_buffers(testing::small_config(1, 2), 1, 2);
  SystemConfig both = c;
  both.ucie.buffers = {4096 * 2, 2, emu::ns(5)};
  for (const SystemConfig& cfg : {c, both}) {
    Bench b(cfg);
    const auto& k = b.cfg();
    // (0,0) -> (3,0) in cube 0, UCIe, (3,0) -> (0,0) in cube 1: the data comes back that way.
    const Tick one_way = 6 * k.cube.noc.hop_latency + k.ucie.latency;
    const Tick t = run_one(b, [&](auto done) { b.network().read(0, b.addr(1, 0), 256, done); });
    EXPECT_EQ(t, 2 * one_way + k.cube.hbm.latency + b.ser(k.ucie.bandwidth, 256));
  }
}

// Victim: PE 0 (0,0) -> PE 5 (1,1), east then south. Blocked: PE 2 (2,0) -> PE 13 (1,3), west
// then south through the same link (1,0)->(1,1) and the buffer beyond it, toward an ejection
// port that three PEs of row 3 also send to. Returns when the victim's transfer completed.
Tick victim_time(const SystemConfig& c, bool with_hotspot) {
  Bench b(c);
  const std::uint64_t bytes = 256 * std::uint64_t{c.cube.noc.packet_bytes};
  Tick victim = 0;
  b.network().send(0, 5, bytes, [&] { victim = b.sched.now(); });
  if (with_hotspot) {
    b.network().send(2, 13, 4 * bytes, [] {});
    for (const std::uint32_t pe : {12u, 14u, 15u}) b.network().send(pe, 13, 4 * bytes, [] {});
  }
  b.sched.run();
  return victim;
}

TEST(Credits, AHotspotStallsAFlowThatOnlySharesABufferWithIt) {
  // Without back-pressure the victim shares the link (1,0)->(1,1) with the blocked flow and
  // nothing else. With one-packet FIFO buffers the blocked flow's packets wait in the buffer
  // at (1,1) for room toward PE 13's port, and the victim's packets wait behind them
  // (head-of-line): congestion spreads back from a port the victim never goes to.
  const SystemConfig unbounded = testing::small_config(1, 1);
  const SystemConfig fifo = with_router_buffers(unbounded, 1);
  const double alone = static_cast<double>(victim_time(unbounded, false));
  const double shared = static_cast<double>(victim_time(unbounded, true));
  const double stalled = static_cast<double>(victim_time(fifo, true));
  const double fifo_alone = static_cast<double>(victim_time(fifo, false));
  EXPECT_LE(shared, 2 * alone);  // at worst, half of the shared link
  EXPECT_GT(stalled, 2 * fifo_alone);
  EXPECT_GT(stalled, 1.5 * shared);
}

TEST(Credits, TheClassesDoNotGrowWithTheSystem) {
  SystemConfig c = testing::small_config(1, 4);  // a ring of 4 cubes
  EXPECT_EQ(VcPlan::of(c).classes(), 1u);        // UCIe unbounded: every wait ends in its cube
  c.ucie.buffers.input_buffer_bytes = 4096;
  // A ring's ladder: up the index, down it, and on from the dateline; a route of the ring of 4
  // (3 -> 0 -> 1) takes all three, and a link's buffer holds those of one direction: 2.
  EXPECT_EQ(VcPlan::of(c).classes(BufferKind::router), 3u);
  EXPECT_EQ(VcPlan::of(c).classes(BufferKind::ucie), 2u);
  // Two cubes: one hop up or one down.
  c.cubes_per_sip = 2;
  EXPECT_EQ(VcPlan::of(c).classes(BufferKind::router), 2u);
  // More SIPs, more cubes: with unbounded inter-SIP buffers the way from the port reuses the
  // classes of the way to it.
  for (const std::uint32_t sips : {2u, 3u, 8u, 64u}) {
    c = testing::small_config(sips, 16);
    c.ucie.buffers.input_buffer_bytes = 4096;
    EXPECT_EQ(VcPlan::of(c).classes(BufferKind::router), 3u) << sips;
    // Bounded inter-SIP buffers separate the phases: twice the ring's classes in the cubes, the
    // SIP ring's and one to enter a SIP at the inter-SIP ports.
    c.inter_sip.buffers.input_buffer_bytes = 4096;
    const std::uint32_t sip_ring = sips <= 3 ? 2 : 3;
    EXPECT_EQ(VcPlan::of(c).classes(BufferKind::router), 6u) << sips;
    EXPECT_EQ(VcPlan::of(c).classes(BufferKind::ucie), 4u) << sips;
    EXPECT_EQ(VcPlan::of(c).classes(BufferKind::inter_sip), sip_ring + 1) << sips;
  }
  c = testing::small_config(3, 4);
  c.ucie.buffers.input_buffer_bytes = 4096;
  c.ucie.topology = GraphKind::all_to_all;
  EXPECT_EQ(VcPlan::of(c).classes(), 2u);
  EXPECT_EQ(vc_range(5, 2, 0).first, 0u);
  EXPECT_EQ(vc_range(5, 2, 0).last, 3u);
  EXPECT_EQ(vc_range(5, 2, 1).first, 3u);
  EXPECT_EQ(vc_range(5, 2, 1).last, 5u);
}

TEST(Credits, TooFewChannelsForTheClassesAreRefusedWhenBuilt) {
  SystemConfig c = testing::small_config(1, 4);
  c.ucie.buffers = {4096, 1, 0};  // needs 3 classes
  emu::Scheduler sched;
  EXPECT_THROW(System(c, sched), std::invalid_argument);
  c = with_router_buffers(testing::small_config(1, 1), 1);
  c.cube.noc.router.input_buffer_bytes = 4095;
  EXPECT_THROW(System(c, sched), std::invalid_argument);
}

// Around a ring of five cubes every PE sends to the same PE two cubes on, clockwise (the
// shorter way): each UCIe link carries packets that go on over the next one, so one class of
// buffers for all would let the five links' buffers fill with packets each waiting on the next
// (a cycle): with every class forced into one channel, none of the 80 transfers completes.
// Every buffer holds one packet per channel.
std::uint32_t deliveries_around_a_ring(const VcPlan& plan) {
  SystemConfig c = testing::small_config(1, 5);
  const std::uint32_t router = plan.classes(BufferKind::router),
                      ucie = plan.classes(BufferKind::ucie);
  c.cube.noc.router = {4096 * std::uint64_t{router}, router, emu::ns(2)};
  c.ucie.buffers = {4096 * std::uint64_t{ucie}, ucie, emu::ns(10)};
  Bench b(c);
  const std::uint32_t pes = c.cube.pes, cubes = c.cubes_per_sip;
  std::uint32_t done = 0;
  for (std::uint32_t cube = 0; cube < cubes; ++cube)
    for (std::uint32_t pe = 0; pe < pes; ++pe)
      b.network().send(cube * pes + pe, ((cube + 2) % cubes) * pes + pe, 64 * 4096,
                       [&] { ++done; });
  b.sched.run();
  return done;
}

TEST(Credits, RoutesAroundARingOfCubesDeliverEveryPacket) {
  SystemConfig c = testing::small_config(1, 5);
  c.ucie.buffers.input_buffer_bytes = 1;
  const VcPlan plan = VcPlan::of(c);
  ASSERT_EQ(plan.classes(BufferKind::router), 3u);
  EXPECT_EQ(deliveries_around_a_ring(plan), 5 * c.cube.pes);
}

TEST(Credits, RoutesBetweenSipsDeliverEveryPacket) {
  SystemConfig c = testing::small_config(4, 2);
  SystemConfig k = c;
  k.ucie.buffers.input_buffer_bytes = 1;
  k.inter_sip.buffers.input_buffer_bytes = 1;
  const VcPlan plan = VcPlan::of(k);
  const std::uint32_t router = plan.classes(BufferKind::router),
                      ucie = plan.classes(BufferKind::ucie),
                      inter_sip = plan.classes(BufferKind::inter_sip);
  c.cube.noc.router = {4096 * std::uint64_t{router}, router, emu::ns(2)};
  c.ucie.buffers = {4096 * std::uint64_t{ucie}, ucie, emu::ns(10)};
  c.inter_sip.buffers = {4096 * std::uint64_t{inter_sip}, inter_sip, emu::ns(50)};
  Bench b(c);
  const std::uint32_t per_sip = c.cubes_per_sip * c.cube.pes;
  std::uint32_t done = 0;
  for (std::uint32_t pe = 0; pe < 4 * per_sip; ++pe)
    b.network().send(pe, (pe + 2 * per_sip + 5) % (4 * per_sip), 8 * 4096, [&] { ++done; });
  b.sched.run();
  EXPECT_EQ(done, 4 * per_sip);
}

TEST(Credits, AChannelOfSmallPacketsFreesRoomInTheOrderTheyWereGranted) {
  // One channel of two packets' room beyond a mesh link, filled with sixteen eighth-packets
  // (more than a channel record keeps inline): each one's credit is back `credit` after it
  // leaves, and a whole packet finds room once eight have been released.
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 2);
  const Topology topology(c);
  InputBuffers buffers(topology);
  LinkId mesh = 0;
  while (topology.links()[mesh].kind != LinkKind::noc) ++mesh;
  ASSERT_TRUE(buffers.bounded(mesh));
  const std::uint32_t full = c.cube.noc.packet_bytes, small = full / 8;
  const Tick credit = c.cube.noc.router.credit_latency;
  std::vector<InputBuffers::Place> places(16);
  Tick ready = 0;
  std::uint32_t channel = InputBuffers::kNone;
  for (InputBuffers::Place& place : places) {
    const std::uint32_t ch = buffers.choose(mesh, 0, small, 0, &ready);
    ASSERT_NE(ch, InputBuffers::kNone);
    EXPECT_EQ(ready, 0u);
    if (channel == InputBuffers::kNone) channel = ch;
    EXPECT_EQ(ch, channel);  // one channel per class
    buffers.enter(ch, small, &place);
  }
  // Full: nothing waiting has been granted on, so when room comes is not known yet.
  EXPECT_EQ(buffers.choose(mesh, 0, small, 0, &ready), InputBuffers::kNone);
  EXPECT_EQ(ready, InputBuffers::kUnknown);
  // The second place's packet reaches its hop behind the first: granting the first hands it on.
  EXPECT_TRUE(buffers.first_in_line(channel, &places[0]));
  EXPECT_FALSE(buffers.first_in_line(channel, &places[1]));
  const auto leaves = [](std::size_t i) { return emu::ns(100) * (i + 1); };
  InputBuffers::Place* next = nullptr;
  EXPECT_EQ(buffers.leave(mesh, channel, &places[0], small, leaves(0), &next), leaves(0) + credit);
  EXPECT_EQ(next, &places[1]);
  for (std::size_t i = 1; i < places.size(); ++i) {
    EXPECT_EQ(buffers.leave(mesh, channel, &places[i], small, leaves(i), &next),
              leaves(i) + credit);
    EXPECT_EQ(next, nullptr);  // the packets behind have not reached their hop
    EXPECT_EQ(buffers.clear_at(channel), leaves(i));
  }
  // A whole packet needs eight releases; asked before and after the first three.
  EXPECT_EQ(buffers.choose(mesh, 0, full, 0, &ready), InputBuffers::kNone);
  EXPECT_EQ(ready, leaves(7) + credit);
  EXPECT_EQ(buffers.choose(mesh, 0, full, leaves(2) + credit, &ready), InputBuffers::kNone);
  EXPECT_EQ(ready, leaves(7) + credit);
  // An eighth-packet fits once the first is released.
  EXPECT_EQ(buffers.choose(mesh, 0, small, leaves(2) + credit, &ready), channel);
  EXPECT_EQ(ready, leaves(2) + credit);
  EXPECT_EQ(buffers.choose(mesh, 0, full, leaves(7) + credit, &ready), channel);
  EXPECT_EQ(ready, leaves(7) + credit);
  // Every release that comes due frees its bytes: two whole packets fit after the last.
  InputBuffers::Place first, second;
  const Tick end = leaves(15) + credit;
  ASSERT_EQ(buffers.choose(mesh, 0, full, end, &ready), channel);
  buffers.enter(channel, full, &first);
  EXPECT_EQ(buffers.choose(mesh, 0, full, end, &ready), channel);
  buffers.enter(channel, full, &second);
  EXPECT_EQ(buffers.choose(mesh, 0, small, end, &ready), InputBuffers::kNone);
}

TEST(Credits, ThePacketTakesTheEmptiestChannelTheLowestOnATieWithTheCreditsDueApplied) {
  // Two channels of one packet each in the class. A channel whose last credit is due is as
  // empty as one never used, so the lower of the two wins; before that, the empty one.
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 1, 2);
  const Topology topology(c);
  InputBuffers buffers(topology);
  LinkId mesh = 0;
  while (topology.links()[mesh].kind != LinkKind::noc) ++mesh;
  ASSERT_EQ(buffers.class_channels(mesh), 2u);
  const std::uint32_t full = c.cube.noc.packet_bytes, half = full / 2;
  const Tick credit = c.cube.noc.router.credit_latency, leaves = emu::ns(50);
  Tick ready = 0;
  InputBuffers::Place a, b, d, e;
  const std::uint32_t low = buffers.choose(mesh, 0, full, 0, &ready);
  ASSERT_NE(low, InputBuffers::kNone);
  buffers.enter(low, full, &a);
  const std::uint32_t high = buffers.choose(mesh, 0, full, 0, &ready);
  EXPECT_EQ(high, low + 1);  // the empty one
  InputBuffers::Place* next = nullptr;
  EXPECT_EQ(buffers.leave(mesh, low, &a, full, leaves, &next), leaves + credit);
  // Just before the credit is back, only the never-used channel has room; from then on both
  // are empty and the lower is taken.
  EXPECT_EQ(buffers.choose(mesh, 0, full, leaves + credit - 1, &ready), high);
  EXPECT_EQ(buffers.choose(mesh, 0, full, leaves + credit, &ready), low);
  EXPECT_EQ(ready, leaves + credit);
  // Neither empty: the one holding fewer bytes.
  buffers.enter(low, half, &b);
  EXPECT_EQ(buffers.choose(mesh, 0, half, leaves + credit, &ready), high);
  buffers.enter(high, half, &d);
  buffers.enter(buffers.choose(mesh, 0, half / 2, leaves + credit, &ready), half / 2, &e);
  EXPECT_EQ(buffers.choose(mesh, 0, half / 2, leaves + credit, &ready), high);
}

TEST(Credits, IdenticalRunsGiveIdenticalTimes) {
  const SystemConfig c = with_router_buffers(testing::small_config(1, 2), 1, 2);
  EXPECT_EQ(testing::reads_across_cubes(c), testing::reads_across_cubes(c));
}

TEST(Credits, AFailedRunLeavesNoPacketInABuffer) {
  const SystemConfig c = with_router_buffers(testing::small_config(1, 1), 1);
  Bench fresh(c);
  const Tick alone = run_one(fresh, [&](auto done) { fresh.network().send(0, 3, 1 << 20, done); });
  Bench b(c);
  for (std::uint32_t pe = 4; pe < 16; ++pe) b.network().send(pe, 3, 1 << 20, [] {});
  // A run that stops with packets waiting in every buffer toward PE 3 drops its events.
  b.sched.schedule_at(emu::us(1), [] { throw std::runtime_error("stop"); });
  EXPECT_THROW(b.sched.run(), emu::CallbackError);
  b.network().abandon_in_flight();
  const Tick start = b.sched.now();
  const Tick end = run_one(b, [&](auto done) { b.network().send(0, 3, 1 << 20, done); });
  EXPECT_EQ(end - start, alone);
}

}  // namespace
}  // namespace cubesim::components
