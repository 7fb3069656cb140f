// The sharding checks understand messages: a send orders what its program did before it with
// what the receiver does after the recv returned (also through chains of messages and
// barriers), so handing data over through HBM with a message as the signal is no race, and a
// read before the recv or a write after the send is one, naming both programs. The message
// check replays each program's communication with fewer slots: how many a kernel needs, the
// deadlock it would hit with fewer, and messages sent but never received or the reverse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <fstream>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::Not;

constexpr std::int64_t kLen = 64;  // f32 elements handed over

// tiny.json (1 SIP of 2 cubes of 4 PEs) with `slots` per channel.
Spec tiny_with_slots(std::uint32_t slots) {
  std::ifstream in(spec_path("tiny.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["system"]["messages"] = {{"slots", slots}};
  return Spec::from_json(doc);
}

tl::Tile token(tl::Context& tl) {
  return tl.full({4}, 1.0, DType::f32);
}

// Program 0 writes `buf` and signals program 1, which reads it; `when` moves one access to the
// wrong side of the message.
enum class HandOff { ordered, read_before_recv, read_before_wait, write_after_send };

void hand_off(tl::Context& tl, Ptr buf, HandOff when) {
  const tl::Tile values = tl.full({kLen}, 2.0, DType::f32);
  if (tl.program_id(0) == 0) {
    if (when != HandOff::write_after_send) tl.store(buf, values);
    tl.send(tl::east, token(tl));
    if (when == HandOff::write_after_send) tl.store(buf, values);
  } else {
    if (when == HandOff::read_before_recv) (void)tl.load(buf, {kLen}, DType::f32);
    tl::RecvHandle h = tl.recv_async(tl::west, {4}, DType::f32);
    if (when == HandOff::read_before_wait) (void)tl.load(buf, {kLen}, DType::f32);
    (void)tl.wait(h);
    if (when == HandOff::ordered || when == HandOff::write_after_send)
      (void)tl.load(buf, {kLen}, DType::f32);
  }
}

struct MessageChecks : ::testing::Test {
  Simulation sim{tiny_with_slots(2), {.timing_only = true}};
  const Ptr buf = sim.alloc(kLen * 4);
  const Grid pair{.pes = 2, .cubes = 1};
};

TEST_F(MessageChecks, DataHandedOverThroughHbmWithAMessageAsTheSignalIsNoRace) {
  const auto r = sim.launch_on(pair, hand_off, buf, HandOff::ordered);
  EXPECT_TRUE(r.races().empty()) << r.describe(r.races());
}

TEST_F(MessageChecks, AReadBeforeTheRecvReturnedRacesWithTheWriteBeforeTheSend) {
  for (const HandOff when : {HandOff::read_before_recv, HandOff::read_before_wait}) {
    const auto r = sim.launch_on(pair, hand_off, buf, when);
    const auto races = r.races();
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_EQ(races[0].first, 0u);
    EXPECT_EQ(races[0].second, 1u);
    EXPECT_FALSE(races[0].write_write);
    EXPECT_EQ(races[0].missed, Race::Missed::before_recv);
    EXPECT_EQ(races[0].missed_by, 1u);
    EXPECT_THAT(r.describe(races),
                AllOf(HasSubstr("program (0, 0, 0) and program (1, 0, 0)"),
                      HasSubstr("the message does not order them: program (1, 0, 0) accessed "
                                "the bytes before returning from the recv")));
  }
}

TEST_F(MessageChecks, AWriteAfterTheSendRacesWithTheReadAfterTheRecv) {
  const auto r = sim.launch_on(pair, hand_off, buf, HandOff::write_after_send);
  const auto races = r.races();
  ASSERT_EQ(races.size(), 1u) << r.describe(races);
  EXPECT_EQ(races[0].missed, Race::Missed::after_send);
  EXPECT_EQ(races[0].missed_by, 0u);
  EXPECT_THAT(r.describe(races),
              AllOf(HasSubstr("program (0, 0, 0)"), HasSubstr("program (1, 0, 0)"),
                    HasSubstr("the message does not order them: program (0, 0, 0) accessed the "
                              "bytes after the send")));
}

TEST_F(MessageChecks, AChainOfMessagesOrdersItsEnds) {
  // 0 writes and tells 1, 1 tells 2, 2 tells 3, 3 reads; 3 reading before its recv races.
  for (const bool early : {false, true}) {
    const auto r = sim.launch_on(Grid{.pes = 4, .cubes = 1}, [&](tl::Context& tl) {
      const std::int64_t me = tl.program_id(0);
      if (me == 0) tl.store(buf, tl.full({kLen}, 2.0, DType::f32));
      if (me == 3 && early) (void)tl.load(buf, {kLen}, DType::f32);
      if (me > 0) (void)tl.recv(tl::program(me - 1), {4}, DType::f32);
      if (me < 3) tl.send(tl::program(me + 1), token(tl));
      if (me == 3 && !early) (void)tl.load(buf, {kLen}, DType::f32);
    });
    const auto races = r.races();
    if (!early) {
      EXPECT_TRUE(races.empty()) << r.describe(races);
      continue;
    }
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_EQ(races[0].first, 0u);
    EXPECT_EQ(races[0].second, 3u);
    EXPECT_EQ(races[0].missed_by, 3u);
  }
}

TEST_F(MessageChecks, AMessageIntoACubeThenItsBarrierOrdersTheWriterWithTheCubesPrograms) {
  // Program (0, 0) writes and tells (0, 1) in the other cube, which passes barrier(cube) with
  // its cube; (1, 1) reads after that barrier. The barrier must come after the recv: before it,
  // only the message would order the two, and it reaches (0, 1) alone.
  for (const bool recv_first : {true, false}) {
    const auto r = sim.launch([&](tl::Context& tl) {
      const std::int64_t pe = tl.program_id(0), cube = tl.program_id(1);
      if (pe == 0 && cube == 0) {
        tl.store(buf, tl.full({kLen}, 2.0, DType::f32));
        tl.send(tl::program(0, 1), token(tl));
      }
      const bool receiver = pe == 0 && cube == 1;
      if (receiver && recv_first) (void)tl.recv(tl::program(0, 0), {4}, DType::f32);
      tl.barrier(tl::Scope::cube);
      if (receiver && !recv_first) (void)tl.recv(tl::program(0, 0), {4}, DType::f32);
      if (pe == 1 && cube == 1) (void)tl.load(buf, {kLen}, DType::f32);
    });
    const auto races = r.races();
    if (recv_first) {
      EXPECT_TRUE(races.empty()) << r.describe(races);
      continue;
    }
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_THAT(r.describe(races),
                AllOf(HasSubstr("program (0, 0, 0)"), HasSubstr("program (1, 1, 0)")));
  }
}

TEST_F(MessageChecks, ACompositeIsOrderedByTheSendOnlyOnceItsProgramWaitedOnIt) {
  // Program 0 computes C on its GEMM engine and tells program 1, which reads C.
  const Ptr a = sim.alloc(16 * 16 * 2), b = sim.alloc(16 * 16 * 2), c = sim.alloc(16 * 16 * 2);
  for (const bool wait_before_send : {true, false}) {
    const auto r = sim.launch_on(pair, [&](tl::Context& tl) {
      if (tl.program_id(0) == 0) {
        tl::Handle h = tl.composite(tl::Op::gemm, tl.ref(a, {16, 16}, DType::f16),
                                    tl.ref(b, {16, 16}, DType::f16), c);
        if (wait_before_send) tl.wait(h);
        tl.send(tl::east, token(tl));
        if (!wait_before_send) tl.wait(h);
      } else {
        (void)tl.recv(tl::west, {4}, DType::f32);
        (void)tl.load(c, {16, 16}, DType::f16);
      }
    });
    const auto races = r.races();
    if (wait_before_send) {
      EXPECT_TRUE(races.empty()) << r.describe(races);
      continue;
    }
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_TRUE(races[0].in_flight);
    EXPECT_EQ(races[0].range.begin, c.addr);
  }
}

// Every program sends `ahead` messages round a ring of all programs before it receives any.
void send_ahead(tl::Context& tl, int ahead) {
  const std::int64_t pes = tl.num_programs(0), n = pes * tl.num_programs(1);
  const std::int64_t me = tl.program_id(1) * pes + tl.program_id(0);
  const std::int64_t next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int i = 0; i < ahead; ++i) tl.send(tl::program(next % pes, next / pes), token(tl));
  for (int i = 0; i < ahead; ++i)
    (void)tl.recv(tl::program(prev % pes, prev / pes), {4}, DType::f32);
}

TEST_F(MessageChecks, ARingThatSendsTwoAheadNeedsTwoSlotsAndDeadlocksWithOne) {
  const auto r = sim.launch(send_ahead, 2);
  const MessageHazards h = r.message_hazards();
  EXPECT_TRUE(h.complete);
  EXPECT_EQ(h.spec_slots, 2u);
  EXPECT_EQ(h.min_slots, 2u);
  EXPECT_FALSE(h.clean());
  ASSERT_EQ(h.deadlocks.size(), 1u);
  const auto& d = h.deadlocks[0];
  EXPECT_EQ(d.slots, 1u);
  ASSERT_EQ(d.blocked.size(), 8u);  // every program, at its second send
  for (const auto& b : d.blocked) {
    EXPECT_EQ(b.on, MessageHazards::Blocked::On::send);
    EXPECT_EQ(b.message, 2u);
    EXPECT_EQ(b.channel.from, b.program);
    EXPECT_EQ(b.waits_for, (b.program + 1) % 8);
  }
  EXPECT_EQ(d.cycle.size(), 8u);  // round the whole ring
  const std::string text = r.describe(h);
  EXPECT_THAT(
      text,
      AllOf(
          HasSubstr("complete with 2 slots per channel or more (the spec's smallest window has 2)"),
          HasSubstr("with 1 slot per channel, 8 program(s) block"),
          HasSubstr("program (0, 0, 0) waits to send message 2 to program (1, 0, 0): "
                    "no credit"),
          HasSubstr("channel program (0, 0, 0) -> program (1, 0, 0)"),
          HasSubstr("a cycle, each waiting on the next: program (0, 0, 0) -> program "
                    "(1, 0, 0) -> program (2, 0, 0)")))
      << text;
  // And the runtime agrees: with one slot it deadlocks.
  Simulation one(tiny_with_slots(1), {.timing_only = true});
  EXPECT_THROW(one.launch(send_ahead, 2), DeadlockError);
}

TEST_F(MessageChecks, SendThenReceiveInPairsIsSafeWithOneSlot) {
  // A ring that sends one and receives one, and a ping-pong between two programs.
  const auto ring = sim.launch(send_ahead, 1);
  EXPECT_TRUE(ring.message_hazards().clean()) << ring.describe(ring.message_hazards());
  const auto ping_pong = sim.launch_on(pair, [](tl::Context& tl) {
    const bool first = tl.program_id(0) == 0;
    const tl::Peer other = first ? tl::east : tl::west;
    for (int i = 0; i < 5; ++i) {
      if (first) tl.send(other, token(tl));
      (void)tl.recv(other, {4}, DType::f32);
      if (!first) tl.send(other, token(tl));
    }
  });
  const MessageHazards h = ping_pong.message_hazards();
  EXPECT_EQ(h.min_slots, 1u);
  EXPECT_TRUE(h.deadlocks.empty());
  EXPECT_THAT(ping_pong.describe(h), HasSubstr("complete with 1 slot per channel or more"));
}

TEST_F(MessageChecks, BothSidesReceivingFirstStillDeadlocksAndTheCheckNamesTheCycle) {
  try {
    sim.launch_on(pair, [](tl::Context& tl) {
      const tl::Peer other = tl.program_id(0) == 0 ? tl::east : tl::west;
      (void)tl.recv(other, {4}, DType::f32);
      tl.send(other, token(tl));
    });
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::deadlock);
  }
  const MessageHazards h = sim.message_hazards();
  EXPECT_FALSE(h.complete);
  EXPECT_EQ(h.min_slots, 0u);
  ASSERT_EQ(h.deadlocks.size(), 1u);
  EXPECT_EQ(h.deadlocks[0].blocked.size(), 2u);
  EXPECT_EQ(h.deadlocks[0].blocked[0].on, MessageHazards::Blocked::On::recv);
  EXPECT_EQ(h.deadlocks[0].cycle.size(), 2u);
  EXPECT_THAT(sim.describe(h),
              AllOf(HasSubstr("the launch stopped before every program ended"),
                    HasSubstr("program (0, 0, 0) waits to receive message 1 from program (1, 0, "
                              "0), not yet sent"),
                    HasSubstr("a cycle, each waiting on the next: program (0, 0, 0) -> program "
                              "(1, 0, 0) -> program (0, 0, 0)")));
}

TEST_F(MessageChecks, ABarrierInTheWayOfARecvIsPartOfTheDeadlock) {
  // Program 1 waits at barrier(cube) for program 0, which waits for a message program 1 sends
  // only after the barrier.
  EXPECT_THROW(sim.launch_on(pair,
                             [](tl::Context& tl) {
                               if (tl.program_id(0) == 0) {
                                 (void)tl.recv(tl::east, {4}, DType::f32);
                                 tl.barrier(tl::Scope::cube);
                               } else {
                                 tl.barrier(tl::Scope::cube);
                                 tl.send(tl::west, token(tl));
                               }
                             }),
               DeadlockError);
  const MessageHazards h = sim.message_hazards();
  ASSERT_EQ(h.deadlocks.size(), 1u);
  EXPECT_EQ(h.deadlocks[0].cycle.size(), 2u);
  EXPECT_THAT(sim.describe(h),
              HasSubstr("program (1, 0, 0) waits at barrier(cube) 0 of cube (0, 0) for program "
                        "(0, 0, 0)"));
}

TEST_F(MessageChecks, MessagesNeverReceivedOrNeverSentAreNamedByChannel) {
  EXPECT_THROW(sim.launch_on(pair,
                             [](tl::Context& tl) {
                               if (tl.program_id(0) == 0) {
                                 tl.send(tl::east, token(tl));
                                 tl.send(tl::east, token(tl));
                               } else {
                                 (void)tl.recv(tl::west, {4}, DType::f32);
                               }
                             }),
               KernelError);
  const MessageHazards sent = sim.message_hazards();
  EXPECT_TRUE(sent.complete);
  ASSERT_EQ(sent.never_received.size(), 1u);
  EXPECT_EQ(sent.never_received[0].channel.from, 0u);
  EXPECT_EQ(sent.never_received[0].channel.to, 1u);
  EXPECT_EQ(sent.never_received[0].messages, 1u);
  EXPECT_THAT(sim.describe(sent),
              AllOf(HasSubstr("1 channel(s) with messages sent and never received"),
                    HasSubstr("program (0, 0, 0) -> program (1, 0, 0): 1 message(s)")));

  // A recv posted and never waited on does not stop the launch; the check still names it.
  const auto r = sim.launch_on(pair, [](tl::Context& tl) {
    if (tl.program_id(0) == 1) (void)tl.recv_async(tl::west, {4}, DType::f32);
  });
  const MessageHazards posted = r.message_hazards();
  ASSERT_EQ(posted.never_sent.size(), 1u);
  EXPECT_EQ(posted.never_sent[0].channel.from, 0u);
  EXPECT_THAT(r.describe(posted), HasSubstr("recvs posted for messages never sent"));
}

TEST_F(MessageChecks, AKernelWithoutMessagesIsClean) {
  const auto r = sim.launch([&](tl::Context& tl) { tl.barrier(); });
  EXPECT_TRUE(r.message_hazards().clean());
  EXPECT_THAT(r.describe(r.message_hazards()), Not(HasSubstr("block")));
}

TEST(MessageChecksOff, WithoutTheAccessLogTheChecksSaySo) {
  Simulation sim(tiny_with_slots(2), {.timing_only = true, .record_accesses = false});
  const auto r = sim.launch([](tl::Context&) {});
  EXPECT_THROW((void)r.message_hazards(), UsageError);
  EXPECT_THROW((void)r.races(), UsageError);
  EXPECT_THROW((void)sim.message_hazards(), UsageError);
}

}  // namespace
}  // namespace cubesim
