// tl.load_async / tl.store_async / tl.wait: the same transfers and values as load and store,
// overlapped with what the program does meanwhile. Times come from the hardware model's
// formulas (docs/hardware-model.md), computed here from tiny.json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cubesim/cubesim.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "error_of.hpp"
#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using emu::Tick;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const Grid kOnePe{.pes = 1, .cubes = 1};

// PE 0 of cube 0 sits on the node of tiny.json's only HBM controller: a one-packet access to
// its own cube crosses no mesh link and takes HBM latency + the slower of channel and port.
struct Figures {
  explicit Figures(const components::SystemConfig& c) : cfg(c) {}
  const components::SystemConfig& cfg;
  std::uint64_t packet() const { return cfg.cube.noc.packet_bytes; }
  Tick one_packet() const {
    const auto channel = emu::Bandwidth::from_bytes_per_s(cfg.cube.hbm.bandwidth.bytes_per_s() /
                                                          cfg.cube.hbm.channels);
    return cfg.cube.hbm.latency + std::max(channel.transfer_time(packet()),
                                           cfg.cube.noc.link_bandwidth.transfer_time(packet()));
  }
  // One simple vector op over n elements.
  Tick vector(std::uint64_t n) const {
    const std::uint64_t lanes = cfg.pe.vector.lanes;
    return cfg.pe.clock.cycles_to_ticks(
        emu::Cycles{(n + lanes - 1) / lanes + cfg.pe.vector.latency_cycles});
  }
};

struct AsyncCopy : ::testing::Test {
  Spec spec = Spec::load(spec_path("tiny.json"));
  Figures f{spec.config()};
  std::int64_t packet_f32() const { return static_cast<std::int64_t>(f.packet() / 4); }
};

// The copy and the vector math overlap: the wait returns max(copy, math) after the issue.
TEST_F(AsyncCopy, ALoadOverlapsVectorMathIssuedAfterIt) {
  ASSERT_EQ(spec.config().cube.noc.hbm_nodes.front(), (components::MeshCoord{0, 0}));
  const Tick load = f.one_packet();
  // Math shorter and longer than the load (vector ops of n elements, each `f.vector(n)`).
  for (const std::int64_t n : {std::int64_t{8}, std::int64_t{1} << 14}) {
    Simulation sim(spec);
    const Ptr p = sim.alloc(f.packet(), Placement::on_cube(0, 0));
    Tick waited = 0, math = 0;
    sim.launch_on(kOnePe, [&](tl::Context& tl) {
      const auto a = tl.full({n}, 1.5, DType::f32);
      const Tick t0 = tl.now();
      auto h = tl.load_async(p, {packet_f32()}, DType::f32);
      const auto b = a + a;
      math = tl.now() - t0;
      (void)tl.wait(h);
      waited = tl.now() - t0;
    });
    ASSERT_EQ(math, f.vector(static_cast<std::uint64_t>(n)));
    ASSERT_EQ(math < load, n == 8);  // both cases are seen
    EXPECT_EQ(waited, std::max(load, math)) << n << " elements of math";
  }
}

// Issued and waited at once, an asynchronous copy is the blocking one: same values (exactly),
// same time, for a strided 2D load and a masked store.
TEST_F(AsyncCopy, WaitedAtOnceItIsTheBlockingCopy) {
  const std::int64_t rows = 24, cols = 40, stride = 56;
  const auto x = random_values<float>(static_cast<std::size_t>(rows * stride), 11);
  struct Run {
    std::vector<float> loaded, stored;
    Tick load_time = 0, store_time = 0;
  };
  auto run = [&](bool async) {
    Simulation sim(spec);
    const Ptr in = sim.alloc(x.size() * 4), out = sim.alloc(x.size() * 4);
    sim.write(in, x);
    sim.write(out, std::vector<float>(x.size(), -7.0f));
    Run r;
    sim.launch_on(kOnePe, [&](tl::Context& tl) {
      Tick t0 = tl.now();
      tl::Tile t;
      if (async) {
        auto h = tl.load_async(in, {rows, cols}, DType::f32, {.row_stride = stride});
        t = tl.wait(h);
      } else {
        t = tl.load(in, {rows, cols}, DType::f32, {.row_stride = stride});
      }
      r.load_time = tl.now() - t0;
      r.loaded = t.to_f32();
      const auto cols_idx = tl.arange(0, cols).row();
      const auto rows_idx = tl.arange(0, rows).column();
      const auto mask = (rows_idx + cols_idx) % 3 != 0;
      t0 = tl.now();
      if (async) {
        auto h = tl.store_async(out, t, {.row_stride = stride, .mask = &mask});
        tl.wait(h);
      } else {
        tl.store(out, t, {.row_stride = stride, .mask = &mask});
      }
      r.store_time = tl.now() - t0;
    });
    r.stored = sim.read<float>(out, x.size());
    return r;
  };
  const Run blocking = run(false), async = run(true);
  EXPECT_EQ(async.load_time, blocking.load_time);
  EXPECT_EQ(async.store_time, blocking.store_time);
  EXPECT_GT(blocking.load_time, f.one_packet());  // many packets, not one
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto k = static_cast<std::size_t>(i * cols + j);
      const auto m = static_cast<std::size_t>(i * stride + j);
      ASSERT_EQ(async.loaded[k], x[m]) << i << ", " << j;
      ASSERT_EQ(async.stored[m], (i + j) % 3 != 0 ? x[m] : -7.0f) << i << ", " << j;
      ASSERT_EQ(async.stored[m], blocking.stored[m]);
    }
}

// A store nobody waits on still lands: the program (and the launch) end once it has, and its
// response is back.
TEST_F(AsyncCopy, AProgramEndsWhenItsCopiesHaveLanded) {
  Simulation sim(spec);
  const Ptr p = sim.alloc(f.packet(), Placement::on_cube(0, 0));
  const auto x = random_values<float>(static_cast<std::size_t>(packet_f32()), 5);
  Tick issued = 0;
  const RunResult r = sim.launch_on(kOnePe, [&](tl::Context& tl) {
    const auto t = tl.full({packet_f32()}, 0.0, DType::f32) + tl.full({1}, 1.0, DType::f32);
    issued = tl.now();
    (void)tl.store_async(p, t);  // the handle goes at once
  });
  const Tick response = f.cfg.cube.noc.link_bandwidth.transfer_time(f.cfg.cube.noc.response_bytes);
  EXPECT_EQ(r.sim_time_ps, issued + f.one_packet() + response);
  EXPECT_EQ(r.stats.pes.front().finish_ps, issued + f.one_packet() + response);
  for (const float v : sim.read<float>(p, x.size())) ASSERT_EQ(v, 1.0f);
}

// Double buffering: the next block's load is in flight while this block is summed. The sum is
// exact against an fp64 reference (small integers), and the pipeline is faster.
TEST_F(AsyncCopy, ADoubleBufferedReductionMatchesTheBlockingOneAndIsFaster) {
  const std::int64_t block = 4096, blocks = 8;
  std::vector<float> x(static_cast<std::size_t>(block * blocks));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 13) - 6.0f;
  double expected = 0;
  for (const float v : x) expected += v;
  auto run = [&](bool pipelined, Tick& time) {
    Simulation sim(spec);
    const Ptr in = sim.alloc(x.size() * 4, Placement::on_cube(0, 0));
    sim.write(in, x);
    double sum = 0;
    sim.launch_on(kOnePe, [&](tl::Context& tl) {
      const Tick t0 = tl.now();
      auto total = tl.zeros({block}, DType::f32);
      auto at = [&](std::int64_t b) { return in + b * block * 4; };
      if (pipelined) {
        auto next = tl.load_async(at(0), {block}, DType::f32);
        for (std::int64_t b = 0; b < blocks; ++b) {
          const auto cur = tl.wait(next);
          if (b + 1 < blocks) next = tl.load_async(at(b + 1), {block}, DType::f32);
          total = total + tl::exp(cur * 0.0f) * cur;  // some math per element
        }
      } else {
        for (std::int64_t b = 0; b < blocks; ++b) {
          const auto cur = tl.load(at(b), {block}, DType::f32);
          total = total + tl::exp(cur * 0.0f) * cur;
        }
      }
      sum = tl::sum(total, 0).at(0);
      time = tl.now() - t0;
    });
    return sum;
  };
  Tick blocking_time = 0, pipelined_time = 0;
  EXPECT_EQ(run(false, blocking_time), expected);
  EXPECT_EQ(run(true, pipelined_time), expected);
  EXPECT_LT(pipelined_time, blocking_time);
}

// A prefetched ref is a tile: a composite on it computes what the ref would have.
TEST_F(AsyncCopy, APrefetchedRefIsACompositeOperand) {
  const std::int64_t m = 32, k = 48, n = 16;
  Simulation sim(spec);
  const Ptr a = sim.alloc(m * k * 4), b = sim.alloc(k * n * 4);
  const Ptr c1 = sim.alloc(m * n * 4), c2 = sim.alloc(m * n * 4);
  const auto av = random_values<float>(static_cast<std::size_t>(m * k), 1);
  const auto bv = random_values<float>(static_cast<std::size_t>(k * n), 2);
  sim.write(a, av);
  sim.write(b, bv);
  sim.launch_on(kOnePe, [&](tl::Context& tl) {
    const auto ra = tl.ref(a, {m, k}, DType::f32), rb = tl.ref(b, {k, n}, DType::f32);
    auto pa = tl.load_async(ra);
    const auto ta = tl.wait(pa);
    EXPECT_EQ(ta.shape(), (tl::Shape{m, k}));
    auto h1 = tl.composite(tl::Op::gemm, ta, rb, c1);
    auto h2 = tl.composite(tl::Op::gemm, ra, rb, c2);
    tl.wait(h1);
    tl.wait(h2);
  });
  const auto got = sim.read<float>(c1, static_cast<std::size_t>(m * n));
  const auto ref = sim.read<float>(c2, static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double e = 0;
      for (std::int64_t q = 0; q < k; ++q)
        e += static_cast<double>(av[static_cast<std::size_t>(i * k + q)]) *
             bv[static_cast<std::size_t>(q * n + j)];
      const auto at = static_cast<std::size_t>(i * n + j);
      ASSERT_EQ(got[at], ref[at]);
      ASSERT_NEAR(got[at], e, 1e-5 * k) << i << ", " << j;
    }
}

// Mistakes are kernel faults (exit 3) that say what to do, raised at the call that made them;
// the Simulation stays usable.
TEST_F(AsyncCopy, MisuseIsAKernelFault) {
  Simulation sim(spec);
  const Ptr p = sim.alloc(4096);
  auto fault = [&](const std::function<void(tl::Context&)>& body) {
    return error_of<KernelError>([&] { sim.launch_on(Grid{.pes = 2, .cubes = 1}, body); });
  };
  EXPECT_THAT(fault([](tl::Context& tl) {
                tl::LoadHandle h;
                (void)tl.wait(h);
              }),
              HasSubstr("the LoadHandle came from no load_async"));
  EXPECT_THAT(fault([](tl::Context& tl) {
                tl::StoreHandle h;
                tl.wait(h);
              }),
              HasSubstr("the StoreHandle came from no store_async"));
  tl::LoadHandle shared;
  EXPECT_THAT(fault([&](tl::Context& tl) {
                if (tl.program_id() == 0) shared = tl.load_async(p, {16}, DType::f32);
                tl.barrier();
                if (tl.program_id() == 1) (void)tl.wait(shared);
              }),
              HasSubstr("belongs to another program's load_async"));
  shared = {};
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.load_async(p + 2, {16}, DType::f32); }),
              HasSubstr("misaligned"));
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.load_async(p + 4000, {64}, DType::f32); }),
              HasSubstr("load_async"));
  const std::int64_t too_big = static_cast<std::int64_t>(sim.config().pe.sram_bytes / 4) + 1;
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.load_async(p, {too_big}, DType::f32); }),
              HasSubstr("SRAM overflow"));
  EXPECT_THAT(fault([&](tl::Context& tl) { (void)tl.store_async(p, tl::Tile{}); }),
              HasSubstr("store_async: the tile is empty"));
  // Still usable.
  const RunResult r = sim.launch_on(kOnePe, [&](tl::Context& tl) {
    auto h = tl.store_async(p, tl.full({16}, 2.0, DType::f32));
    tl.wait(h);
  });
  EXPECT_GT(r.sim_time_ps, 0u);
  for (const float v : sim.read<float>(p, 16)) EXPECT_EQ(v, 2.0f);
  // Handles kept past their launch (waited on there) are refused in the next one.
  tl::LoadHandle kept_load;
  tl::StoreHandle kept_store;
  sim.launch_on(kOnePe, [&](tl::Context& tl) {
    kept_load = tl.load_async(p, {16}, DType::f32);
    kept_store = tl.store_async(p + 64, tl.full({16}, 3.0, DType::f32));
    (void)tl.wait(kept_load);
    tl.wait(kept_store);
  });
  EXPECT_THAT(error_of<KernelError>([&] {
                sim.launch_on(kOnePe, [&](tl::Context& tl) { (void)tl.wait(kept_load); });
              }),
              HasSubstr("the LoadHandle comes from a load_async of an earlier launch"));
  EXPECT_THAT(error_of<KernelError>(
                  [&] { sim.launch_on(kOnePe, [&](tl::Context& tl) { tl.wait(kept_store); }); }),
              HasSubstr("the StoreHandle comes from a store_async of an earlier launch"));
}

// The sharding checks see a copy as in flight from its issue to its wait: a store waited on only
// after the barrier races with the neighbour's read after it; waited on before, it does not.
TEST_F(AsyncCopy, AStoreWaitedOnAfterTheBarrierRacesWithReadsAfterIt) {
  Simulation sim(spec, {.timing_only = true});
  const Ptr p = sim.alloc(256 * 4);
  for (const bool wait_first : {false, true}) {
    const RunResult r = sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
      tl::StoreHandle h;
      if (tl.program_id() == 0) h = tl.store_async(p, tl.full({256}, 1.0, DType::f32));
      if (wait_first && h.valid()) tl.wait(h);
      tl.barrier();
      if (tl.program_id() == 1) (void)tl.load(p, {256}, DType::f32);
      if (!wait_first && h.valid()) tl.wait(h);
    });
    const auto races = r.races();
    if (wait_first) {
      EXPECT_TRUE(races.empty()) << r.describe(races);
      continue;
    }
    ASSERT_EQ(races.size(), 1u) << r.describe(races);
    EXPECT_EQ(races.front().first, 0u);
    EXPECT_TRUE(races.front().in_flight);
    EXPECT_THAT(r.describe(races), HasSubstr("still in flight"));
  }
}

// The trace shows the overlap: the copy's slice on the PE's DMA lane spans the vector slice on
// its own track, and two copies in flight at once take two lanes.
TEST_F(AsyncCopy, TheTraceShowsCopiesOnDmaLanesBesideTheVectorUnit) {
  const fs::path file =
      fs::temp_directory_path() / ("async-copy-" + std::to_string(::getpid()) + ".json");
  {
    Simulation sim(spec, {.trace_path = file.string()});
    const Ptr p = sim.alloc(2 * f.packet(), Placement::on_cube(0, 0));
    sim.launch_on(kOnePe, [&](tl::Context& tl) {
      const auto a = tl.full({1 << 14}, 1.0, DType::f32);
      auto h1 = tl.load_async(p, {packet_f32()}, DType::f32);
      auto h2 = tl.load_async(p + f.packet(), {packet_f32()}, DType::f32);
      const auto b = a * 3.0;
      (void)tl.wait(h1);
      (void)tl.wait(h2);
    });
  }
  std::ifstream in(file);
  const auto trace = nlohmann::json::parse(in);
  fs::remove(file);
  std::map<std::pair<int, int>, std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  struct Slice {
    std::string track;
    double ts, dur;
  };
  std::vector<Slice> copies, vector;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string track = names[{e["pid"].get<int>(), e["tid"].get<int>()}];
    if (e["name"] == "load_async") copies.push_back({track, e["ts"], e["dur"]});
    if (e["name"] == "vector") vector.push_back({track, e["ts"], e["dur"]});
  }
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].track, "sip0.cube0.pe0.dma0");
  EXPECT_EQ(copies[1].track, "sip0.cube0.pe0.dma1");
  ASSERT_FALSE(vector.empty());
  const Slice& math = vector.back();
  EXPECT_EQ(math.track, "sip0.cube0.pe0");
  // The math (paid at the first wait) starts at the issue, with the copies.
  EXPECT_DOUBLE_EQ(copies[0].ts, math.ts);
  EXPECT_GT(copies[0].dur, 0);
  EXPECT_GT(math.dur, copies[1].ts + copies[1].dur - math.ts);
}

}  // namespace
}  // namespace cubesim
