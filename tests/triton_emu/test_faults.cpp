// Kernel faults (exit 3) and deadlocks (exit 4): each names the PE, the simulated time and
// what would fix it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <vector>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

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

}  // namespace
}  // namespace cubesim
