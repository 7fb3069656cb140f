// tl.send / tl.recv between programs (triton_emu/ops/channels.hpp): values arrive as sent and in
// order, the times on an idle system are the network's path plus the slot's costs, computed
// here from the spec, a full channel blocks its sender until the credit is back, and every
// misuse is a kernel fault or a deadlock naming the programs and the channel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <fstream>
#include <random>

#include "components/network/message_window.hpp"
#include "error_of.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;
using testing::AllOf;
using testing::HasSubstr;

// tiny.json with system.messages set to `messages`.
Spec tiny_with(const nlohmann::json& messages) {
  std::ifstream in(spec_path("tiny.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["system"]["messages"] = messages;
  return Spec::from_json(doc);
}

std::vector<float> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Every program sends a tile of its own random values around a ring of all programs (by grid
// coordinates), several times; each receives its predecessor's values, in order.
void ring_pass(const Spec& spec) {
  Simulation sim(spec);
  const auto& c = sim.config();
  const std::int64_t n = c.cube.pes * c.cubes_per_sip * c.sips, len = 64, rounds = 3;
  const std::uint64_t bytes = static_cast<std::uint64_t>(n * rounds * len) * 4;
  const Ptr in = sim.alloc(bytes), out = sim.alloc(bytes);
  const auto slice = [&](std::int64_t me, std::int64_t r) { return ((me * rounds + r) * len) * 4; };
  for (std::int64_t me = 0; me < n; ++me)
    for (std::int64_t r = 0; r < rounds; ++r)
      sim.write<float>(in + slice(me, r),
                       random_values(len, static_cast<std::uint32_t>(me * 100 + r)));
  sim.launch([&](tl::Context& tl) {
    const std::int64_t pes = tl.num_programs(0);
    const std::int64_t me = tl.program_id(1) * pes + tl.program_id(0);
    const std::int64_t next = (me + 1) % n, prev = (me + n - 1) % n;
    for (std::int64_t r = 0; r < rounds; ++r) {
      tl.send(tl::program(next % pes, next / pes), tl.load(in + slice(me, r), {len}, DType::f32));
      tl.store(out + slice(me, r), tl.recv(tl::program(prev % pes, prev / pes), {len}, DType::f32));
    }
  });
  for (std::int64_t me = 0; me < n; ++me)
    for (std::int64_t r = 0; r < rounds; ++r) {
      const std::int64_t prev = (me + n - 1) % n;
      EXPECT_EQ(sim.read<float>(out + slice(me, r), len),
                random_values(len, static_cast<std::uint32_t>(prev * 100 + r)))
          << "program " << me << " round " << r;
    }
}

TEST(Messages, ValuesGoRoundARingInOrderWithSlotsInPeSram) {
  ring_pass(tiny_with({{"memory", "pe_sram"}, {"slots", 2}}));
}
TEST(Messages, ValuesGoRoundARingInOrderWithSlotsInCubeSram) {
  ring_pass(tiny_with({{"memory", "cube_sram"}, {"slots", 2}}));
}
TEST(Messages, ValuesGoRoundARingInOrderWithSlotsInHbm) {
  ring_pass(tiny_with({{"memory", "hbm"}, {"slots", 1}}));
}

// PE 0 -> PE 1 of tiny (nodes (0,0) -> (1,0)): one mesh hop. A message of one packet arrives
// after the hop latency plus its serialisation (injection and ejection ports add none), the
// slot's write latency makes it visible, and the recv reads it out at the slot's rate.
TEST(Messages, OneMessageTakesThePathThenTheSlotsReadOnAnIdleSystem) {
  for (const char* memory : {"pe_sram", "cube_sram"}) {
    const Spec spec = tiny_with({{"memory", memory}});
    const auto& c = spec.config();
    const auto& m = c.messages;
    const bool pe = m.memory == components::SlotMemory::pe_sram;
    const std::uint64_t bytes = 256 * 4;
    ASSERT_LE(bytes, c.cube.noc.packet_bytes);
    Simulation sim(spec, {.timing_only = true});
    Tick received = 0, sent = 0;
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) {
        tl.send(tl::east, tl.full({256}, 1.0, DType::f32));
        sent = tl.now();
      } else {
        (void)tl.recv(tl::west, {256}, DType::f32);
        received = tl.now();
      }
    });
    const Tick path = c.cube.noc.hop_latency + c.cube.noc.link_bandwidth.transfer_time(bytes);
    const Tick write = pe ? m.pe_sram_latency : m.cube_sram_latency;
    const Tick read = (pe ? m.pe_sram_latency : m.cube_sram_latency) +
                      (pe ? m.pe_sram_bandwidth : m.cube_sram_bandwidth).transfer_time(bytes);
    // The tile is made by tl.full first: one vector operation of 256 elements.
    const Tick full = c.pe.clock.cycles_to_ticks(
        {(256 + c.pe.vector.lanes - 1) / c.pe.vector.lanes + c.pe.vector.latency_cycles});
    EXPECT_EQ(sent, full) << memory << ": a send with a free slot does not wait";
    EXPECT_EQ(received, full + path + write + read) << memory;
  }
}

// With one slot, the second send waits for the first message's credit: the message's path,
// its read out of the slot, and the credit's own way back (credit_bytes over the same hop).
TEST(Messages, AFullChannelBlocksTheSenderUntilTheCreditIsBack) {
  const Spec spec = tiny_with({{"slots", 1}, {"credit_bytes", 16}});
  const auto& c = spec.config();
  const auto& m = c.messages;
  const std::uint64_t bytes = 1024;
  Simulation sim(spec, {.timing_only = true});
  Tick first_sent = 0, second_sent = 0, first_received = 0;
  sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    if (tl.program_id(0) == 0) {
      const tl::Tile t = tl.full({256}, 1.0, DType::f32);
      const Tick t0 = tl.now();
      tl.send(tl::program(1), t);
      first_sent = tl.now() - t0;
      tl.send(tl::program(1), t);
      second_sent = tl.now() - t0;
    } else {
      const tl::Tile t = tl.full({256}, 1.0, DType::f32);
      const Tick t0 = tl.now();
      (void)tl.recv(tl::program(0), {256}, DType::f32);
      first_received = tl.now() - t0;
      (void)tl.recv(tl::program(0), {256}, DType::f32);
    }
  });
  const auto& noc = c.cube.noc;
  const Tick path = noc.hop_latency + noc.link_bandwidth.transfer_time(bytes);
  const Tick read = m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(bytes);
  const Tick credit = noc.hop_latency + noc.link_bandwidth.transfer_time(m.credit_bytes);
  EXPECT_EQ(first_sent, 0);
  EXPECT_EQ(first_received, path + m.pe_sram_latency + read);
  EXPECT_EQ(second_sent, path + m.pe_sram_latency + read + credit);
}

// Simulation::limit_message_slots caps the slots of the channels later launches make: with one
// slot where the class has four, the second send waits for the first's credit, as above; with
// the limit lifted, it does not wait.
TEST(Messages, ALimitOnSlotsHoldsForLaterLaunchesUntilLifted) {
  const Spec spec = tiny_with({{"slots", 4}});
  Simulation sim(spec, {.timing_only = true});
  const auto second_send = [&sim] {
    Tick second = 0;
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      const tl::Tile t = tl.full({256}, 1.0, DType::f32);
      if (tl.program_id(0) == 0) {
        const Tick t0 = tl.now();
        tl.send(tl::program(1), t);
        tl.send(tl::program(1), t);
        second = tl.now() - t0;
      } else {
        (void)tl.recv(tl::program(0), {256}, DType::f32);
        (void)tl.recv(tl::program(0), {256}, DType::f32);
      }
    });
    return second;
  };
  EXPECT_EQ(second_send(), 0);
  sim.limit_message_slots(1);
  EXPECT_GT(second_send(), 0);
  EXPECT_GT(second_send(), 0) << "the limit holds until lifted";
  sim.limit_message_slots(0);
  EXPECT_EQ(second_send(), 0);
}

// HBM slot buffers are kept across launches, but one made for a limited window is not reused
// by a channel with more slots: it gets a buffer its slots fit, which later launches keep.
TEST(Messages, HbmSlotsMadeForALimitedWindowAreNotReusedByALargerOne) {
  Simulation sim(tiny_with({{"memory", "hbm"}, {"slots", 4}}), {.timing_only = true});
  const auto exchange = [&sim] {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      const tl::Tile t = tl.full({256}, 1.0, DType::f32);
      for (int i = 0; i < 6; ++i) {
        if (tl.program_id(0) == 0) tl.send(tl::program(1), t);
        if (tl.program_id(0) == 1) (void)tl.recv(tl::program(0), {256}, DType::f32);
      }
    });
    return sim.message_slots(0, 1).value();
  };
  sim.limit_message_slots(1);
  const std::uint64_t limited = exchange();
  sim.limit_message_slots(0);
  const std::uint64_t full = exchange();
  EXPECT_NE(full, limited);
  EXPECT_EQ(exchange(), full);
}

// Across default.json's 500 ns inter-SIP links (two SIPs), a stream of messages between the
// SIPs' port PEs arrives at the link's rate with the default window, which covers the class's
// credit loop; with 4 slots it is bound by the window: 4 slots per loop, the loop between the
// twice-crossed link's latency and the class's bound (credit_loop).
TEST(Messages, TheDefaultWindowKeepsAnInterSipStreamAtTheLinksRate) {
  const Spec two = Spec::load(spec_path("default.json")).with("system.sips.count", 2);
  const auto rate = [](const Spec& spec) {
    Simulation sim(spec, {.timing_only = true});
    const std::int64_t n = 256, elems = 1024;  // 4 KiB messages
    Tick first = 0, last = 0;
    sim.launch([&](tl::Context& tl) {
      if (tl.program_id(0) != 0 || tl.program_id(1) != 0) return;
      if (tl.program_id(2) == 0) {
        const tl::Tile t = tl.full({elems}, 1.0, DType::f32);
        for (std::int64_t i = 0; i < n; ++i) tl.send(tl::program(0, 0, 1), t);
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          (void)tl.recv(tl::program(0, 0, 0), {elems}, DType::f32);
          if (i == 0) first = tl.now();
        }
        last = tl.now();
      }
    });
    return static_cast<double>((n - 1) * elems * 4) / (static_cast<double>(last - first) * 1e-12);
  };
  const auto& c = two.config();
  const double link = static_cast<double>(c.inter_sip.bandwidth.bytes_per_s());
  EXPECT_GE(rate(two), 0.95 * link);
  const Spec four = two.with("system.messages.inter_sip.slots", 4);
  const components::CreditLoop bound =
      components::credit_loop(four.config(), components::ChannelClass::inter_sip, 4096);
  const double r4 = rate(four);
  EXPECT_GE(r4, 4 * 4096 / (static_cast<double>(bound.round_trip) * 1e-12));
  EXPECT_LE(r4, 4 * 4096 / (2 * static_cast<double>(c.inter_sip.latency) * 1e-12));
}

// The run's statistics count what was sent and received, and the time each side was blocked:
// the same exchange as above, whose waits are known from the spec.
TEST(Messages, StatisticsCountMessagesBytesAndTheTimeBlocked) {
  const Spec spec = tiny_with({{"slots", 1}, {"credit_bytes", 16}});
  const auto& c = spec.config();
  const auto& m = c.messages;
  const std::uint64_t bytes = 1024;
  Simulation sim(spec, {.timing_only = true});
  const RunResult r = sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    const tl::Tile t = tl.full({256}, 1.0, DType::f32);
    for (int i = 0; i < 2; ++i) {
      if (tl.program_id(0) == 0)
        tl.send(tl::program(1), t);
      else
        (void)tl.recv(tl::program(0), {256}, DType::f32);
    }
  });
  const auto& noc = c.cube.noc;
  const Tick path = noc.hop_latency + noc.link_bandwidth.transfer_time(bytes);
  const Tick read = m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(bytes);
  const Tick credit = noc.hop_latency + noc.link_bandwidth.transfer_time(m.credit_bytes);
  // The second send waits for the first message's credit; the receiver waits for each
  // message to arrive and be read, the second sent `second_send` after the first.
  const Tick second_send = path + m.pe_sram_latency + read + credit;
  const Tick received = path + m.pe_sram_latency + read;
  ASSERT_EQ(r.stats.pes.size(), 2u);
  const PeStats& sender = r.stats.pes[0];
  const PeStats& receiver = r.stats.pes[1];
  EXPECT_EQ(sender.messages_sent, 2u);
  EXPECT_EQ(sender.bytes_sent, 2 * bytes);
  EXPECT_EQ(sender.messages_received, 0u);
  EXPECT_EQ(receiver.messages_received, 2u);
  EXPECT_EQ(receiver.bytes_received, 2 * bytes);
  EXPECT_EQ(sender.send_wait_ps, second_send);
  EXPECT_EQ(sender.recv_wait_ps, 0u);
  EXPECT_EQ(receiver.send_wait_ps, 0u);
  EXPECT_EQ(receiver.recv_wait_ps, second_send + received);
  EXPECT_EQ(r.stats.messages.messages, 2u);
  EXPECT_EQ(r.stats.messages.bytes, 2 * bytes);
  EXPECT_EQ(r.stats.messages.send_wait_ps, second_send);
  EXPECT_EQ(r.stats.messages.recv_wait_ps, second_send + received);
  const nlohmann::json& j = r.report["stats"]["messages"];
  EXPECT_EQ(j["messages"], 2);
  EXPECT_EQ(j["bytes"], 2 * bytes);
  EXPECT_EQ(j["send_wait_ps"], second_send);
  EXPECT_EQ(r.report["stats"]["pes"][1]["recv_wait_ps"], second_send + received);
}

TEST(Messages, NeighboursByDirectionAndUcie) {
  // tiny: 2 cubes on a UCIe ring of two (one neighbour each), 2x2 meshes.
  Simulation sim(tiny_with({}), {.timing_only = true});
  std::vector<std::int32_t> got(8, -1);
  sim.launch([&](tl::Context& tl) {
    const std::int64_t pe = tl.program_id(0), cube = tl.program_id(1);
    const std::int64_t me = cube * 4 + pe;
    // East along the top row, south down the right column; every program tells its UCIe peer.
    tl.send(tl::ucie(0), tl.full({1}, static_cast<double>(me), DType::i32));
    const tl::Tile from_peer = tl.recv(tl::ucie(0), {1}, DType::i32);
    got[static_cast<std::size_t>(me)] = static_cast<std::int32_t>(from_peer.at(0));
    if (pe == 0) tl.send(tl::east, tl.full({1}, 7.0, DType::i32));
    if (pe == 1) {
      EXPECT_EQ(tl.recv(tl::west, {1}, DType::i32).at(0), 7.0);
    }
    if (pe == 1) tl.send(tl::south, tl.full({1}, 9.0, DType::i32));
    if (pe == 3) {
      EXPECT_EQ(tl.recv(tl::north, {1}, DType::i32).at(0), 9.0);
    }
  });
  for (std::int32_t me = 0; me < 8; ++me)
    EXPECT_EQ(got[static_cast<std::size_t>(me)], (me + 4) % 8);
}

TEST(Messages, ASendWithNoNeighbourThereIsAFault) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  const std::string msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1},
                  [&](tl::Context& tl) { tl.send(tl::west, tl.full({4}, 1.0, DType::f32)); });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("sip0.cube0.pe0"), HasSubstr("send(west)"),
                         HasSubstr("no neighbour west"), HasSubstr("2x2 mesh")));
  // A neighbour that runs no program of the launch is refused too.
  const std::string msg2 = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1},
                  [&](tl::Context& tl) { tl.send(tl::east, tl.full({4}, 1.0, DType::f32)); });
  });
  EXPECT_THAT(msg2, AllOf(HasSubstr("sip0.cube0.pe1 runs no program of this launch")));
  // The simulation survives: a good launch runs after the faults.
  EXPECT_NO_THROW(sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    if (tl.program_id(0) == 0) tl.send(tl::east, tl.full({4}, 1.0, DType::f32));
    if (tl.program_id(0) == 1) (void)tl.recv(tl::west, {4}, DType::f32);
  }));
}

TEST(Messages, ARecvOfAnotherShapeOrDtypeIsAFaultNamingTheChannel) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  const std::string msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) tl.send(tl::east, tl.full({4}, 1.0, DType::f32));
      if (tl.program_id(0) == 1) (void)tl.recv(tl::west, {4}, DType::f16);
    });
  });
  EXPECT_THAT(
      msg, AllOf(HasSubstr("sip0.cube0.pe1"), HasSubstr("channel sip0.cube0.pe0 -> sip0.cube0.pe1"),
                 HasSubstr("f32 tile of shape [4]"), HasSubstr("f16 tile of shape [4]")));
}

TEST(Messages, AMessageLargerThanASlotIsAFault) {
  Simulation sim(tiny_with({{"slot_KiB", 1}}), {.timing_only = true});
  const std::string msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) tl.send(tl::east, tl.full({512}, 1.0, DType::f32));
    });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("sip0.cube0.pe0"), HasSubstr("2048 bytes"),
                         HasSubstr("1024 bytes"), HasSubstr("slot_KiB")));
}

TEST(Messages, AMessageNobodyReceivesFailsTheLaunch) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  const std::string msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) tl.send(tl::east, tl.full({4}, 1.0, DType::f32));
    });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("sip0.cube0.pe0 sent 1 message that sip0.cube0.pe1 never "
                                   "received")));
}

TEST(Messages, TwoProgramsThatBothReceiveFirstDeadlockAndTheCycleIsNamed) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  try {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      const tl::Peer other = tl.program_id(0) == 0 ? tl::east : tl::west;
      (void)tl.recv(other, {4}, DType::f32);
      tl.send(other, tl.full({4}, 1.0, DType::f32));
    });
    FAIL();
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::deadlock);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("sip0.cube0.pe0 waits to receive from sip0.cube0.pe1"),
                                HasSubstr("sip0.cube0.pe1 waits to receive from sip0.cube0.pe0"),
                                HasSubstr("a cycle, each waiting on the next: sip0.cube0.pe0 -> "
                                          "sip0.cube0.pe1 -> sip0.cube0.pe0")));
  }
}

// Two pairs of programs, each pair receiving from the other first: each blocked program is
// listed once, and both cycles are named.
TEST(Messages, ADeadlockListsEachProgramOnceAndEveryIndependentCycle) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  try {
    sim.launch_on(Grid{.pes = 4, .cubes = 1}, [&](tl::Context& tl) {
      const tl::Peer other = tl.program_id(0) % 2 == 0 ? tl::east : tl::west;
      (void)tl.recv(other, {4}, DType::f32);
      tl.send(other, tl.full({4}, 1.0, DType::f32));
    });
    FAIL();
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    for (int pe = 0; pe < 4; ++pe) {
      const std::string line = "\n  sip0.cube0.pe" + std::to_string(pe) + " ";
      const std::size_t at = what.find(line);
      ASSERT_NE(at, std::string::npos) << what;
      EXPECT_EQ(what.find(line, at + 1), std::string::npos) << "listed twice: " << what;
    }
    EXPECT_THAT(what, AllOf(HasSubstr("a cycle, each waiting on the next: sip0.cube0.pe0 -> "
                                      "sip0.cube0.pe1 -> sip0.cube0.pe0"),
                            HasSubstr("a cycle, each waiting on the next: sip0.cube0.pe2 -> "
                                      "sip0.cube0.pe3 -> sip0.cube0.pe2")));
  }
}

TEST(Messages, SendersBlockedOnFullChannelsInACycleAreNamed) {
  Simulation sim(tiny_with({{"slots", 1}}), {.timing_only = true});
  try {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      const tl::Peer other = tl.program_id(0) == 0 ? tl::east : tl::west;
      const tl::Tile t = tl.full({4}, 1.0, DType::f32);
      tl.send(other, t);
      tl.send(other, t);  // the one slot is full: both wait for a recv that never comes
      (void)tl.recv(other, {4}, DType::f32);
      (void)tl.recv(other, {4}, DType::f32);
    });
    FAIL();
  } catch (const DeadlockError& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("sip0.cube0.pe0 waits to send to sip0.cube0.pe1: all 1 slots"),
                      HasSubstr("all 1 slots of channel sip0.cube0.pe0 -> sip0.cube0.pe1 are full"),
                      HasSubstr("a cycle")));
  }
}

TEST(Messages, RecvAsyncOverlapsTheWaitWithWork) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  Tick waited_sync = 0, waited_async = 0;
  for (const bool async : {false, true}) {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) {
        tl.send(tl::east, tl.full({256}, 1.0, DType::f32));
        return;
      }
      const Tick t0 = tl.now();
      if (async) {
        tl::RecvHandle h = tl.recv_async(tl::west, {256}, DType::f32);
        (void)(tl.full({4096}, 2.0, DType::f32) * 3.0);  // work while the message comes
        (void)tl.wait(h);
        waited_async = tl.now() - t0;
      } else {
        (void)tl.recv(tl::west, {256}, DType::f32);
        (void)(tl.full({4096}, 2.0, DType::f32) * 3.0);
        waited_sync = tl.now() - t0;
      }
    });
  }
  EXPECT_LT(waited_async, waited_sync);
}

TEST(Messages, ARecvHandleKeptPastItsLaunchIsRefusedInTheNext) {
  Simulation sim(tiny_with({}), {.timing_only = true});
  tl::RecvHandle kept;
  sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    if (tl.program_id(0) == 0) {
      tl.send(tl::east, tl.full({16}, 1.0, DType::f32));
      return;
    }
    kept = tl.recv_async(tl::west, {16}, DType::f32);
    (void)tl.wait(kept);
  });
  EXPECT_THAT(error_of<KernelError>([&] {
                sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
                  if (tl.program_id(0) == 1) (void)tl.wait(kept);
                });
              }),
              HasSubstr("the RecvHandle comes from a recv_async of an earlier launch"));
}

TEST(Messages, SlotsThatDoNotFitTheReceiversSramAreAFaultNamingTheChannel) {
  // tiny: 256 KiB of SRAM per PE; 8 slots of 64 KiB are 512 KiB.
  Simulation sim(tiny_with({{"slots", 8}, {"slot_KiB", 64}}), {.timing_only = true});
  const std::string msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) tl.send(tl::east, tl.full({4}, 1.0, DType::f32));
      if (tl.program_id(0) == 1) (void)tl.recv(tl::west, {4}, DType::f32);
    });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("channel sip0.cube0.pe0 -> sip0.cube0.pe1"),
                         HasSubstr("524288 bytes of sip0.cube0.pe1's SRAM"),
                         HasSubstr("system.messages.memory")));
}

}  // namespace
}  // namespace cubesim
