// A PE's GEMM engine: one job at a time in order, start-up, then compute beside streaming.
// Every expected time is computed from the configuration (small_config: 50 ns start-up,
// 32 TFLOP/s for f16, HBM latency 100 ns, channels and mesh links at 64 GB/s).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "components/pe/gemm_engine.hpp"
#include "network_bench.hpp"
#include "system_config_for_tests.hpp"

namespace cubesim::components {
namespace {

using testing::Bench;

// What the engine told a job, and when.
struct Seen {
  std::vector<std::string> events;
  Tick started = 0, ended = 0;
};

class RecordingJob final : public GemmEngine::Job {
 public:
  RecordingJob(std::string name, Seen& seen, emu::Scheduler& sched)
      : name_(std::move(name)), seen_(seen), sched_(sched) {}

 private:
  void on_start() override {
    seen_.events.push_back(name_ + " starts at " + std::to_string(sched_.now()));
  }
  void on_finish(Tick started, Tick ended) override {
    seen_.events.push_back(name_ + " ends at " + std::to_string(ended));
    seen_.started = started;
    seen_.ended = ended;
  }
  std::string name_;
  Seen& seen_;
  emu::Scheduler& sched_;
};

// A GEMM engine on PE 0 of a system.
struct EngineBench : Bench {
  explicit EngineBench(const SystemConfig& c = testing::small_config()) : Bench(c) {}
  GemmEngine engine{sched, network(), sys.gemm_timing(), 0};

  // An mnk x mnk x mnk product of `dtype` that tells `seen` what happens to it.
  std::unique_ptr<RecordingJob> job(const std::string& name, Seen& seen, std::uint64_t mnk,
                                    DType dtype = DType::f16) {
    auto j = std::make_unique<RecordingJob>(name, seen, sched);
    j->m = j->n = j->k = mnk;
    j->dtype = dtype;
    return j;
  }
};

TEST(GemmEngine, AJobWithNothingToStreamTakesStartUpPlusCompute) {
  EngineBench b;
  GemmEngine& e = b.engine;
  Seen seen;
  e.submit(b.job("a", seen, 128));
  b.sched.run();
  const Tick startup = b.cfg().pe.gemm.startup;
  const Tick compute = 131072;  // 2 * 128^3 FLOP at 32 TFLOP/s
  EXPECT_EQ(seen.started, 0u);
  EXPECT_EQ(seen.ended, startup + compute);
  EXPECT_EQ(e.busy(), startup + compute);
  EXPECT_EQ(e.flops(), 2u * 128 * 128 * 128);
  EXPECT_EQ(e.jobs(), 0u);
}

TEST(GemmEngine, TwoQueuedJobsRunOneAfterTheOtherInOrder) {
  EngineBench b;
  GemmEngine& e = b.engine;
  Seen seen_a, seen_b;
  e.submit(b.job("a", seen_a, 128));
  e.submit(b.job("b", seen_b, 64));
  EXPECT_EQ(e.jobs(), 2u);
  b.sched.run();
  const Tick startup = b.cfg().pe.gemm.startup;
  const Tick a_end = startup + 131072;         // 2 * 128^3 FLOP at 32 TFLOP/s
  const Tick b_end = a_end + startup + 16384;  // 2 * 64^3 FLOP, after a
  EXPECT_EQ(seen_a.events,
            (std::vector<std::string>{"a starts at 0", "a ends at " + std::to_string(a_end)}));
  EXPECT_EQ(seen_b.events, (std::vector<std::string>{"b starts at " + std::to_string(a_end),
                                                     "b ends at " + std::to_string(b_end)}));
  EXPECT_EQ(e.busy(), b_end);  // never idle in between
  EXPECT_EQ(e.flops(), 2u * 128 * 128 * 128 + 2u * 64 * 64 * 64);
}

TEST(GemmEngine, ComputeOverlapsStreamingAndTheLongerDecides) {
  const SystemConfig c = testing::small_config();
  constexpr std::uint64_t kBytes = 256;
  // PE 0 sits on the HBM controller's node: a read costs the access and the serialisation.
  const Tick read = c.cube.hbm.latency + c.cube.noc.link_bandwidth.transfer_time(kBytes);
  ASSERT_EQ(read, 104000u);
  for (const std::uint64_t mnk : {128u, 8u}) {  // 131072 ps of compute, then 32 ps
    EngineBench b(c);
    GemmEngine& e = b.engine;
    Seen seen;
    auto j = b.job("j", seen, mnk);
    j->operands[0] = StridedBytes::contiguous(b.addr(0, 0), kBytes);
    e.submit(std::move(j));
    b.sched.run();
    const Tick compute = b.sys.gemm_timing().compute_time(mnk, mnk, mnk, DType::f16);
    EXPECT_EQ(seen.ended, c.pe.gemm.startup + std::max(compute, read)) << mnk;
  }
}

TEST(GemmEngine, StreamsEachRowOfAStridedOperandAndTheResult) {
  const SystemConfig c = testing::small_config();
  EngineBench b(c);
  GemmEngine& e = b.engine;
  Seen seen;
  auto j = b.job("j", seen, 8);
  j->operands[1] = {b.addr(0, 0), 64, 4, 1024};  // 4 rows of 64 bytes, 1 KiB apart
  j->result = StridedBytes::contiguous(b.addr(0, 8192), 256);
  e.submit(std::move(j));
  b.sched.run();
  EXPECT_EQ(b.network().link_stats(b.sched.now()).bytes(LinkKind::hbm_channel), 4u * 64 + 256);
  // The rows lie in one channel's 4 KiB granule: it serves them one after another. The result
  // goes to another channel, and is written when its response is back through the PE's port.
  // PE 0 sits on the controller's node; channels and links: 64 GB/s.
  const Bandwidth bw = c.cube.noc.link_bandwidth;
  const Tick rows = c.cube.hbm.latency + 4 * bw.transfer_time(64);
  const Tick result =
      c.cube.hbm.latency + bw.transfer_time(256) + bw.transfer_time(c.cube.noc.response_bytes);
  EXPECT_EQ(seen.ended, c.pe.gemm.startup + std::max(rows, result));
}

TEST(GemmEngine, ResetStatsMeasuresFromHere) {
  EngineBench b;
  GemmEngine& e = b.engine;
  Seen seen;
  e.submit(b.job("a", seen, 64));
  b.sched.run();
  ASSERT_GT(e.busy(), 0u);
  e.reset_stats();
  EXPECT_EQ(e.busy(), 0u);
  EXPECT_EQ(e.flops(), 0u);
}

TEST(GemmEngine, AbandonForgetsQueuedJobsWithoutFinishingThem) {
  EngineBench b;
  GemmEngine& e = b.engine;
  Seen seen_a, seen_b;
  e.submit(b.job("a", seen_a, 64));
  e.submit(b.job("b", seen_b, 64));
  b.sched.run(emu::RunLimits{1, UINT64_MAX, false});  // stop before a's start-up ends
  e.abandon();  // (the events left are never run: the bench goes first)
  EXPECT_EQ(e.jobs(), 0u);
  EXPECT_EQ(seen_a.events, std::vector<std::string>{"a starts at 0"});
  EXPECT_TRUE(seen_b.events.empty());
}

}  // namespace
}  // namespace cubesim::components
