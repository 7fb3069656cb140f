// tl.atomic_* (triton_emu/ops/atomic_unit.hpp): every read-modify-write is atomic (contended
// counters hand out each value once), tile atomics accumulate like a split-K reduction, the time of
// a request on an idle system is the write's path, the channel's atomic unit and the reply, all
// computed here from the spec, requests to one channel queue at its unit, and misuse is a
// kernel fault naming the PE and the address.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cubesim/cubesim.hpp>
#include <fstream>
#include <numeric>
#include <random>

#include "error_of.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;
using testing::AllOf;
using testing::HasSubstr;

Spec tiny_with_atomic_ns(double ns) {
  std::ifstream in(spec_path("tiny.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["system"]["cube"]["hbm"]["atomic_ns"] = ns;
  return Spec::from_json(doc);
}

Tick channel_time(const components::SystemConfig& c, std::uint64_t bytes) {
  return emu::Bandwidth::from_bytes_per_s(c.cube.hbm.bandwidth.bytes_per_s() / c.cube.hbm.channels)
      .transfer_time(bytes);
}

// Every program of tiny (8) adds 1 to one i64 counter `rounds` times: each old value from 0 to
// 8 * rounds - 1 comes back exactly once, and the counter ends at 8 * rounds. The same in a
// timing-only run, where atomics keep their words' values themselves.
TEST(Atomics, AContendedCounterHandsOutEveryValueOnce) {
  for (const bool timing_only : {false, true}) {
    Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = timing_only});
    const Ptr counter = sim.alloc(8);
    constexpr int rounds = 5;
    std::vector<std::int64_t> seen;
    sim.launch([&](tl::Context& tl) {
      for (int r = 0; r < rounds; ++r) seen.push_back(tl.atomic_add(counter, std::int64_t{1}));
    });
    std::sort(seen.begin(), seen.end());
    std::vector<std::int64_t> expected(8 * rounds);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(seen, expected) << (timing_only ? "timing-only" : "functional");
    if (!timing_only) {
      EXPECT_EQ(sim.read<std::int64_t>(counter, 1).front(), 8 * rounds);
    }
  }
}

// A split-K style reduction: every program adds its random f32 tile into one output with
// atomic_add; the result matches a double-precision sum by relative error, and the old values
// each program got back are what the output held before its add (so they differ).
TEST(Atomics, TileAtomicAddAccumulatesEveryProgramsTile) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  constexpr std::int64_t rows = 8, cols = 40;  // 1280 bytes: two packets, two channels
  const std::size_t n = rows * cols;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> init(n);
  for (float& x : init) x = d(rng);
  std::vector<std::vector<float>> parts(8, std::vector<float>(n));
  for (auto& p : parts)
    for (float& x : p) x = d(rng);
  const Ptr out = sim.alloc(n * 4), in = sim.alloc(8 * n * 4);
  sim.write<float>(out, init);
  for (std::size_t p = 0; p < 8; ++p) sim.write<float>(in + p * n * 4, parts[p]);
  sim.launch([&](tl::Context& tl) {
    const std::int64_t me = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
    const tl::Tile mine =
        tl.load(in + me * static_cast<std::int64_t>(n) * 4, {rows, cols}, DType::f32);
    const tl::Tile old = tl.atomic_add(out, mine);
    EXPECT_EQ(old.shape(), (tl::Shape{rows, cols}));
    EXPECT_EQ(old.dtype(), DType::f32);
  });
  const std::vector<float> got = sim.read<float>(out, n);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double want = init[i];
    for (const auto& p : parts) want += p[i];
    err = std::max(err, std::abs(got[i] - want));
    norm = std::max(norm, std::abs(want));
  }
  EXPECT_LT(err / norm, 1e-5);
}

TEST(Atomics, MaxMinXchgAndCasDoWhatTheySay) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr w = sim.alloc(64);
  sim.write<std::int32_t>(w, {10, 10, 10, 10});
  sim.write<float>(w + 16, {1.5f});
  sim.write<std::int64_t>(w + 24, {std::int64_t{1} << 40});
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    EXPECT_EQ(tl.atomic_max(w, std::int32_t{7}), 10);
    EXPECT_EQ(tl.atomic_max(w, std::int32_t{12}), 10);
    EXPECT_EQ(tl.atomic_min(w + 4, std::int32_t{-3}), 10);
    EXPECT_EQ(tl.atomic_xchg(w + 8, std::int32_t{99}), 10);
    EXPECT_EQ(tl.atomic_cas(w + 12, std::int32_t{11}, std::int32_t{5}), 10);  // no match
    EXPECT_EQ(tl.atomic_cas(w + 12, std::int32_t{10}, std::int32_t{5}), 10);  // match
    EXPECT_EQ(tl.atomic_add(w + 16, 0.25f), 1.5f);
    EXPECT_EQ(tl.atomic_add(w + 24, std::int64_t{-1}), std::int64_t{1} << 40);
    // i32 adds wrap like hardware adders.
    EXPECT_EQ(tl.atomic_xchg(w + 32, std::int32_t{INT32_MAX}), 0);  // never written: zero
    EXPECT_EQ(tl.atomic_add(w + 32, std::int32_t{1}), INT32_MAX);
  });
  EXPECT_EQ(sim.read<std::int32_t>(w, 4), (std::vector<std::int32_t>{12, -3, 99, 5}));
  EXPECT_EQ(sim.read<float>(w + 16, 1).front(), 1.75f);
  EXPECT_EQ(sim.read<std::int64_t>(w + 24, 1).front(), (std::int64_t{1} << 40) - 1);
  EXPECT_EQ(sim.read<std::int32_t>(w + 32, 1).front(), INT32_MIN);
}

// A lock built on cas: of all programs trying to take it once, exactly one gets it.
TEST(Atomics, ExactlyOneProgramWinsACasRace) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr lock = sim.alloc(4);
  int winners = 0;
  sim.launch([&](tl::Context& tl) {
    const auto me = static_cast<std::int32_t>(tl.program_id(1) * 4 + tl.program_id(0));
    if (tl.atomic_cas(lock, std::int32_t{0}, me + 1) == 0) ++winners;
  });
  EXPECT_EQ(winners, 1);
  EXPECT_NE(sim.read<std::int32_t>(lock, 1).front(), 0);
}

// One word from PE 0 of tiny, which sits on the node of cube 0's HBM controller (no mesh hop):
// the operand's write (HBM latency + the slower of port and channel for 4 bytes), the atomic
// unit (atomic_ns + the channel's time for the word), and a reply over no hop (the old word
// through the PE's port). From PE 3 (node (1, 1)), two mesh hops each way more.
TEST(Atomics, OneWordTakesTheWriteTheUnitAndTheReplyOnAnIdleSystem) {
  const Spec spec = tiny_with_atomic_ns(3.0);
  const auto& c = spec.config();
  ASSERT_EQ(c.cube.noc.hbm_nodes.front(), (components::MeshCoord{0, 0}));
  Simulation sim(spec, {.timing_only = true});
  const Ptr w = sim.alloc(4, Placement::on_cube(0, 0));
  Tick near = 0, far = 0;
  sim.launch_on(Grid{.pes = 4, .cubes = 1}, [&](tl::Context& tl) {
    const std::int64_t pe = tl.program_id(0);
    auto timed = [&](Tick& into) {
      const Tick t0 = tl.now();
      (void)tl.atomic_add(w, std::int32_t{1});
      into = tl.now() - t0;
    };
    if (pe == 0) timed(near);
    tl.barrier(tl::Scope::cube);  // PE 3 starts once PE 0's is done
    if (pe == 3) timed(far);
  });
  const Tick write =
      c.cube.hbm.latency + std::max(channel_time(c, 4), c.cube.noc.link_bandwidth.transfer_time(4));
  const Tick unit = c.cube.hbm.atomic_time + channel_time(c, 4);
  const Tick reply = c.cube.noc.link_bandwidth.transfer_time(4);  // the old word, through a port
  EXPECT_EQ(near, write + unit + reply);
  EXPECT_EQ(far, write + unit + 4 * c.cube.noc.hop_latency + reply);
}

// The 4 PEs of cube 0 add to one word `rounds` times with a slow unit: once the
// first request arrives the unit never idles (each PE's next request comes back sooner than
// three others' are served), so the last reply comes 4 * rounds unit times after the first
// arrival, plus at most the longest reply (two hops and the word through a port).
TEST(Atomics, RequestsToOneChannelQueueAtItsUnit) {
  const Spec spec = tiny_with_atomic_ns(200.0);
  const auto& c = spec.config();
  Simulation sim(spec, {.timing_only = true});
  const Ptr w = sim.alloc(4, Placement::on_cube(0, 0));
  constexpr int rounds = 6;
  Tick last = 0;
  sim.launch_on(Grid{.pes = 4, .cubes = 1}, [&](tl::Context& tl) {
    for (int r = 0; r < rounds; ++r) (void)tl.atomic_add(w, std::int32_t{1});
    last = std::max(last, tl.now());
  });
  const Tick first_arrival =
      c.cube.hbm.latency + std::max(channel_time(c, 4), c.cube.noc.link_bandwidth.transfer_time(4));
  const Tick unit = c.cube.hbm.atomic_time + channel_time(c, 4);
  const Tick served = first_arrival + 4 * rounds * unit;
  EXPECT_GE(last, served);
  EXPECT_LE(last, served + 2 * c.cube.noc.hop_latency + c.cube.noc.link_bandwidth.transfer_time(4));
}

TEST(Atomics, MisuseIsAKernelFaultNamingThePeAndTheAddress) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr w = sim.alloc(64);
  auto fault = [&](auto body) {
    return error_of<KernelError>(
        [&] { sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) { body(tl); }); });
  };
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.atomic_add(w + 4, std::int64_t{1}); }),
              AllOf(HasSubstr("sip0.cube0.pe0"), HasSubstr("atomic_add"), HasSubstr("misaligned"),
                    HasSubstr("i64")));
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.atomic_max(w + 64, std::int32_t{1}); }),
              AllOf(HasSubstr("atomic_max"), HasSubstr("allocat")));
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.atomic_xchg(Ptr{16}, std::int32_t{1}); }),
              HasSubstr("atomic_xchg"));
  EXPECT_THAT(
      fault([&](tl::Context& tl) { (void)tl.atomic_add(w, tl.full({4}, 1.0, DType::f16)); }),
      AllOf(HasSubstr("f16"), HasSubstr("f32, i32 and i64")));
  EXPECT_THAT(fault([&](tl::Context& tl) {
                (void)tl.atomic_cas(w, tl.full({2}, 0.0, DType::i32),
                                    tl.full({4}, 1.0, DType::i32));
              }),
              HasSubstr("must match"));
  // The simulation survives the faults.
  sim.launch_on(Grid{.pes = 1, .cubes = 1},
                [&](tl::Context& tl) { EXPECT_EQ(tl.atomic_add(w, std::int32_t{2}), 0); });
}

// Atomics to one word from many programs are not races; a plain load of it beside them is.
TEST(Atomics, AtomicsDoNotRaceWithEachOtherButAPlainReadDoes) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr w = sim.alloc(4);
  const auto quiet = sim.launch([&](tl::Context& tl) { (void)tl.atomic_add(w, std::int32_t{1}); });
  EXPECT_TRUE(quiet.races().empty()) << quiet.describe(quiet.races());
  const auto racy = sim.launch([&](tl::Context& tl) {
    if (tl.program_id(0) == 0 && tl.program_id(1) == 0)
      (void)tl.load(w, {1}, DType::i32);
    else
      (void)tl.atomic_add(w, std::int32_t{1});
  });
  EXPECT_FALSE(racy.races().empty());
}

}  // namespace
}  // namespace cubesim
