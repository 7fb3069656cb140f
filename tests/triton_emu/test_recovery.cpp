// A Simulation after a failed launch: as usable as a new one (same simulated times), whatever
// the programs were doing when the launch stopped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

struct Buffers {
  Ptr a, b, c, big;
  explicit Buffers(Simulation& sim)
      : a(sim.alloc(64 * 64 * 2)),
        b(sim.alloc(64 * 64 * 2)),
        c(sim.alloc(8 * 64 * 64 * 2)),
        big(sim.alloc(8 * 64 * 1024)) {}
};

std::int64_t global_pid(tl::Context& tl) {
  return tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
}

// Every kind of activity a PE has: a load and a store, a composite on the GEMM engine, a barrier.
void correct(tl::Context& tl, Buffers in) {
  const auto pid = global_pid(tl);
  const auto t = tl.load(in.big + pid * 64 * 1024, {16 * 1024}, DType::f32);
  tl.store(in.big + pid * 64 * 1024, t + 1.0);
  auto h = tl.composite(Op::gemm, tl.ref(in.a, {64, 64}, DType::f16),
                        tl.ref(in.b, {64, 64}, DType::f16), in.c + pid * 64 * 64 * 2);
  tl.wait(h);
  tl.barrier();
}

// Program 0 stops early while program 1 has a long load in flight, program 2 has GEMMs queued
// on its engine, and the others wait at the barrier.
enum class Stop { fault, deadlock };
void stops_midway(tl::Context& tl, Buffers in, Stop how) {
  const auto pid = global_pid(tl);
  if (pid == 0) {
    (void)tl.load(in.a, {16}, DType::f32);
    if (how == Stop::fault) tl.fault("stopping on purpose");
    return;  // never reaches the barrier
  }
  if (pid == 1) (void)tl.load(in.big, {64 * 1024}, DType::f32);  // 256 KiB: microseconds
  if (pid == 2) {
    tl::Handle last;
    for (int i = 0; i < 3; ++i)
      last = tl.composite(Op::gemm, tl.ref(in.a, {64, 64}, DType::f16),
                          tl.ref(in.b, {64, 64}, DType::f16), in.c + i * 64 * 64 * 2);
    tl.wait(last);
  }
  tl.barrier();
}

std::uint64_t fresh_time(const Spec& spec, const SimOptions& options) {
  Simulation sim(spec, options);
  const Buffers in(sim);
  return sim.launch(correct, in).sim_time_ps;
}

TEST(Recovery, AfterAFaultOrADeadlockALaunchTakesTheTimeItTakesOnANewSimulation) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  for (const bool timing_only : {true, false})
    for (const auto network : {components::NetworkModel::packet, components::NetworkModel::flow}) {
      const SimOptions options{.timing_only = timing_only, .network = network};
      const std::uint64_t expected = fresh_time(spec, options);
      Simulation sim(spec, options);
      const Buffers in(sim);
      EXPECT_THROW(sim.launch(stops_midway, in, Stop::fault), KernelError);
      EXPECT_EQ(sim.launch(correct, in).sim_time_ps, expected)
          << "after a fault, timing_only " << timing_only;
      EXPECT_THROW(sim.launch(stops_midway, in, Stop::deadlock), DeadlockError);
      EXPECT_EQ(sim.launch(correct, in).sim_time_ps, expected)
          << "after a deadlock, timing_only " << timing_only;
    }
}

TEST(Recovery, AFaultLeavesOnlyTheGemmsThatFinishedWrittenAndTheNextLaunchComputesItsOwn) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  Simulation sim(spec);
  const Buffers in(sim);
  std::vector<half> a(64 * 64), b(64 * 64);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = half(static_cast<float>(i % 7) - 3.0f);
    b[i] = half(static_cast<float>(i % 5) * 0.5f - 1.0f);
  }
  sim.write(in.a, a);
  sim.write(in.b, b);
  EXPECT_THROW(sim.launch(stops_midway, in, Stop::fault), KernelError);
  (void)sim.launch(correct, in);
  const auto c = sim.read<half>(in.c + 5 * 64 * 64 * 2, 64 * 64);  // program 5's product
  for (int i = 0; i < 64; i += 9)
    for (int j = 0; j < 64; j += 7) {
      double ref = 0;
      for (int k = 0; k < 64; ++k)
        ref += static_cast<double>(static_cast<float>(a[i * 64 + k])) *
               static_cast<double>(static_cast<float>(b[k * 64 + j]));
      EXPECT_NEAR(static_cast<float>(c[i * 64 + j]), ref, 1e-3 * std::max(1.0, std::abs(ref)));
    }
}

// Recursion the optimiser cannot flatten: each frame keeps 1 KiB alive across the call.
int deep(int n) {
  if (n > 100'000'000) return n;  // never reached: the stack runs out first
  volatile char frame[1024];
  frame[0] = static_cast<char>(n);
  return deep(n + 1) + frame[0];
}

TEST(Recovery, AStackOverflowIsAKernelErrorAndTheProcessLivesOn) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  Simulation sim(spec, {.timing_only = true, .stack_size = 32 * 1024});
  try {
    sim.launch([](tl::Context& tl) {
      if (tl.program_id(1) == 1 && tl.program_id(0) == 3) (void)deep(0);
      tl.barrier();
    });
    FAIL() << "no error";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.pe(), "sip0.cube1.pe3");
    EXPECT_THAT(e.what(), AllOf(HasSubstr("program_id 3, 1, 0"), HasSubstr("stack overflow"),
                                HasSubstr("32 KiB fiber stack"), HasSubstr("--stack-size")));
  }
  // What the abandoned fiber held is lost: this Simulation says so instead of running on.
  try {
    sim.launch([](tl::Context&) {});
    FAIL() << "launched again";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("cannot launch again"), HasSubstr("stack overflowed"),
                                HasSubstr("new Simulation")));
  }
  Simulation next(spec, {.timing_only = true, .stack_size = 32 * 1024});
  EXPECT_NO_THROW(next.launch([](tl::Context& tl) { tl.barrier(); }));
}

}  // namespace
}  // namespace cubesim
