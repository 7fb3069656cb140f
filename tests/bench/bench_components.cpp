// Hardware-model benchmarks (docs/performance.md):
//  - all-to-all among the 64 PEs of specs/default.json, 1 MiB per ordered pair, 4 KiB packets:
//    packet-hops per wall second (target >= 5 M);
//  - building specs/large.json (terabytes of HBM): RSS after construction (target < 200 MiB).
// (Latency against load: `cubesim traffic --sweep`.)
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "components/spec/spec.hpp"
#include "components/system/system.hpp"

namespace {

using namespace cubesim::components;

std::string spec_path(const char* name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}

double rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

void BM_AllToAllDefault(benchmark::State& state) {
  const Spec spec = Spec::load(spec_path("default.json"));
  const std::uint64_t bytes = std::uint64_t(state.range(0)) << 10;
  std::uint64_t hops = 0;
  double sim_us = 0;
  for (auto _ : state) {
    cubesim::emu::Scheduler sched;
    System sys(spec.config(), sched, {.timing_only = true});
    const std::uint32_t n = sys.total_pes();
    for (std::uint32_t s = 0; s < n; ++s)
      for (std::uint32_t d = 0; d < n; ++d)
        if (s != d) sys.network().send(s, d, bytes, [] {});
    sched.run();
    hops += sys.network().packet_hops();
    sim_us = double(sched.now()) / 1e6;
  }
  state.counters["packet_hops_per_s"] =
      benchmark::Counter(double(hops), benchmark::Counter::kIsRate);
  state.counters["simulated_us"] = sim_us;
}
BENCHMARK(BM_AllToAllDefault)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BuildLargeSystem(benchmark::State& state) {
  const Spec spec = Spec::load(spec_path("large.json"));
  double rss = 0;
  for (auto _ : state) {
    cubesim::emu::Scheduler sched;
    System sys(spec.config(), sched);
    rss = rss_mib();
    benchmark::DoNotOptimize(sys.total_pes());
  }
  state.counters["rss_MiB"] = rss;
  state.counters["hbm_TiB"] = double(spec.config().cube.hbm.capacity_bytes) *
                              double(spec.config().total_cubes()) / double(1ull << 40);
}
BENCHMARK(BM_BuildLargeSystem)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
