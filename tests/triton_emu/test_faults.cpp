// Kernel faults (exit 3) and deadlocks (exit 4): each names the PE, the simulated time and
// what would fix it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <functional>
#include <vector>

#include "error_of.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Faults, OutOfBoundsLoadNamesThePeTheAddressAndTheRanges) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr p = sim.alloc(4096);
  const auto msg = error_of<KernelError>([&] {
    sim.launch([&](tl::Context& tl) {
      if (tl.program_id(0) == 2) (void)tl.load(Ptr{0x40}, {16}, DType::f32);
      (void)p;
    });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("sip0.cube0.pe2"), HasSubstr("0x40"),
                         HasSubstr("outside every HBM range"), HasSubstr("interleaved window")));
}

TEST(Faults, AKernelThatLoadsWithoutEndFillsTheAccessLogAndFaults) {
  // The access log (sharding checks) grew without bound under an endless tl.load loop (3 GB at
  // 30 s): past SimOptions::max_logged_accesses the launch faults, and the Simulation goes on.
  EXPECT_GT(SimOptions{}.max_logged_accesses, 0u);
  Simulation sim(Spec::load(spec_path("tiny.json")),
                 {.timing_only = true, .max_logged_accesses = 1000});
  const Ptr p = sim.alloc(4096);
  try {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      for (;;) (void)tl.load(p, {16}, DType::f32);
    });
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("sip0.cube0.pe0"),
                                HasSubstr("the access log is full: 1000 records"),
                                HasSubstr("SimOptions::max_logged_accesses")));
  }
  // 500 loads stay under the limit.
  const RunResult r = sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    for (int i = 0; i < 500; ++i) (void)tl.load(p, {16}, DType::f32);
  });
  EXPECT_GT(r.sim_time_ps, 0u);
}

TEST(Faults, MisalignedLoadSaysTheElementSize) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  const Ptr p = sim.alloc(4096);
  const auto msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1},
                  [&](tl::Context& tl) { (void)tl.load(p + 2, {16}, DType::f32); });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("misaligned"), HasSubstr("multiples of 4 bytes")));
}

TEST(Faults, SramOverflowNamesBytesAskedAndFree) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  Simulation sim(spec, {.timing_only = true});
  const std::uint64_t sram = spec.config().pe.sram_bytes;
  const Ptr p = sim.alloc(sram * 2);
  try {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto keep = tl.load(p, {static_cast<std::int64_t>(sram / 8)}, DType::f32);  // half
      (void)tl.load(p, {static_cast<std::int64_t>(sram / 4) + 1}, DType::f32);  // > the rest
    });
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("SRAM overflow on sip0.cube0.pe0"),
                                HasSubstr("needs " + std::to_string(sram + 4) + " bytes"),
                                HasSubstr("only " + std::to_string(sram / 2) + " of " +
                                          std::to_string(sram) + " bytes are free"),
                                HasSubstr("sram_KiB")));
  }
}

TEST(Faults, TilesGiveTheirSramBackWhenTheyGoOutOfScope) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  Simulation sim(spec, {.timing_only = true});
  const std::uint64_t sram = spec.config().pe.sram_bytes;
  const Ptr p = sim.alloc(sram);
  EXPECT_NO_THROW(sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    for (int i = 0; i < 4; ++i) {
      const auto t = tl.load(p, {static_cast<std::int64_t>(sram / 4 * 3 / 4)}, DType::f32);
      EXPECT_LT(tl.sram_free(), sram / 4 + 1);
    }
    EXPECT_EQ(tl.sram_free(), sram);
  }));
}

TEST(Faults, TileCopiesHoldTheirSramOnceUntilTheLastOneGoes) {
  std::vector<tl::Tile> kept;  // dropped after the simulation is gone (ASan checks that)
  {
    const Spec spec = Spec::load(spec_path("tiny.json"));
    Simulation sim(spec, {.timing_only = true});
    const std::uint64_t sram = spec.config().pe.sram_bytes;
    const std::int64_t n = static_cast<std::int64_t>(sram / 16);
    const Ptr p = sim.alloc(sram);
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      auto t = tl.load(p, {n}, DType::f32);
      const std::uint64_t held = static_cast<std::uint64_t>(n) * 4;
      EXPECT_EQ(tl.sram_free(), sram - held);
      {
        const auto copy = t;
        const auto copy_of_copy = copy;
        EXPECT_EQ(tl.sram_free(), sram - held);
      }
      kept.push_back(t);
      t = tl::Tile{};
      EXPECT_EQ(tl.sram_free(), sram - held);  // `kept` still holds it
      kept.clear();
      EXPECT_EQ(tl.sram_free(), sram);
      kept.push_back(tl.load(p, {n}, DType::f32));
    });
  }
  kept.clear();
}

TEST(Faults, AKernelExceptionIsAKernelErrorWithTheTime) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  try {
    sim.launch([](tl::Context& tl) {
      const auto t = tl.full({64}, 1.0, DType::f32);
      (void)(t + 1.0);
      if (tl.program_id(1) == 1 && tl.program_id(0) == 0) throw std::runtime_error("boom");
    });
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_EQ(e.pe(), "sip0.cube1.pe0");
    EXPECT_GT(e.time(), 0u);  // the vector work before the throw took time
    EXPECT_THAT(e.what(), AllOf(HasSubstr("boom"), HasSubstr("program_id 0, 1, 0")));
  }
}

TEST(Faults, AProgramThatSkipsTheBarrierDeadlocksTheOthers) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  try {
    sim.launch([](tl::Context& tl) {
      if (tl.program_id(0) == 1 && tl.program_id(1) == 0) return;
      tl.barrier();
    });
    FAIL();
  } catch (const DeadlockError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::deadlock);
    EXPECT_EQ(e.blocked().size(), 7u);
    EXPECT_THAT(e.what(), AllOf(HasSubstr("deadlock"), HasSubstr("sip0.cube0.pe0 waits on"),
                                HasSubstr("barrier 0"), HasSubstr("7 of 8")));
  }
}

TEST(Faults, GemmWithMismatchedInnerDimensionsIsAFault) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr p = sim.alloc(1 << 16);
  const auto msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto a = tl.load(p, {8, 16}, DType::f16);
      const auto b = tl.ref(p + 4096, {8, 8}, DType::f16);
      auto h = tl.composite(Op::gemm, a, b, p + 8192);
      tl.wait(h);
    });
  });
  EXPECT_THAT(msg, HasSubstr("K = 16 but b gives K = 8"));
}

TEST(Faults, ATileUsedAfterItsLaunchEndedIsAClearError) {
  Simulation sim(Spec::load(spec_path("tiny.json")));
  static tl::Tile kept;  // a user's static: outlives the launch and its program
  sim.launch_on(Grid{.pes = 1, .cubes = 1},
                [](tl::Context& tl) { kept = tl.full({16}, 2.0, DType::f32); });
  EXPECT_EQ(kept.to_f32()[3], 2.0f);  // values stay readable on the host
  const auto msg = error_of<UsageError>([] { (void)(kept + 1.0); });
  EXPECT_THAT(msg, AllOf(HasSubstr("after the launch that made it ended"), HasSubstr("[16]")));
  // In a later launch on the same PE too (its Context may even sit at the same address).
  const auto in_kernel = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [](tl::Context& tl) {
      (void)tl.full({16}, 1.0, DType::f32);
      (void)(kept * 2.0);
    });
  });
  EXPECT_THAT(in_kernel, HasSubstr("after the launch that made it ended"));
  kept = tl::Tile{};
}

TEST(Faults, HugeAndNegativeShapesAreRefusedBeforeAnyTransferIsPlanned) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const Ptr p = sim.alloc(1 << 20);
  auto fault_of = [&](auto body) {
    return error_of<KernelError>([&] { sim.launch_on(Grid{.pes = 1, .cubes = 1}, body); });
  };
  // 2^28 rows of a strided load: refused by SRAM at once (it used to build 2^28 segments).
  EXPECT_THAT(fault_of([&](tl::Context& tl) {
                (void)tl.load(p, {std::int64_t{1} << 28, 4}, DType::f32, {.row_stride = 8});
              }),
              HasSubstr("SRAM overflow"));
  const std::int64_t huge = std::int64_t{1} << 40;  // huge x huge elements overflow 64 bits
  for (auto body :
       std::vector<std::function<void(tl::Context&)>>{[&](tl::Context& tl) {
                                                        (void)tl.zeros({huge, huge}, DType::f32);
                                                      },
                                                      [&](tl::Context& tl) {
                                                        (void)tl.load(p, {huge, huge}, DType::f32);
                                                      },
                                                      [&](tl::Context& tl) {
                                                        (void)tl.ref(p, {huge, huge}, DType::f32);
                                                      }})
    EXPECT_THAT(fault_of(body), HasSubstr("more than 2^63 bytes"));
  EXPECT_THAT(fault_of([&](tl::Context& tl) {
                (void)tl.ref(p, {std::int64_t{1} << 40, 1}, DType::f32, std::int64_t{1} << 40);
              }),
              HasSubstr("spans more than 2^64 bytes"));
  EXPECT_THAT(fault_of([&](tl::Context& tl) { (void)tl.load(p, {-4}, DType::f32); }),
              AllOf(HasSubstr("[-4] has a negative dimension"), Not(HasSubstr("stride"))));
}

TEST(Faults, ABadShapeIsNamedAfterTheCallThatAskedForIt) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  auto fault_of = [&](auto body) {
    return error_of<KernelError>([&] { sim.launch_on(Grid{.pes = 2, .cubes = 1}, body); });
  };
  EXPECT_THAT(fault_of([](tl::Context& tl) { (void)tl.full({-3}, 1.0, DType::f32); }),
              HasSubstr("full: shape [-3] has a negative dimension"));
  EXPECT_THAT(fault_of([](tl::Context& tl) {
                (void)tl.zeros({4, -1}, DType::f32);
              }),
              HasSubstr("zeros: shape [4, -1] has a negative dimension"));
  EXPECT_THAT(fault_of([](tl::Context& tl) {
                (void)tl.make_tile({2, -3}, DType::f32);
              }),
              HasSubstr("make_tile: shape [2, -3] has a negative dimension"));
  EXPECT_THAT(fault_of([](tl::Context& tl) {
                if (tl.program_id() == 1) (void)tl.recv_async(tl::west, {-1}, DType::f32);
              }),
              HasSubstr("recv: shape [-1] has a negative dimension"));
}

TEST(Faults, ALoadPastTheEndOfSimulatedTimeSaysSoAndNamesTheSpecField) {
  const Spec spec =
      Spec::load(spec_path("tiny.json")).with("system.cube.noc.link_bandwidth_GBps", 1e-9);
  Simulation sim(spec, {.timing_only = true});
  const Ptr p = sim.alloc(1 << 16);
  // 1e-9 GB/s is a byte a second: 300 loads of 64 KiB take 2^24.2 s, past the 2^64 ps (213
  // days) of simulated time.
  const auto msg = error_of<KernelError>([&] {
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      for (int i = 0; i < 300; ++i) (void)tl.load(p, {1 << 14}, DType::f32);
    });
  });
  EXPECT_THAT(msg, AllOf(HasSubstr("end of simulated time"),
                         HasSubstr("system.cube.noc.link_bandwidth_GBps"),
                         Not(HasSubstr("composite operation failed"))));
}

}  // namespace
}  // namespace cubesim
