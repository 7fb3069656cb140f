#include "kernels/harness/sum_runs.hpp"

#include <utility>

namespace cubesim::kernels {

RunResult sum_runs(std::vector<RunResult> runs) {
  if (runs.empty()) return {};
  if (runs.size() == 1) return std::move(runs.front());
  RunResult total = runs.back();
  RunStats& sum = total.stats;
  sum.sim_time_ps = sum.flops = sum.events = 0;
  sum.wall_seconds = 0;
  sum.network.bytes_by_kind = {};
  sum.messages = {};
  sum.launches.clear();
  components::CacheStats cache;
  components::DramStats dram;
  components::EnergyReport energy;
  for (const auto& r : runs) {
    sum.sim_time_ps += r.stats.sim_time_ps;
    sum.flops += r.stats.flops;
    sum.events += r.stats.events;
    sum.wall_seconds += r.stats.wall_seconds;
    sum.messages += r.stats.messages;
    for (std::size_t k = 0; k < components::kLinkKinds; ++k)
      sum.network.bytes_by_kind[k] += r.stats.network.bytes_by_kind[k];
    if (r.stats.network.cache) cache += *r.stats.network.cache;
    if (r.stats.network.dram) dram += *r.stats.network.dram;
    if (r.stats.energy) energy += *r.stats.energy;
    sum.launches.push_back(r.stats);
  }
  if (sum.network.cache) sum.network.cache = cache;
  if (sum.network.dram) sum.network.dram = dram;
  if (sum.energy) sum.energy = energy;
  total.sim_time_ps = sum.sim_time_ps;
  total.report = run_report(sum);
  return total;
}

}  // namespace cubesim::kernels
