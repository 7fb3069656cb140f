#include "components/traffic/uniform_traffic.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace cubesim::components {
namespace {

class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return s_ >> 11;
  }
  double uniform01() { return (static_cast<double>(next()) + 0.5) / 9007199254740992.0; }  // (0,1)

 private:
  std::uint64_t s_;
};

struct Generator {
  emu::Scheduler& sched;
  Fabric& fabric;
  const UniformTrafficOptions& opt;
  std::uint32_t pes;
  std::uint32_t first_pe;
  std::uint32_t packet_bytes;
  double mean_gap_ps = 0;
  Tick window_end = 0;
  std::vector<Lcg> rng{};
  double latency_sum = 0;
  std::uint64_t measured = 0;
  std::uint64_t generated = 0;        // messages generated during the window
  std::uint64_t delivered_bytes = 0;  // delivered during the window

  std::uint32_t destination(std::uint32_t src) {
    auto d = static_cast<std::uint32_t>(rng[src].next() % (pes - 1));
    return d >= src ? d + 1 : d;
  }

  void send(std::uint32_t src) {
    const Tick born = sched.now();
    if (born >= opt.warmup && born < window_end) ++generated;
    const std::uint32_t dst = destination(src);
    fabric.send(first_pe + src, first_pe + dst, packet_bytes, [this, src, born] {
      const Tick now = sched.now();
      if (born >= opt.warmup && born < window_end) {
        latency_sum += static_cast<double>(now - born);
        ++measured;
      }
      if (now >= opt.warmup && now < window_end) delivered_bytes += packet_bytes;
      if (opt.offered_load == 0 && now < window_end) send(src);
    });
  }

  void open_loop(std::uint32_t src) {
    send(src);
    const double gap = -std::log(rng[src].uniform01()) * mean_gap_ps;
    const Tick next = sched.now() + static_cast<Tick>(std::llround(gap));
    if (next < window_end)
      sched.schedule_at(
          next, [this, src] { open_loop(src); }, 0, "traffic source");
  }
};

}  // namespace

UniformTrafficResult run_uniform_traffic(emu::Scheduler& scheduler, Fabric& fabric,
                                         const UniformTrafficOptions& options) {
  const Topology& topo = fabric.topology();
  if (options.cube >= topo.cubes()) throw std::invalid_argument("traffic: no such cube");
  if (topo.pes_per_cube() < 2) throw std::invalid_argument("traffic: needs two PEs or more");
  if (options.offered_load < 0 || options.measure == 0)
    throw std::invalid_argument("traffic: offered_load >= 0 and a measurement window > 0");
  const auto& cfg = topo.config();
  Generator g{scheduler,
              fabric,
              options,
              topo.pes_per_cube(),
              options.cube * topo.pes_per_cube(),
              cfg.cube.noc.packet_bytes,
              0.0,
              0,
              {},
              0.0,
              0,
              0,
              0};
  g.window_end = options.warmup + options.measure;
  const double link_bytes_per_ps =
      static_cast<double>(cfg.cube.noc.link_bandwidth.bytes_per_s()) / 1e12;
  for (std::uint32_t i = 0; i < g.pes; ++i) g.rng.emplace_back(options.seed * 1000003 + i);
  if (options.offered_load > 0) {
    g.mean_gap_ps =
        static_cast<double>(g.packet_bytes) / (options.offered_load * link_bytes_per_ps);
    for (std::uint32_t i = 0; i < g.pes; ++i) {
      const double first = -std::log(g.rng[i].uniform01()) * g.mean_gap_ps;
      scheduler.schedule_at(
          scheduler.now() + static_cast<Tick>(std::llround(first)), [&g, i] { g.open_loop(i); }, 0,
          "traffic source");
    }
  } else {
    for (std::uint32_t i = 0; i < g.pes; ++i)
      for (std::uint32_t w = 0; w < options.window; ++w) g.send(i);
  }
  scheduler.run();  // open loop stops generating at window_end; everything in flight drains
  UniformTrafficResult r;
  r.messages = g.measured;
  r.mean_latency_ps = g.measured ? g.latency_sum / static_cast<double>(g.measured) : 0.0;
  const double capacity =
      static_cast<double>(g.pes) * static_cast<double>(options.measure) * link_bytes_per_ps;
  r.offered_fraction = static_cast<double>(g.generated) * g.packet_bytes / capacity;
  r.accepted_fraction = static_cast<double>(g.delivered_bytes) / capacity;
  return r;
}

double uniform_saturation_bound(std::uint32_t k) {
  if (k < 2) throw std::invalid_argument("uniform_saturation_bound: a mesh of 2 x 2 or more");
  const double n = double(k) * k;
  const double left = double(k / 2), right = double(k - k / 2);  // nodes each side of the middle
  const double max_load = left * right * k / (n - 1);  // of a node's rate, on a middle link
  return std::min(1.0, 1.0 / max_load);
}

}  // namespace cubesim::components
