#include "tools/cubesim/probe.hpp"

#include <algorithm>

#include "components/network/path_bound.hpp"
#include "components/system/system.hpp"
#include "tools/cubesim/format.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::cli {

namespace {

using components::Location;
using components::PathBound;
using components::Route;
using emu::Tick;

constexpr std::uint64_t kLatencyBytes = 64;
constexpr std::uint64_t kReferenceBytes = 32 << 10;
constexpr std::uint64_t kSweep[] = {4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20};

double gbps(std::uint64_t bytes, Tick t) {
  return t == 0 ? 0.0 : static_cast<double>(bytes) / (static_cast<double>(t) * 1e-12) / 1e9;
}

// Where a case's bytes go, and how it is measured: a load by PE 0 of a buffer placed so, a
// stream of messages from PE 0 to another program, or a host transfer.
struct Plan {
  enum class Kind { read, message, host_in, host_out } kind = Kind::read;
  ProbeCase shown;
  Placement where;         // read, host: the buffer's placement
  std::uint32_t peer = 0;  // message: the receiving PE (global)
  Grid grid{.pes = 1, .cubes = 1, .sips = 1};
};

class Prober {
 public:
  Prober(const components::Spec& spec, components::NetworkModel network)
      : spec_(spec), config_(spec.config()) {
    options_.timing_only = true;
    options_.network = network;
  }

  std::vector<Plan> plans() const;
  ProbeCase run(const Plan& plan) const;

 private:
  ProbePoint measure(const Plan& plan, std::uint64_t bytes) const;
  ProbePoint read(const Plan& plan, std::uint64_t bytes) const;
  ProbePoint message(const Plan& plan, std::uint64_t bytes) const;
  ProbePoint host(const Plan& plan, std::uint64_t bytes) const;
  std::uint64_t largest(const Plan& plan, std::string* limit) const;

  const components::Spec& spec_;
  const components::SystemConfig& config_;
  SimOptions options_;
};

// The way of a read's data from channel `channel` of `cube` to `pe` for the bound: with a cube
// cache in front of HBM, a hit's (the fastest a read can be; a cold read misses).
bool reads_hit(const components::Topology& t) {
  return t.has_cache() && t.config().cube.cache.hit_latency <= t.hbm().access_latency();
}
Route read_route(const components::Topology& t, std::uint32_t cube, std::uint32_t channel,
                 std::uint32_t pe) {
  return reads_hit(t) ? t.cache_to_pe(cube, channel, pe) : t.memory_to_pe(cube, channel, pe);
}

std::string pe_text(std::uint32_t sip, std::uint32_t cube, std::uint32_t pe) {
  return "sip" + std::to_string(sip) + ".cube" + std::to_string(cube) + ".pe" + std::to_string(pe);
}

std::vector<Plan> Prober::plans() const {
  const std::uint32_t pes = config_.cube.pes, mx = config_.cube.noc.mesh_x;
  const auto hops = [mx](std::uint32_t a, std::uint32_t b) {
    const auto d = [](std::uint32_t p, std::uint32_t q) { return p > q ? p - q : q - p; };
    return d(a % mx, b % mx) + d(a / mx, b / mx);
  };
  // The controller farthest from PE 0's router, and the PE on its node.
  std::uint32_t far_node = 0;
  for (const auto& n : config_.cube.noc.hbm_nodes) {
    const std::uint32_t node = n.y * mx + n.x;
    if (hops(0, node) > hops(0, far_node)) far_node = node;
  }
  const std::uint32_t last = pes - 1;
  const std::string src = pe_text(0, 0, 0);
  std::vector<Plan> out;
  const auto add = [&out](Plan::Kind kind, const char* name, std::string what, const char* formula,
                          Placement where, std::uint32_t peer, Grid grid) {
    Plan p;
    p.kind = kind;
    p.shown.name = name;
    p.shown.description = std::move(what);
    p.shown.formula = formula;
    p.where = where;
    p.peer = peer;
    p.grid = grid;
    out.push_back(std::move(p));
  };
  const char* read_formula =
      "max(request's way + HBM access + data's way, over links and channels: first byte there "
      "+ bytes / rate)";
  const char* message_formula =
      "max(way + slot write and read-out latency, over links and the slot's read-out: first "
      "byte there + bytes / rate)";
  const Grid one{.pes = 1, .cubes = 1, .sips = 1};
  add(Plan::Kind::read, "hbm.own_slice", src + " loads from its own HBM slice", read_formula,
      Placement::on_pe(0, 0, 0), 0, one);
  if (far_node != 0)
    add(Plan::Kind::read, "hbm.cube",
        src + " loads from the slice farthest from it in its cube (" + pe_text(0, 0, far_node) +
            "'s)",
        read_formula, Placement::on_pe(0, 0, far_node), 0, one);
  if (config_.cubes_per_sip > 1)
    add(Plan::Kind::read, "hbm.ucie", src + " loads from cube 1's HBM, over UCIe", read_formula,
        Placement::on_cube(0, 1), 0, one);
  if (config_.sips > 1)
    add(Plan::Kind::read, "hbm.inter_sip", src + " loads from SIP 1's HBM (cube 0), between SIPs",
        read_formula, Placement::on_cube(1, 0), 0, one);
  if (pes > 1)
    add(Plan::Kind::message, "pe.mesh",
        src + " sends to " + pe_text(0, 0, last) + " (farthest in its mesh)", message_formula, {},
        last, Grid{});
  if (config_.cubes_per_sip > 1)
    add(Plan::Kind::message, "pe.ucie", src + " sends to " + pe_text(0, 1, 0) + ", over UCIe",
        message_formula, {}, pes, Grid{});
  if (config_.sips > 1)
    add(Plan::Kind::message, "pe.inter_sip",
        src + " sends to " + pe_text(1, 0, 0) + ", between SIPs", message_formula, {},
        pes * config_.cubes_per_sip, Grid{});
  const char* host_formula =
      "setup + host link + IO die + way to the channels + max over host link, ports, links and "
      "channels (bytes / rate)";
  add(Plan::Kind::host_in, "host.to_device", "the host writes a buffer on sip0.cube0's HBM",
      host_formula, Placement::on_cube(0, 0), 0, one);
  add(Plan::Kind::host_out, "host.to_host", "the host reads a buffer on sip0.cube0's HBM back",
      host_formula, Placement::on_cube(0, 0), 0, one);
  return out;
}

std::uint64_t Prober::largest(const Plan& plan, std::string* limit) const {
  if (plan.kind == Plan::Kind::read) {
    *limit = "a load's tile must fit the PE's SRAM (system.pe.sram_KiB)";
    return config_.pe.sram_bytes;
  }
  *limit = "";
  return std::uint64_t{1} << 20;
}

ProbePoint Prober::measure(const Plan& plan, std::uint64_t bytes) const {
  switch (plan.kind) {
    case Plan::Kind::read:
      return read(plan, bytes);
    case Plan::Kind::message:
      return message(plan, bytes);
    default:
      return host(plan, bytes);
  }
}

void finish(ProbePoint& p, const PathBound& bound) {
  p.latency = bound.latency();
  p.serialisation = bound.serialisation();
  p.bound = bound.bound();
  p.bottleneck = bound.bottleneck();
}

ProbePoint Prober::read(const Plan& plan, std::uint64_t bytes) const {
  Simulation sim(spec_, options_);
  const Ptr p = sim.alloc(bytes, plan.where);
  ProbePoint out;
  out.bytes = bytes;
  sim.launch_on(plan.grid, [&](tl::Context& tl) {
    const Tick t0 = tl.now();
    (void)tl.load(p, {static_cast<std::int64_t>(bytes / 4)}, DType::f32);
    out.simulated = tl.now() - t0;
  });
  const components::Topology& t = sim.system().topology();
  const components::HbmModel& hbm = t.hbm();
  PathBound bound(t);
  sim.system().address_map().for_each_piece(
      p.addr, bytes, sim.system().address_map().channel_interleave_bytes(),
      [&](std::uint64_t, Location loc, std::uint64_t len) {
        const std::uint32_t channel = sim.system().address_map().channel(loc);
        const bool hit = reads_hit(t);
        const Route r = read_route(t, loc.global_cube, channel, 0);
        const Tick start = r.pre_delay + (hit ? 0 : hbm.stream_latency());
        Tick way = start;
        for (const Tick l : r.latency) way += l;
        bound.add_route(r, len, way, start);
        // From HBM the channel serves at the rate a stream sustains (banked: below its bus's).
        if (!hit)
          bound.add_link(t.hbm_channel(loc.global_cube, channel), 0, hbm.stream_bandwidth());
      });
  finish(out, bound);
  return out;
}

ProbePoint Prober::message(const Plan& plan, std::uint64_t bytes) const {
  Simulation sim(spec_, options_);
  const std::uint32_t dst = plan.peer, pes = config_.cube.pes, cubes = config_.cubes_per_sip;
  const components::MessageWindow& w = config_.message_window(0, dst);
  const std::uint64_t slot = w.slot_bytes / 4 * 4;
  const std::uint64_t count = (bytes + slot - 1) / slot;
  const auto size_of = [&](std::uint64_t i) {
    return static_cast<std::int64_t>(std::min(slot, bytes - i * slot) / 4);
  };
  Tick t0 = 0, t1 = 0;
  sim.launch_on(plan.grid, [&](tl::Context& tl) {
    const std::uint32_t me = static_cast<std::uint32_t>(
        (tl.program_id(2) * cubes + tl.program_id(1)) * pes + tl.program_id(0));
    if (me == 0) {
      const tl::Tile full = tl.full({size_of(0)}, 1.0, DType::f32);
      const tl::Tile rest = tl.full({size_of(count - 1)}, 1.0, DType::f32);
      t0 = tl.now();
      for (std::uint64_t i = 0; i < count; ++i)
        tl.send(tl::program(dst % pes, dst / pes % cubes, dst / pes / cubes),
                i + 1 == count ? rest : full);
    } else if (me == dst) {
      for (std::uint64_t i = 0; i < count; ++i)
        (void)tl.recv(tl::program(0, 0, 0), {size_of(i)}, DType::f32);
      t1 = tl.now();
    }
  });
  ProbePoint out;
  out.bytes = bytes;
  out.simulated = t1 - t0;
  const components::Topology& t = sim.system().topology();
  const components::MessagesConfig& m = config_.messages;
  PathBound bound(t);
  if (m.memory == components::SlotMemory::hbm) {
    // Each message is written into its slot's HBM channels and read out of them.
    const auto base = sim.message_slots(0, dst);
    const std::uint64_t stride =
        components::hbm_slot_stride(config_.cube.hbm, w.slot_bytes, w.slots);
    const auto& map = sim.system().address_map();
    for (std::uint64_t i = 0; base && i < count; ++i) {
      const std::uint64_t len = std::min(slot, bytes - i * slot);
      map.for_each_piece(*base + i % w.slots * stride, len, map.channel_interleave_bytes(),
                         [&](std::uint64_t, Location loc, std::uint64_t n) {
                           const std::uint32_t ch = map.channel(loc);
                           const Route in = t.pe_to_memory(0, loc.global_cube, ch);
                           const Route back = read_route(t, loc.global_cube, ch, dst);
                           Tick there = 0, way = back.pre_delay;
                           for (const Tick l : in.latency) there += l;
                           for (const Tick l : back.latency) way += l;
                           bound.add_route(in, n, there);
                           bound.add_route(back, n, there + way, there + back.pre_delay);
                         });
    }
  } else {
    const bool pe_sram = m.memory == components::SlotMemory::pe_sram;
    const Tick slot_latency = pe_sram ? m.pe_sram_latency : m.cube_sram_latency;
    const Route r = t.pe_to_pe(0, dst);
    Tick there = 0;
    for (const Tick l : r.latency) there += l;
    bound.add_route(r, bytes, there + 2 * slot_latency);
    bound.add_resource("slot read-out", pe_sram ? m.pe_sram_bandwidth : m.cube_sram_bandwidth,
                       bytes, there + 2 * slot_latency);
  }
  finish(out, bound);
  return out;
}

ProbePoint Prober::host(const Plan& plan, std::uint64_t bytes) const {
  Simulation sim(spec_, options_);
  const Ptr p = sim.alloc(bytes, plan.where);
  const HostBuffer buffer{p, bytes};
  const HostTransfer t = sim.host_time(
      plan.kind == Plan::Kind::host_in ? HostDirection::to_device : HostDirection::to_host,
      {&buffer, 1});
  ProbePoint out;
  out.bytes = bytes;
  out.simulated = t.time;
  out.latency = t.setup + t.latency;  // the setup is part of the way here
  out.serialisation = t.serialisation;
  out.bound = t.time;
  out.bottleneck = t.bottleneck;
  return out;
}

ProbeCase Prober::run(const Plan& plan) const {
  ProbeCase c = plan.shown;
  c.max_bytes = largest(plan, &c.limit);
  c.latency = measure(plan, kLatencyBytes);
  c.reference = measure(plan, std::min(kReferenceBytes, c.max_bytes));
  for (const std::uint64_t b : kSweep)
    if (b <= c.max_bytes) c.sweep.push_back(measure(plan, b));
  // The way the small transfer takes, by kind of link.
  Simulation sim(spec_, options_);
  const components::Topology& t = sim.system().topology();
  Route r;
  if (plan.kind == Plan::Kind::message) {
    r = t.pe_to_pe(0, plan.peer);
  } else if (plan.kind == Plan::Kind::read) {
    const Ptr p = sim.alloc(kLatencyBytes, plan.where);
    const Location loc = sim.system().address_map().decode(p.addr);
    r = t.memory_to_pe(loc.global_cube, sim.system().address_map().channel(loc), 0);
  }
  c.request_ps = r.pre_delay;
  for (std::size_t h = 0; h < r.links.size(); ++h) {
    const Tick l = r.latency[h];
    switch (t.link(r.links[h]).kind) {
      case components::LinkKind::noc:
        ++c.mesh_hops;
        c.mesh_ps += l;
        break;
      case components::LinkKind::ucie:
        ++c.ucie_hops;
        c.ucie_ps += l;
        break;
      case components::LinkKind::inter_sip:
        ++c.inter_sip_hops;
        c.inter_sip_ps += l;
        break;
      default:
        ++c.ports;
        c.ports_ps += l;
    }
  }
  return c;
}

const ProbeCase* find(const std::vector<ProbeCase>& cases, const std::string& name) {
  for (const auto& c : cases)
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<ProbeCheck> checks(const std::vector<ProbeCase>& cases) {
  std::vector<ProbeCheck> out;
  // A class farther away is no faster: each chain in order of distance.
  const std::vector<std::vector<std::string>> chains = {
      {"hbm.own_slice", "hbm.cube", "hbm.ucie", "hbm.inter_sip"},
      {"pe.mesh", "pe.ucie", "pe.inter_sip"}};
  for (const auto& chain : chains) {
    const ProbeCase* prev = nullptr;
    for (const auto& name : chain) {
      const ProbeCase* c = find(cases, name);
      if (!c) continue;
      if (prev)
        out.push_back({"latency grows with distance: " + prev->name + " <= " + c->name,
                       prev->latency.simulated <= c->latency.simulated,
                       emu::format_time(prev->latency.simulated) +
                           " <= " + emu::format_time(c->latency.simulated)});
      prev = c;
    }
  }
  if (const ProbeCase* in = find(cases, "host.to_device"), *back = find(cases, "host.to_host");
      in && back)
    out.push_back(
        {"a read from the host side waits for its request: host.to_device <= host.to_host",
         in->latency.simulated <= back->latency.simulated,
         emu::format_time(in->latency.simulated) +
             " <= " + emu::format_time(back->latency.simulated)});
  for (const auto& c : cases) {
    std::vector<const ProbePoint*> points = {&c.latency, &c.reference};
    for (const auto& p : c.sweep) points.push_back(&p);
    bool bounded = true, within = true;
    std::string worst_bound, worst_use;
    for (const ProbePoint* p : points) {
      if (p->simulated < p->bound) {
        bounded = false;
        worst_bound = format_bytes(static_cast<double>(p->bytes)) + ": " +
                      emu::format_time(p->simulated) + " < " + emu::format_time(p->bound);
      }
      if (p->utilisation() > 1.0 + 1e-9) {
        within = false;
        worst_use =
            format_bytes(static_cast<double>(p->bytes)) + ": " + std::to_string(p->utilisation());
      }
    }
    out.push_back({c.name + ": no faster than its zero-load bound", bounded,
                   bounded ? "every size" : worst_bound});
    out.push_back({c.name + ": utilisation <= 100 %", within, within ? "every size" : worst_use});
  }
  return out;
}

}  // namespace

double ProbePoint::achieved_GBps() const {
  return gbps(bytes, simulated);
}
double ProbePoint::peak_GBps() const {
  return gbps(bytes, serialisation);
}
double ProbePoint::utilisation() const {
  return serialisation == 0 || simulated == 0
             ? 0.0
             : static_cast<double>(serialisation) / static_cast<double>(simulated);
}

bool ProbeResult::passed() const {
  return std::all_of(checks.begin(), checks.end(), [](const ProbeCheck& c) { return c.pass; });
}

ProbeResult run_probe(const components::Spec& spec, components::NetworkModel network,
                      const std::string& only) {
  const Prober prober(spec, network);
  const std::vector<Plan> plans = prober.plans();
  ProbeResult r;
  std::string names;
  for (const Plan& p : plans) {
    names += (names.empty() ? "" : ", ") + p.shown.name;
    if (only.empty() || only == "all" || p.shown.name == only) r.cases.push_back(prober.run(p));
  }
  if (r.cases.empty())
    throw UsageError("--case " + only + ": this system has no such case; its cases: " + names +
                     " (or all)");
  r.checks = checks(r.cases);
  return r;
}

}  // namespace cubesim::cli
