// Hardware-model benchmarks (docs/performance.md):
//  - all-to-all among the 64 PEs of specs/default.json, 1 MiB per ordered pair, 4 KiB packets:
//    packet-hops per wall second (target >= 5 M);
//  - building specs/large.json (terabytes of HBM): RSS after construction (target < 200 MiB);
//  - the latency-vs-load curve of uniform random traffic on 4x4 and 8x8 meshes.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "components/spec/spec.hpp"
#include "components/system/system.hpp"
#include "components/traffic/uniform_traffic.hpp"

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
        if (s != d) sys.fabric().send(s, d, bytes, [] {});
    sched.run();
    hops += sys.fabric().packet_hops();
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

// Args: mesh k, offered load in percent of the channel-load bound (uniform_saturation_bound).
void BM_UniformTrafficLatency(benchmark::State& state) {
  const auto k = static_cast<std::uint32_t>(state.range(0));
  const std::string ks = std::to_string(k);
  const std::vector<std::string> set = {"system.cube.noc.mesh=[" + ks + "," + ks + "]",
                                        "system.cube.pes=" + std::to_string(k * k),
                                        "system.cube.noc.packet_bytes=256",
                                        "system.cube.noc.hbm_nodes=[[0,0]]",
                                        "system.cube.noc.ucie_nodes=[[0,0]]",
                                        "system.ucie.connections=1",
                                        "system.cube.noc.link_bandwidth_GBps=128"};
  const Spec spec = Spec::load(spec_path("default.json")).with_assignments(set);
  const double bound = uniform_saturation_bound(k);
  UniformTrafficResult r;
  for (auto _ : state) {
    cubesim::emu::Scheduler sched;
    System sys(spec.config(), sched, {.timing_only = true});
    UniformTrafficOptions o;
    o.offered_load = double(state.range(1)) / 100.0 * bound;
    o.warmup = cubesim::emu::us(2);
    o.measure = cubesim::emu::us(20);
    r = run_uniform_traffic(sched, sys.fabric(), o);
  }
  state.counters["offered"] = r.offered_fraction;
  state.counters["accepted"] = r.accepted_fraction;
  state.counters["latency_ns"] = r.mean_latency_ps / 1000.0;
}
BENCHMARK(BM_UniformTrafficLatency)
    ->ArgsProduct({{4, 8}, {10, 20, 40, 60, 80, 90, 95, 110}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
