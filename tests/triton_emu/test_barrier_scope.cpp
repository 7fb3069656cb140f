// tl.barrier(scope): a cube's barrier waits for the programs of that cube only, a SIP's for
// that SIP's, and the race checks count only the barriers that synchronise two programs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;
using testing::AllOf;
using testing::HasSubstr;

// tiny: 1 SIP of 2 cubes of 4 PEs. The programs of cube 0 work 1000 vector cycles before a
// cube barrier; those of cube 1 go through theirs after its own latency. After barrier(all)
// everyone has waited for cube 0.
TEST(BarrierScope, ACubeBarrierWaitsForItsOwnCubeOnly) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  Simulation sim(spec, {.timing_only = true});
  std::vector<Tick> after_cube(8), after_all(8);
  const std::int64_t n = 1000 * c.pe.vector.lanes;  // 1000 cycles of one vector op, + latency
  sim.launch([&](tl::Context& tl) {
    const std::int64_t me = tl.program_id(1) * 4 + tl.program_id(0);
    if (tl.program_id(1) == 0) (void)tl.full({n}, 1.0, DType::f32);
    tl.barrier(tl::Scope::cube);
    after_cube[static_cast<std::size_t>(me)] = tl.now();
    tl.barrier(tl::Scope::all);
    after_all[static_cast<std::size_t>(me)] = tl.now();
  });
  const Tick work = c.pe.clock.cycles_to_ticks(emu::Cycles{1000 + c.pe.vector.latency_cycles});
  // A barrier releases twice the longest latency from a PE of its scope to the scope's first
  // PE after the last arrival: in a cube, (1, 1) is 2 hops from (0, 0); in the SIP, cube 1's
  // (0, 0) is 2 hops from its UCIe node (1, 1), the UCIe crossing, and 2 hops in cube 0.
  ASSERT_EQ(c.cube.noc.router_timing.pipeline, 0u);
  const Tick hop = c.cube.noc.hop_latency;
  const Tick cube = 2 * (2 * hop), all = 2 * (4 * hop + c.ucie.latency);
  for (std::size_t me = 0; me < 8; ++me) {
    EXPECT_EQ(after_cube[me], (me < 4 ? work : 0) + cube) << "program " << me;
    EXPECT_EQ(after_all[me], work + cube + all) << "program " << me;
  }
}

TEST(BarrierScope, ASipBarrierWaitsForEveryCubeOfTheSip) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  std::vector<Tick> after(8);
  sim.launch([&](tl::Context& tl) {
    if (tl.program_id(0) == 2 && tl.program_id(1) == 1) (void)tl.full({4096}, 1.0, DType::f32);
    tl.barrier(tl::Scope::sip);
    after[static_cast<std::size_t>(tl.program_id(1) * 4 + tl.program_id(0))] = tl.now();
  });
  for (std::size_t me = 1; me < 8; ++me) EXPECT_EQ(after[me], after[0]);
  EXPECT_GT(after[0], 0u);
}

// Program 0 of cube 0 writes a block; after a cube barrier, its cube neighbour reads it in
// order but a program of the other cube races with it; a SIP barrier orders both.
TEST(BarrierScope, RacesCountOnlyTheBarriersThatSynchroniseThePair) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr block = sim.alloc(1024);
  auto kernel = [&](tl::Context& tl, tl::Scope scope, std::int64_t reader_cube) {
    if (tl.program_id(0) == 0 && tl.program_id(1) == 0)
      tl.store(block, tl.full({256}, 1.0, DType::f32));
    tl.barrier(scope);
    if (tl.program_id(0) == 1 && tl.program_id(1) == reader_cube)
      (void)tl.load(block, {256}, DType::f32);
  };
  const auto same_cube = sim.launch(kernel, tl::Scope::cube, std::int64_t{0});
  EXPECT_TRUE(same_cube.races().empty()) << same_cube.describe(same_cube.races());
  const auto other_cube = sim.launch(kernel, tl::Scope::cube, std::int64_t{1});
  const auto races = other_cube.races();
  ASSERT_EQ(races.size(), 1u);
  EXPECT_THAT(other_cube.describe(races),
              AllOf(HasSubstr("program (0, 0, 0)"), HasSubstr("program (1, 1, 0)")));
  const auto sip = sim.launch(kernel, tl::Scope::sip, std::int64_t{1});
  EXPECT_TRUE(sip.races().empty()) << sip.describe(sip.races());
}

TEST(BarrierScope, AProgramThatSkipsItsCubesBarrierDeadlocksThatCube) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  try {
    sim.launch([](tl::Context& tl) {
      if (tl.program_id(0) == 3 && tl.program_id(1) == 1) return;
      tl.barrier(tl::Scope::cube);
    });
    FAIL();
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.blocked().size(), 3u);  // cube 0's programs got through
    EXPECT_THAT(e.what(), AllOf(HasSubstr("barrier(cube) 0 of cube (1, 0)"), HasSubstr("3 of 4"),
                                HasSubstr("not arrived:\n    program (3, 1, 0) on sip0.cube1.pe3 "
                                          "(finished without it)")));
  }
}

}  // namespace
}  // namespace cubesim
