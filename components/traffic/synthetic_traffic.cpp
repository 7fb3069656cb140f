#include "components/traffic/synthetic_traffic.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "components/network/channel_load.hpp"

namespace cubesim::components {
namespace {

constexpr std::uint64_t kMaxPairs = std::uint64_t{1} << 20;

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

// Where each node of a scope sends: for the bound, every destination with its probability;
// for the generator, one draw.
class Pattern {
 public:
  Pattern(const Topology& t, const TrafficOptions& o)
      : o_(o),
        nodes_(traffic_nodes(t, o.scope)),
        pes_(t.pes_per_cube()),
        mesh_x_(t.config().cube.noc.mesh_x),
        mesh_y_(t.config().cube.noc.mesh_y) {
    if (nodes_.count < 2) throw std::invalid_argument("traffic needs a scope of two PEs or more");
    if (o.pattern == TrafficPattern::transpose &&
        (o.scope != TrafficScope::cube || mesh_x_ != mesh_y_))
      throw std::invalid_argument(
          "transpose sends node (x, y) to (y, x): it needs --scope cube and a square mesh");
    if (o.pattern == TrafficPattern::hotspot &&
        (o.hotspot >= nodes_.count || !(o.hotspot_fraction >= 0 && o.hotspot_fraction <= 1)))
      throw std::invalid_argument(
          "hotspot: the node must lie in the scope and the fraction in "
          "[0, 1]");
  }
  std::uint32_t nodes() const { return nodes_.count; }
  std::uint32_t global(std::uint32_t node) const { return nodes_.first + node; }

  // The destination of a pattern with one destination per source.
  std::uint32_t fixed(std::uint32_t src) const {
    switch (o_.pattern) {
      case TrafficPattern::transpose: {
        const std::uint32_t x = src % mesh_x_, y = src / mesh_x_;
        return x * mesh_x_ + y;
      }
      case TrafficPattern::bit_complement:
        return nodes_.count - 1 - src;
      case TrafficPattern::neighbor:
        if (o_.scope == TrafficScope::cube)
          return src / mesh_x_ * mesh_x_ + (src % mesh_x_ + 1) % mesh_x_;
        return (src + pes_) % nodes_.count;  // the same node of the next cube
      default:
        return src;
    }
  }

  template <class Each>  // each(destination, probability)
  void destinations(std::uint32_t src, Each each) const {
    const double n = nodes_.count;
    switch (o_.pattern) {
      case TrafficPattern::uniform:
        for (std::uint32_t d = 0; d < nodes_.count; ++d) each(d, 1.0 / n);
        return;
      case TrafficPattern::hotspot:
        for (std::uint32_t d = 0; d < nodes_.count; ++d)
          each(d, (1.0 - o_.hotspot_fraction) / n + (d == o_.hotspot ? o_.hotspot_fraction : 0));
        return;
      default:
        each(fixed(src), 1.0);
    }
  }

  std::uint32_t draw(std::uint32_t src, Lcg& rng) const {
    switch (o_.pattern) {
      case TrafficPattern::uniform:
        return static_cast<std::uint32_t>(rng.next() % nodes_.count);
      case TrafficPattern::hotspot:
        if (rng.uniform01() < o_.hotspot_fraction) return o_.hotspot;
        return static_cast<std::uint32_t>(rng.next() % nodes_.count);
      default:
        return fixed(src);
    }
  }

 private:
  const TrafficOptions& o_;
  TrafficNodes nodes_;
  std::uint32_t pes_, mesh_x_, mesh_y_;
};

struct Generator {
  emu::Scheduler& sched;
  Network& network;
  const TrafficOptions& opt;
  const Pattern& pattern;
  std::uint32_t packet_bytes = 0;
  Tick cycle = 0;  // one packet's serialisation on a NOC link
  Tick window_start = 0, window_end = 0;
  std::vector<Lcg> rng{};
  std::vector<Tick> latencies{};
  std::uint64_t generated = 0;                             // messages generated during the window
  std::uint64_t delivered_bytes = 0;                       // delivered during the window
  std::vector<std::uint64_t> sent_by{}, delivered_from{};  // per source, in the window

  bool in_window(Tick t) const { return t >= window_start && t < window_end; }

  void send(std::uint32_t src) {
    const Tick born = sched.now();
    if (in_window(born)) ++generated, ++sent_by[src];
    const std::uint32_t dst = pattern.draw(src, rng[src]);
    network.send(pattern.global(src), pattern.global(dst), packet_bytes, [this, src, born] {
      const Tick now = sched.now();
      if (in_window(born)) latencies.push_back(now - born);
      if (in_window(now)) delivered_bytes += packet_bytes, ++delivered_from[src];
      if (opt.offered_load == 0 && now < window_end) send(src);
    });
  }

  // Bernoulli injection: the cycles to the next message are geometric with mean 1 / load. At
  // a very low load the draw can lie far beyond the window (past any Tick): then the source
  // sends nothing more, which is kNever.
  static constexpr Tick kNever = emu::kTickMax;
  Tick gap(std::uint32_t src) {
    if (opt.offered_load >= 1) return cycle;
    const double cycles =
        std::max(1.0, std::ceil(std::log(rng[src].uniform01()) / std::log1p(-opt.offered_load)));
    const double left = static_cast<double>(window_end - std::min(window_end, sched.now()));
    if (!(cycles * static_cast<double>(cycle) < left)) return kNever;
    return static_cast<Tick>(cycles) * cycle;
  }

  // The next message of `src` after `delay` (from gap), if it falls in the window.
  void next_message(std::uint32_t src, Tick delay) {
    if (delay == kNever || sched.now() + delay >= window_end) return;
    sched.schedule_at(
        sched.now() + delay, [this, src] { open_loop(src); }, 0, "traffic source");
  }

  void open_loop(std::uint32_t src) {
    send(src);
    next_message(src, gap(src));
  }
};

}  // namespace

TrafficPattern parse_traffic_pattern(std::string_view name) {
  for (const TrafficPattern p :
       {TrafficPattern::uniform, TrafficPattern::transpose, TrafficPattern::bit_complement,
        TrafficPattern::hotspot, TrafficPattern::neighbor})
    if (name == to_string(p)) return p;
  throw std::invalid_argument("unknown pattern '" + std::string(name) +
                              "'; choose uniform, transpose, bit-complement, hotspot or neighbor");
}

TrafficScope parse_traffic_scope(std::string_view name) {
  for (const TrafficScope s : {TrafficScope::cube, TrafficScope::sip, TrafficScope::system})
    if (name == to_string(s)) return s;
  throw std::invalid_argument("unknown scope '" + std::string(name) +
                              "'; choose cube, sip or system");
}

const char* to_string(TrafficPattern p) {
  switch (p) {
    case TrafficPattern::uniform:
      return "uniform";
    case TrafficPattern::transpose:
      return "transpose";
    case TrafficPattern::bit_complement:
      return "bit-complement";
    case TrafficPattern::hotspot:
      return "hotspot";
    case TrafficPattern::neighbor:
      return "neighbor";
  }
  return "?";
}

const char* to_string(TrafficScope s) {
  switch (s) {
    case TrafficScope::cube:
      return "cube";
    case TrafficScope::sip:
      return "sip";
    case TrafficScope::system:
      return "system";
  }
  return "?";
}

TrafficNodes traffic_nodes(const Topology& t, TrafficScope scope) {
  switch (scope) {
    case TrafficScope::cube:
      return {0, t.pes_per_cube()};
    case TrafficScope::sip:
      return {0, t.pes_per_cube() * t.config().cubes_per_sip};
    case TrafficScope::system:
      return {0, t.total_pes()};
  }
  return {};
}

TrafficBound traffic_bound(const Topology& t, const TrafficOptions& o) {
  const Pattern pattern(t, o);
  const std::uint32_t n = pattern.nodes();
  // Sources sampled evenly when every pair would be too many; loads scale back by the stride.
  const std::uint64_t pairs =
      o.pattern == TrafficPattern::uniform || o.pattern == TrafficPattern::hotspot
          ? std::uint64_t{n} * n
          : n;
  const std::uint32_t stride = static_cast<std::uint32_t>((pairs + kMaxPairs - 1) / kMaxPairs);
  ChannelLoad load(t);  // per unit of every node's injection rate
  for (std::uint32_t src = 0; src < n; src += stride)
    pattern.destinations(src, [&](std::uint32_t dst, double p) {
      if (p > 0) load.add(t.pe_to_pe(pattern.global(src), pattern.global(dst)), p * stride);
    });
  const ChannelLoad::Bound full = load.bound();
  const double link_bw = static_cast<double>(t.config().cube.noc.link_bandwidth.bytes_per_s());
  return {full.rate / link_bw, full.link_name};
}

TrafficResult run_traffic(emu::Scheduler& scheduler, Network& network, const TrafficOptions& o) {
  const Topology& topo = network.topology();
  const Pattern pattern(topo, o);
  if (o.offered_load < 0 || o.offered_load > 1 || o.measure == 0)
    throw std::invalid_argument("traffic: an offered load in [0, 1] and a measurement window");
  const auto& cfg = topo.config();
  Generator g{scheduler, network, o, pattern};
  g.packet_bytes = o.packet_bytes != 0 ? o.packet_bytes : cfg.cube.noc.packet_bytes;
  g.cycle = std::max<Tick>(1, cfg.cube.noc.link_bandwidth.transfer_time(g.packet_bytes));
  g.window_start = scheduler.now() + o.warmup;
  g.window_end = g.window_start + o.measure;
  const std::uint32_t n = pattern.nodes();
  for (std::uint32_t i = 0; i < n; ++i) g.rng.emplace_back(o.seed * 1000003 + i);
  g.sent_by.assign(n, 0);
  g.delivered_from.assign(n, 0);
  if (o.offered_load > 0) {
    for (std::uint32_t i = 0; i < n; ++i) g.next_message(i, g.gap(i));
  } else {
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t w = 0; w < o.window; ++w) g.send(i);
  }
  // Open loop stops generating at window_end; everything in flight drains.
  emu::run_reporting(scheduler, {.report = &o.progress,
                                 .what = "traffic",
                                 .unit = "messages measured",
                                 .done = [&g] { return std::uint64_t{g.latencies.size()}; },
                                 .interval = o.progress_interval});
  TrafficResult r;
  r.messages = g.latencies.size();
  if (!g.latencies.empty()) {
    double sum = 0;
    for (const Tick l : g.latencies) sum += static_cast<double>(l);
    r.mean_latency_ps = sum / static_cast<double>(g.latencies.size());
    const std::size_t k = (g.latencies.size() * 99 + 99) / 100 - 1;  // nearest rank
    std::nth_element(g.latencies.begin(), g.latencies.begin() + static_cast<std::ptrdiff_t>(k),
                     g.latencies.end());
    r.p99_latency_ps = static_cast<double>(g.latencies[k]);
  }
  const double capacity = static_cast<double>(n) * static_cast<double>(o.measure) *
                          static_cast<double>(cfg.cube.noc.link_bandwidth.bytes_per_s()) / 1e12;
  r.offered_fraction = static_cast<double>(g.generated) * g.packet_bytes / capacity;
  std::uint64_t delivered = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    r.sent += g.sent_by[i];
    delivered += g.delivered_from[i];
    if (g.sent_by[i] >= TrafficResult::kJudgedSent) {
      ++r.judged_sources;
      r.worst_source = std::min(r.worst_source, static_cast<double>(g.delivered_from[i]) /
                                                    static_cast<double>(g.sent_by[i]));
    }
  }
  if (r.judged_sources == 0 && r.judged())
    r.worst_source = static_cast<double>(delivered) / static_cast<double>(r.sent);
  r.delivered_fraction = static_cast<double>(g.delivered_bytes) / capacity;
  return r;
}

}  // namespace cubesim::components
