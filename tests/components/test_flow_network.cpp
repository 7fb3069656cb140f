// The flow network model (NetworkModel::flow). Uncontended transfers must take exactly the
// packet model's closed form (path latency + bytes over the narrowest link, or the DMA window's
// round trips when those are longer); every link must carry exactly the bytes the packet model
// puts on it; contending flows queue whole. Expectations come from the configuration.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "components/network/network.hpp"
#include "components/system/system.hpp"
#include "emu/scheduler.hpp"
#include "emu/trace.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using emu::Tick;
using ::testing::HasSubstr;

using testing::Bench;
using testing::run_one;

// Timing-only (the network moves no data either way), with the given network model.
SystemOptions model(NetworkModel m = NetworkModel::flow) {
  return {true, m};
}

TEST(FlowModel, ParsesItsNameAndRejectsOthersNamingTheValidOnes) {
  EXPECT_THAT(network_models().names(), ::testing::ElementsAre("packet", "flow"));
  EXPECT_EQ(network_models().at("flow").model, NetworkModel::flow);
  EXPECT_EQ(network_models().at("packet").model, NetworkModel::packet);
  EXPECT_EQ(network_model_name(NetworkModel::flow), "flow");
  try {
    (void)network_models().at("fluid", "--network");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown network model 'fluid' (--network)"));
    for (const std::string& name : network_models().names())
      EXPECT_THAT(e.what(), HasSubstr("'" + name + "'"));
  }
}

TEST(FlowModel, SmallTransfersTakeThePacketModelsTime) {
  const auto c = testing::small_config(1, 2);
  for (const NetworkModel m : {NetworkModel::packet, NetworkModel::flow}) {
    SCOPED_TRACE(network_model_name(m));
    Bench b(c, model(m));
    const std::uint64_t bytes = 256;
    const Tick ser = c.cube.noc.link_bandwidth.transfer_time(bytes);
    // PE 15 at (3,3) is six hops from the controller at (0,0) and from PE 0.
    const Tick send = run_one(b, [&](auto d) { b.network().send(0, 15, bytes, d); });
    EXPECT_EQ(send, 6 * c.cube.noc.hop_latency + ser);
    Bench r(c, model(m));
    const Tick read = run_one(r, [&](auto d) { r.network().read(15, r.addr(0, 0), bytes, d); });
    EXPECT_EQ(read, 12 * c.cube.noc.hop_latency + c.cube.hbm.latency + ser);
    // Across UCIe: (0,0)->(3,0) in cube 0, UCIe, (3,0)->(0,0) in cube 1, and back.
    Bench u(c, model(m));
    const Tick one_way = 6 * c.cube.noc.hop_latency + c.ucie.latency;
    const Tick far = run_one(u, [&](auto d) { u.network().read(0, u.addr(1, 0), bytes, d); });
    EXPECT_EQ(far, 2 * one_way + c.cube.hbm.latency + c.ucie.bandwidth.transfer_time(bytes));
  }
}

TEST(FlowModel, LargeTransferTakesLatencyPlusBytesOverTheBottleneck) {
  const auto c = testing::small_config();
  Bench b(c, model());
  const std::uint64_t bytes = 64ull << 20;
  const Tick t = run_one(b, [&](auto d) { b.network().read(15, b.addr(0, 0), bytes, d); });
  // Eight 64 GB/s channels feed one 64 GB/s mesh path; the window (32 packets per round trip)
  // is not the limit here.
  const Tick latency = 12 * c.cube.noc.hop_latency + c.cube.hbm.latency;
  EXPECT_EQ(t, latency + c.cube.noc.link_bandwidth.transfer_time(bytes));
}

TEST(FlowModel, ALatencyBoundPeIsLimitedByItsDmaWindow) {
  auto c = testing::small_config(1, 2);
  c.pe.dma.max_outstanding_packets = 1;  // one packet per round trip
  Bench b(c, model());
  const std::uint64_t packets = 16;
  const std::uint64_t bytes = packets * c.cube.noc.packet_bytes;
  const Tick t = run_one(b, [&](auto d) { b.network().read(0, b.addr(1, 0), bytes, d); });
  const Tick round_trip = 2 * (6 * c.cube.noc.hop_latency + c.ucie.latency) + c.cube.hbm.latency +
                          c.ucie.bandwidth.transfer_time(c.cube.noc.packet_bytes);
  EXPECT_EQ(t, packets * round_trip);
}

TEST(FlowModel, FlowsOnASharedPathQueueWhole) {
  const auto c = testing::small_config();
  Bench b(c, model());
  const std::uint64_t bytes = 64 * 1024;
  Tick first = 0, second = 0;
  b.network().send(0, 3, bytes, [&] { first = b.sched.now(); });
  b.network().send(0, 3, bytes, [&] { second = b.sched.now(); });
  b.sched.run();
  EXPECT_EQ(first, 3 * c.cube.noc.hop_latency + c.cube.noc.link_bandwidth.transfer_time(bytes));
  EXPECT_EQ(second, first + c.cube.noc.link_bandwidth.transfer_time(bytes));
}

// A message from across a slow UCIe link is booked first but reaches PE 0's links long after a
// neighbour's, booked later: the neighbour's goes first, in the gap before it, and both take
// their times alone (with the links booked first come, first served, the neighbour's waited
// for the far message's arrival and its bytes).
TEST(FlowModel, AFlowBookedLaterThatReachesALinkSoonerGoesFirst) {
  auto c = testing::small_config(1, 2);
  c.ucie.latency = emu::us(1);
  const std::uint64_t far_bytes = 64 * 1024, near_bytes = 4096;
  const std::uint32_t far_pe = c.cube.pes + 3;  // cube 1, (3, 0)
  Bench alone(c, model());
  const Tick far_alone =
      run_one(alone, [&](auto d) { alone.network().send(far_pe, 0, far_bytes, d); });
  Bench b(c, model());
  Tick far = 0, near = 0;
  b.network().send(far_pe, 0, far_bytes, [&] { far = b.sched.now(); });
  b.network().send(1, 0, near_bytes, [&] { near = b.sched.now(); });
  b.sched.run();
  EXPECT_EQ(near, c.cube.noc.hop_latency + c.cube.noc.link_bandwidth.transfer_time(near_bytes));
  EXPECT_EQ(far, far_alone);
  EXPECT_GT(far_alone, c.ucie.latency);  // it did cross UCIe, after the neighbour's was done
}

// A message held up at a link reaches the links after it that much later, so a flow booked
// after it that uses one of those links sooner is not kept waiting by where the held message
// would have been. Row 0 of the mesh: X holds link 1->2, Y (0 -> 3) queues behind it there
// and reaches link 2->3 only after X's bytes, and Z (2 -> 3) passes first.
TEST(FlowModel, AFlowHeldUpAtALinkReachesTheLinksAfterItThatMuchLater) {
  const auto c = testing::small_config();
  const auto ser = [&](std::uint64_t bytes) {
    return c.cube.noc.link_bandwidth.transfer_time(bytes);
  };
  const Tick hop = c.cube.noc.hop_latency;
  const std::uint64_t x_bytes = 256 * 1024, y_bytes = 64 * 1024, z_bytes = 4096;
  Bench b(c, model());
  Tick x = 0, y = 0, z = 0;
  b.network().send(1, 2, x_bytes, [&] { x = b.sched.now(); });
  b.network().send(0, 3, y_bytes, [&] { y = b.sched.now(); });
  b.network().send(2, 3, z_bytes, [&] { z = b.sched.now(); });
  b.sched.run();
  EXPECT_EQ(x, hop + ser(x_bytes));
  // Y reaches link 1->2 one hop in, while X (from PE 1) holds it from 0 on; it follows X's
  // bytes there and goes on two hops from there.
  EXPECT_EQ(y, ser(x_bytes) + ser(y_bytes) + 2 * hop);
  EXPECT_EQ(z, hop + ser(z_bytes));
}

// Every link carries the same bytes in both models, for short and long (grouped by channel)
// reads and writes, direct and interleaved, on one cube, across UCIe and across SIPs.
TEST(FlowModel, LinksCarryExactlyThePacketModelsBytes) {
  const auto c = testing::small_config(2, 2);
  struct Case {
    const char* what;
    bool write;
    std::uint32_t pe;
    bool interleaved;
    std::uint64_t offset, bytes;
  };
  const Case cases[] = {
      {"short direct read", false, 5, false, 4096 * 3 + 100, 3 * 4096},
      {"long direct read", false, 5, false, 12288 + 17, (1u << 20) + 999},
      {"long interleaved read", false, 37, true, 4096 * 5 + 64, (2u << 20) + 4096},
      {"long interleaved write", true, 50, true, 100, (1u << 20) + 12},
      {"short interleaved write", true, 2, true, 0, 4096 * 2},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    std::map<std::string, std::uint64_t> links[2];  // bytes by link name
    int i = 0;
    for (const NetworkModel m : {NetworkModel::packet, NetworkModel::flow}) {
      Bench b(c, model(m));
      const AddressMap& map = b.sys.address_map();
      const std::uint64_t a = k.interleaved ? AddressMap::kInterleavedBase + k.offset
                                            : map.direct_address({1, k.offset});
      bool done = false;
      if (k.write)
        b.network().write(k.pe, a, k.bytes, [&] { done = true; });
      else
        b.network().read(k.pe, a, k.bytes, [&] { done = true; });
      b.sched.run();
      EXPECT_TRUE(done);
      for (const LinkRecord& l : b.network().link_stats(b.sched.now()).links)
        links[i][l.name] = l.bytes;
      ++i;
    }
    EXPECT_GT(links[0].size(), 3u);
    EXPECT_EQ(links[1], links[0]);
  }
}

// What a long read puts on each link, computed here from every (cube, channel) route taken
// link by link (the network merges them through its per-cube forest of route prefixes).
struct Expected {
  std::uint64_t bytes = 0;
  Tick lead = emu::kTickMax, tail = 0;
};
std::map<LinkId, Expected> expected_loads(const System& sys, std::uint32_t pe, std::uint64_t addr,
                                          std::uint64_t bytes) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> per_channel;
  const AddressMap& map = sys.address_map();
  map.for_each_piece(addr, bytes, sys.config().cube.noc.packet_bytes,
                     [&](std::uint64_t, Location loc, std::uint64_t len) {
                       per_channel[{loc.global_cube, map.channel(loc)}] += len;
                     });
  std::map<LinkId, Expected> loads;
  for (const auto& [key, n] : per_channel) {
    const Route r = sys.topology().memory_to_pe(key.first, key.second, pe);
    Tick total = r.pre_delay;
    for (const Tick lat : r.latency) total += lat;
    Tick lead = r.pre_delay;
    for (std::size_t h = 0; h < r.links.size(); ++h) {
      Expected& e = loads[r.links[h]];
      e.bytes += n;
      e.lead = std::min(e.lead, lead);
      e.tail = std::max(e.tail, total - lead);
      lead += r.latency[h];
    }
  }
  return loads;
}

// Busy slices per link track, in picoseconds, from a trace file.
std::map<std::string, std::vector<std::pair<Tick, Tick>>> link_slices(const std::string& file) {
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in);
  std::map<std::pair<int, int>, std::string> names;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  std::map<std::string, std::vector<std::pair<Tick, Tick>>> slices;
  const auto ps = [](double us) { return static_cast<Tick>(std::llround(us * 1e6)); };
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "link")
      slices[names[{e["pid"].get<int>(), e["tid"].get<int>()}]].push_back(
          {ps(e["ts"].get<double>()), ps(e["dur"].get<double>())});
  return slices;
}

// Uncontended, a flow holds each link from t0 + lead (the earliest of its routes to reach the
// link) for bytes / bandwidth, and is delivered at the latest end + tail, or after its packets
// have passed the DMA window. The reads go across 2 SIPs of 4 cubes with 4 HBM controllers per
// cube: an interleaved one (every cube and controller: the forest is swept whole) to a PE of
// cube 1, then direct ones from the neighbour cube (few links: each group's way on its own) and
// from a cube of the other SIP; then the first range again by PEs of other cubes and SIPs and
// by the first PE once more (the range's layout and the route pieces are cached: each PE must
// still get its own routes).
TEST(FlowModel, ReadsHoldEachLinkFromTheEarliestRouteThroughIt) {
  auto c = testing::small_config(2, 4);
  c.cube.noc.hbm_nodes = {{0, 0}, {3, 0}, {0, 3}, {3, 3}};
  const std::string file =
      ::testing::TempDir() + "flow-leads-" + std::to_string(::getpid()) + ".json";
  Bench b(c, model());
  const std::uint64_t range[2] = {AddressMap::kInterleavedBase + 4096 * 3 + 40, (1u << 20) + 5000};
  const std::uint64_t reads[][3] = {
      {16 + 9, range[0], range[1]},  // cube 1, node (1, 2)
      {16 + 9, b.sys.address_map().direct_address({0, 4096 * 7}), 3 * 65536 + 300},
      {16 + 9, b.sys.address_map().direct_address({6, 100}), 65536},
      {3, range[0], range[1]},            // cube 0
      {16 * 6 + 14, range[0], range[1]},  // SIP 1, cube 2
      {16 + 4, range[0], range[1]},       // cube 1 again, another node
      {16 + 9, range[0], range[1]}};
  std::map<std::string, std::vector<std::pair<Tick, Tick>>> want;
  {
    emu::TraceWriter trace(file);
    b.network().set_trace(&trace);
    for (const auto& [pe64, addr, bytes] : reads) {
      const auto pe = static_cast<std::uint32_t>(pe64);
      const Tick t0 = b.sched.now();
      const auto loads = expected_loads(b.sys, pe, addr, bytes);
      Tick done = t0, path = 0, packet = 0;
      for (const auto& [id, e] : loads) {
        const Link& l = b.sys.topology().link(id);
        const Tick ser = l.bandwidth.transfer_time(e.bytes);
        want[b.sys.topology().link_name(id)].push_back({t0 + e.lead, ser});
        done = std::max(done, t0 + e.lead + ser + e.tail);
        path = std::max(path, e.lead + e.tail);
        packet = std::max(
            packet, e.bytes >= 4096 ? l.full_packet_time : l.bandwidth.transfer_time(e.bytes));
      }
      const std::uint64_t packets = (bytes + 4095) / 4096,
                          window = c.pe.dma.max_outstanding_packets;
      done = std::max(done, t0 + (packets + window - 1) / window * (path + packet));
      EXPECT_GT(loads.size(), 20u);
      EXPECT_EQ(run_one(b, [&](auto d) { b.network().read(pe, addr, bytes, d); }), done);
    }
    b.network().flush_trace();
    trace.close();
  }
  EXPECT_EQ(link_slices(file), want);
  std::filesystem::remove(file);
}

TEST(FlowModel, AFlowQueuedPastTheEndOfTimeIsAnErrorNamingTheLinkAndTheSpecField) {
  auto c = testing::small_config(1, 2);
  c.ucie.bandwidth = Bandwidth::from_bytes_per_s(1);
  Bench b(c, model());
  // Each flow fits simulated time alone (two thirds of it at 1 B/s); the second queues behind
  // the first on the UCIe link and would end past 2^64 ps.
  const std::uint64_t bytes = emu::kTickMax / emu::kPsPerSecond / 3 * 2;
  b.network().send(0, c.cube.pes, bytes, [] {});
  EXPECT_THAT([&] { b.network().send(0, c.cube.pes, bytes, [] {}); },
              ::testing::ThrowsMessage<emu::TimeOverflow>(::testing::AllOf(
                  HasSubstr(fmt::format("the transfer time of {} bytes over "
                                        "system.ucie.bandwidth_GBps = {} overflows simulated time",
                                        bytes, 1e-9)),
                  HasSubstr("link sip0.ucie.cube0->cube1"),
                  // The first flow reached the link after three mesh hops from (0,0) to the
                  // UCIe port at (3,0).
                  HasSubstr("after being busy until " +
                            emu::format_time(3 * c.cube.noc.hop_latency +
                                             c.ucie.bandwidth.transfer_time(bytes))))));
}

TEST(FlowModel, AReadTooLongForOneHbmChannelNamesTheHbmBandwidthField) {
  auto c = testing::small_config();
  c.cube.hbm.bandwidth = Bandwidth::from_bytes_per_s(c.cube.hbm.channels);  // 1 B/s each
  Bench b(c, model());
  // Interleaved over the channels, each gets more than simulated time can carry at 1 B/s.
  const std::uint64_t bytes = c.cube.hbm.channels * (emu::kTickMax / emu::kPsPerSecond + 4096);
  EXPECT_THAT([&] { b.network().read(0, b.addr(0, 0), bytes, [] {}); },
              ::testing::ThrowsMessage<emu::TimeOverflow>(::testing::AllOf(
                  HasSubstr(fmt::format("over system.cube.hbm.bandwidth_GBps = {} overflows "
                                        "simulated time",
                                        static_cast<double>(c.cube.hbm.channels) / 1e9)),
                  HasSubstr("link sip0.cube0.hbm.ch"))));
}

TEST(FlowModel, DmaRoundTripsPastTheEndOfTimeAreAnErrorNamingTheWindow) {
  auto c = testing::small_config(1, 2);
  c.pe.dma.max_outstanding_packets = 1;
  c.ucie.latency = emu::kTickMax / 8;  // a round trip crosses UCIe twice: a quarter of time
  Bench b(c, model());
  // Eight round trips, one packet at a time: twice the length of simulated time.
  const std::uint64_t bytes = 8 * c.cube.noc.packet_bytes;
  EXPECT_THAT([&] { b.network().read(0, b.addr(1, 0), bytes, [] {}); },
              ::testing::ThrowsMessage<emu::TimeOverflow>(
                  ::testing::AllOf(HasSubstr("8 packets, 1 in flight at a time "
                                             "(system.pe.dma.max_outstanding_packets)"),
                                   HasSubstr("simulated time (2^64 ps = 213 days)"))));
}

TEST(FlowModel, AZeroByteTransferCompletesAtOnce) {
  Bench b(testing::small_config(), model());
  b.sched.schedule_at(emu::ns(5), [] {});
  b.sched.run();
  const Tick t = run_one(b, [&](auto d) { b.network().read(0, b.addr(0, 0), 0, d); });
  EXPECT_EQ(t, emu::ns(5));
  EXPECT_EQ(b.network().in_flight_transfers(), 0u);
}

}  // namespace
}  // namespace cubesim::components
