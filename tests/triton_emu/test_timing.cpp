// Single-PE timing of load, store, vector math and composite GEMM equals the hardware model's
// formulas (docs/hardware-model.md), computed here from the spec.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "components/system/system.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;

struct TinyFigures {
  explicit TinyFigures(const components::SystemConfig& c) : cfg(c) {}
  const components::SystemConfig& cfg;
  Tick channel_ser(std::uint64_t bytes) const {
    return emu::Bandwidth::from_bytes_per_s(cfg.cube.hbm.bandwidth.bytes_per_s() /
                                            cfg.cube.hbm.channels)
        .transfer_time(bytes);
  }
  Tick link_ser(std::uint64_t bytes) const {
    return cfg.cube.noc.link_bandwidth.transfer_time(bytes);
  }
};

// PE 0 of cube 0 sits on the node of tiny.json's only HBM controller, so a one-packet access
// to its own cube crosses no mesh link: HBM latency + the slower of channel and port.
TEST(Timing, OnePacketLoadAndStoreOnTheControllerNode) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  ASSERT_EQ(c.cube.noc.hbm_nodes.front(), (components::MeshCoord{0, 0}));
  const TinyFigures f(c);
  const std::uint64_t bytes = c.cube.noc.packet_bytes;
  Simulation sim(spec);
  const Ptr p = sim.alloc(bytes * 4, Placement::on_cube(0, 0));
  Tick load_time = 0, store_time = 0;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const Tick t0 = tl.now();
    const auto t = tl.load(p, {static_cast<std::int64_t>(bytes / 4)}, DType::f32);
    const Tick t1 = tl.now();
    tl.store(p + bytes, t);
    load_time = t1 - t0;
    store_time = tl.now() - t1;
  });
  const Tick expected = c.cube.hbm.latency + std::max(f.channel_ser(bytes), f.link_ser(bytes));
  EXPECT_EQ(load_time, expected);
  // A store completes when its response (16 bytes) is back through the PE's port.
  EXPECT_EQ(store_time, expected + f.link_ser(c.cube.noc.response_bytes));
}

TEST(Timing, VectorMathCostsElementsOverLanesPlusLatencyCycles) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  Simulation sim(spec, {.timing_only = true});
  Tick t_add = 0;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto a = tl.full({1000}, 1.0, DType::f32);
    const Tick t0 = tl.now();
    const auto b = a + a;
    t_add = tl.now() - t0;
  });
  const std::uint64_t cycles =
      (1000 + c.pe.vector.lanes - 1) / c.pe.vector.lanes + c.pe.vector.latency_cycles;
  EXPECT_EQ(t_add, c.pe.clock.cycles_to_ticks(emu::Cycles{cycles}));
}

// The waits a PE reports add up by kind: a load's and a store's time as each program saw it,
// their sum as memory_wait_ps, and at a barrier, from arriving to the release.
TEST(Timing, WaitsAreCountedByKind) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  Simulation sim(spec, {.timing_only = true});
  const Ptr p = sim.alloc(1 << 16);
  Tick load = 0, store = 0, arrive1 = 0, leave1 = 0;
  const RunResult r = sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    if (tl.program_id(0) == 0) {
      const Tick t0 = tl.now();
      const auto t = tl.load(p, {4096}, DType::f32);
      const Tick t1 = tl.now();
      tl.store(p + (1 << 15), t);
      load = t1 - t0;
      store = tl.now() - t1;
      tl.barrier();
    } else {
      arrive1 = tl.now();
      tl.barrier();
      leave1 = tl.now();
    }
  });
  const auto& pe0 = r.stats.pes[0];
  const auto& pe1 = r.stats.pes[1];
  EXPECT_EQ(pe0.load_wait_ps, load);
  EXPECT_EQ(pe0.store_wait_ps, store);
  EXPECT_EQ(pe0.memory_wait_ps, load + store);
  EXPECT_EQ(pe1.load_wait_ps + pe1.store_wait_ps + pe1.atomic_wait_ps, 0u);
  EXPECT_EQ(pe1.barrier_wait_ps, leave1 - arrive1);
  EXPECT_GE(pe1.barrier_wait_ps, load + store);
  EXPECT_LT(pe0.barrier_wait_ps, pe1.barrier_wait_ps);
}

// tl.trans reads its tile through the SRAM's banks (tiny.json: 16 lanes, so 16 banks of 8 B):
// a 64 x 64 f32 tile's rows are 32 words, so each group of 16 outputs (16 rows of one column)
// asks one bank for 16 words: 16 cycles, 256 groups. Skewed banks spread the rows over 8 banks,
// 2 words each. A copy of the same shape (broadcast_to) reads whole words in order.
TEST(Timing, ATransposeCostsItsBankConflicts) {
  const Spec tiny = Spec::load(spec_path("tiny.json"));
  const auto time = [](const Spec& spec, bool transpose) {
    Simulation sim(spec, {.timing_only = true});
    Tick t = 0;
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto a = tl.full({64, 64}, 1.0, DType::f32);
      const Tick t0 = tl.now();
      const auto b = transpose ? tl::trans(a) : tl::broadcast_to(a, {64, 64});
      t = tl.now() - t0;
    });
    return t;
  };
  const auto& c = tiny.config();
  ASSERT_EQ(c.pe.vector.lanes, 16u);
  const auto at = [&c](std::uint64_t cycles) {
    return c.pe.clock.cycles_to_ticks(emu::Cycles{cycles + c.pe.vector.latency_cycles});
  };
  EXPECT_EQ(time(tiny, false), at(4096 / 16));
  EXPECT_EQ(time(tiny, true), at(256 * 16));
  EXPECT_EQ(time(tiny.with("system.pe.vector.sram_bank_mapping", "skewed"), true), at(256 * 2));
}

// Compute-bound: the operands are small, so streaming ends long before the engine does.
TEST(Timing, ComputeBoundGemmTakesStartupPlusFlopsOverPeak) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  Simulation sim(spec);
  const std::int64_t m = 128, k = 128, n = 64;
  const Ptr a = sim.alloc(m * k * 2), b = sim.alloc(k * n * 2), out = sim.alloc(m * n * 2);
  Tick gemm_time = 0;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto ta = tl.load(a, {m, k}, DType::f16);
    const Tick t0 = tl.now();
    auto h = tl.composite(Op::gemm, ta, tl.ref(b, {k, n}, DType::f16), out);
    tl.wait(h);
    gemm_time = tl.now() - t0;
  });
  const components::GemmTimingModel model(c.pe.gemm);
  const Tick compute = model.compute_time(m, n, k, DType::f16);
  EXPECT_EQ(compute, static_cast<Tick>(2.0 * m * n * k / (c.pe.gemm.peak(DType::f16) / 1e12)));
  EXPECT_EQ(gemm_time, c.pe.gemm.startup + compute);
}

// Streaming-bound: a long ref streams for longer than the engine computes; the GEMM then takes
// start-up + the time the same read takes on the idle network.
TEST(Timing, StreamingBoundGemmTakesStartupPlusTheStreamingTime) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const std::int64_t m = 1, k = 4096, n = 64;
  Tick gemm_time = 0, read_time = 0;
  {
    Simulation sim(spec);
    const Ptr a = sim.alloc(m * k * 2, Placement::on_cube(0, 0));
    const Ptr b = sim.alloc(k * n * 2, Placement::on_cube(0, 0));
    const Ptr out = sim.alloc(m * n * 2, Placement::on_cube(0, 1));  // away from b's channels
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const auto ta = tl.load(a, {m, k}, DType::f16);
      const Tick t0 = tl.now();
      auto h = tl.composite(Op::gemm, ta, tl.ref(b, {k, n}, DType::f16), out);
      tl.wait(h);
      gemm_time = tl.now() - t0;
    });
  }
  {
    Simulation sim(spec);
    (void)sim.alloc(m * k * 2, Placement::on_cube(0, 0));
    const Ptr b = sim.alloc(k * n * 2, Placement::on_cube(0, 0));
    auto& sys = sim.system();
    const Tick t0 = sys.scheduler().now();
    sys.network().read(0, b.addr, k * n * 2, [&] { read_time = sys.scheduler().now() - t0; });
    sys.scheduler().run();
  }
  const components::GemmTimingModel model(spec.config().pe.gemm);
  ASSERT_GT(read_time, model.compute_time(m, n, k, DType::f16));
  // The output's write lands as the stream ends; its response comes back through the PE's port.
  const auto& noc = spec.config().cube.noc;
  EXPECT_EQ(gemm_time, spec.config().pe.gemm.startup + read_time +
                           noc.link_bandwidth.transfer_time(noc.response_bytes));
}

TEST(Timing, GemmsOnOneEngineRunOneAfterAnother) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  Simulation sim(spec, {.timing_only = true});
  const std::int64_t m = 128, k = 128, n = 64;
  const Ptr a = sim.alloc(m * k * 2), b = sim.alloc(k * n * 2), out = sim.alloc(4 * m * n * 2);
  Tick total = 0;
  sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    const auto ta = tl.load(a, {m, k}, DType::f16);
    const Tick t0 = tl.now();
    std::vector<tl::Handle> hs;
    for (int i = 0; i < 3; ++i)
      hs.push_back(tl.composite(Op::gemm, ta, tl.ref(b, {k, n}, DType::f16), out + i * m * n * 2));
    for (auto& h : hs) tl.wait(h);
    total = tl.now() - t0;
  });
  const components::GemmTimingModel model(c.pe.gemm);
  EXPECT_EQ(total, 3 * (c.pe.gemm.startup + model.compute_time(m, n, k, DType::f16)));
}

// system.pe.issue_ns: every TL call that acts pays it once on the PE's control core before it
// acts, in turn with everything else the program does: five calls (a tile filled, a store, a
// load, an add, a barrier; the blocking load and store each one call) take five issues longer
// than the same program with free calls, and the PE reports the issue time.
TEST(Timing, EveryTlCallPaysTheIssueCostOnce) {
  constexpr int kIssueNs = 7;
  const auto run = [](double issue_ns, Tick* busy) {
    const Spec spec = Spec::load(spec_path("tiny.json")).with("system.pe.issue_ns", issue_ns);
    Simulation sim(spec);
    const Ptr p = sim.alloc(1024, Placement::on_cube(0, 0));
    Tick took = 0;
    const RunResult r = sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      const Tick t0 = tl.now();
      const auto x = tl.full({64}, 2.0, DType::f32);
      tl.store(p, x);
      const auto y = tl.load(p, {64}, DType::f32);
      const auto z = x + y;
      tl.barrier();
      took = tl.now() - t0;
      (void)z;
    });
    *busy = r.stats.pes.front().issue_busy_ps;
    return took;
  };
  Tick free_busy = 0, busy = 0;
  const Tick free_calls = run(0.0, &free_busy);
  const Tick paid = run(double{kIssueNs}, &busy);
  EXPECT_EQ(paid - free_calls, 5 * emu::ns(kIssueNs));
  EXPECT_EQ(busy, 5 * emu::ns(kIssueNs));
  EXPECT_EQ(free_busy, 0u);
}

TEST(Timing, IdenticalRunsGiveIdenticalReportsApartFromWallClock) {
  auto run = [] {
    Simulation sim(Spec::load(spec_path("tiny.json")), {.seed = 3});
    const Ptr p = sim.alloc(1 << 20);
    auto r = sim.launch([&](tl::Context& tl) {
      const auto pid = tl.program_id(1) * 4 + tl.program_id(0);
      const auto t = tl.load(p + pid * 8192, {2048}, DType::f32);
      tl.store(p + 65536 + ((pid * 3) % 8) * 8192, tl::exp(t));
    });
    r.report.erase("wall_seconds");
    r.report.erase("events_per_second");
    return r.report;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace cubesim
