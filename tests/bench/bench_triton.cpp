// Programming-model overheads (docs/performance.md): wall time per TL call, end to end.
#include <benchmark/benchmark.h>

#include <cubesim/cubesim.hpp>
#include <string>

namespace {

std::string spec_path(const char* name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}

// One program loads a 16-element f32 tile N times: kernel call, SRAM accounting, the network
// transfer (one packet, a few events), the functional copy and the fiber switches.
void BM_TlLoadSmallTile(benchmark::State& state) {
  const cubesim::Spec spec = cubesim::Spec::load(spec_path("default.json"));
  const std::int64_t calls = state.range(0);
  for (auto _ : state) {
    cubesim::Simulation sim(spec, {.record_accesses = false});
    const cubesim::Ptr p = sim.alloc(1 << 16);
    sim.launch_on(cubesim::Grid{.pes = 1, .cubes = 1}, [&](cubesim::tl::Context& tl) {
      for (std::int64_t i = 0; i < calls; ++i)
        benchmark::DoNotOptimize(tl.load(p + (i % 64) * 64, {16}, cubesim::DType::f32));
    });
  }
  state.SetItemsProcessed(state.iterations() * calls);
}
BENCHMARK(BM_TlLoadSmallTile)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same with all 64 PEs of default.json loading at once (contention, more events).
void BM_TlLoadSmallTileAllPes(benchmark::State& state) {
  const cubesim::Spec spec = cubesim::Spec::load(spec_path("default.json"));
  const std::int64_t calls = state.range(0);
  for (auto _ : state) {
    cubesim::Simulation sim(spec, {.record_accesses = false});
    const cubesim::Ptr p = sim.alloc(1 << 20);
    sim.launch([&](cubesim::tl::Context& tl) {
      const auto pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
      for (std::int64_t i = 0; i < calls; ++i)
        benchmark::DoNotOptimize(
            tl.load(p + pid * 4096 + (i % 64) * 64, {16}, cubesim::DType::f32));
    });
  }
  state.SetItemsProcessed(state.iterations() * calls * 64);
}
BENCHMARK(BM_TlLoadSmallTileAllPes)->Arg(5000)->Unit(benchmark::kMillisecond)->UseRealTime();

// One program sends a 16-element f32 tile to its east neighbour N times and the neighbour
// receives them: per message, a send (credit, transfer, slot write) and a recv (slot read,
// credit back), with both programs' fiber switches. Items are TL calls, two per message, so
// the rate compares with BM_TlLoadSmallTile's.
void BM_TlSendRecvSmallTile(benchmark::State& state) {
  const cubesim::Spec spec = cubesim::Spec::load(spec_path("default.json"));
  const std::int64_t messages = state.range(0);
  for (auto _ : state) {
    cubesim::Simulation sim(spec, {.record_accesses = false});
    sim.launch_on(cubesim::Grid{.pes = 2, .cubes = 1}, [&](cubesim::tl::Context& tl) {
      if (tl.program_id(0) == 0) {
        const auto t = tl.full({16}, 1.0, cubesim::DType::f32);
        for (std::int64_t i = 0; i < messages; ++i) tl.send(cubesim::tl::east, t);
      } else {
        for (std::int64_t i = 0; i < messages; ++i)
          benchmark::DoNotOptimize(tl.recv(cubesim::tl::west, {16}, cubesim::DType::f32));
      }
    });
  }
  state.SetItemsProcessed(state.iterations() * messages * 2);
}
BENCHMARK(BM_TlSendRecvSmallTile)->Arg(50000)->Unit(benchmark::kMillisecond)->UseRealTime();

// A ring of every PE of the first N SIPs of large.json (512 PEs per SIP): each program sends a
// 512-byte tile to the next and receives one from the one before, 2 (n - 1) times, as a ring
// all-reduce's messages do, with nothing else (no staging, no schedule, no tile held per
// segment): the messaging layer's own cost at scale, the floor under `cubesim run
// specs/large.json allreduce --timing-only` (docs/performance.md; N = 4 is that run's 2048
// PEs). Items are messages.
void BM_TlSendRecvRing(benchmark::State& state) {
  const cubesim::Spec spec =
      cubesim::Spec::load(spec_path("large.json")).with("system.sips.count", state.range(0));
  std::int64_t n = 0;
  for (auto _ : state) {
    cubesim::Simulation sim(spec, {.timing_only = true, .record_accesses = false});
    const std::int64_t pes = sim.config().cube.pes, cubes = sim.config().cubes_per_sip,
                       sips = state.range(0);
    n = pes * cubes * sips;
    sim.launch_on(cubesim::Grid{.pes = pes, .cubes = cubes, .sips = sips},
                  [&](cubesim::tl::Context& tl) {
                    const std::int64_t g =
                        (tl.program_id(2) * cubes + tl.program_id(1)) * pes + tl.program_id(0);
                    const auto at = [&](std::int64_t x) {
                      x = (x + n) % n;
                      return cubesim::tl::program(x % pes, (x / pes) % cubes, x / (pes * cubes));
                    };
                    auto v = tl.full({128}, 1.0, cubesim::DType::f32);
                    for (std::int64_t k = 0; k < 2 * (n - 1); ++k) {
                      tl.send(at(g + 1), v);
                      v = tl.recv(at(g - 1), {128}, cubesim::DType::f32) + v;
                    }
                  });
  }
  state.SetItemsProcessed(state.iterations() * n * 2 * (n - 1));
}
BENCHMARK(BM_TlSendRecvRing)
    ->Arg(1)
    ->Arg(4)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Element-wise math on a small tile: the vector unit's cost is accumulated, not switched.
void BM_TlTileAdd(benchmark::State& state) {
  const cubesim::Spec spec = cubesim::Spec::load(spec_path("default.json"));
  const std::int64_t calls = state.range(0);
  for (auto _ : state) {
    cubesim::Simulation sim(spec, {.record_accesses = false});
    sim.launch_on(cubesim::Grid{.pes = 1, .cubes = 1}, [&](cubesim::tl::Context& tl) {
      auto a = tl.full({16}, 1.0, cubesim::DType::f32);
      for (std::int64_t i = 0; i < calls; ++i) a = a + 1.0;
      benchmark::DoNotOptimize(a);
    });
  }
  state.SetItemsProcessed(state.iterations() * calls);
}
BENCHMARK(BM_TlTileAdd)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
