#include "triton_emu/ops/switch_reduce.hpp"

#include <fmt/format.h>

#include <cstring>

#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/element_codec.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::detail {

using components::SwitchLevel;

std::string SwitchDone::describe() const {
  std::string missing;
  for (std::size_t i = 0; i < sum_.given.size(); ++i)
    if (sum_.given[i] == 0) missing += (missing.empty() ? "" : ", ") + sum_.member_names[i];
  return fmt::format("the sum of {} ({} of {} parts given{})", sum_.name, sum_.count, sum_.members,
                     missing.empty() ? "" : "; not yet by " + missing);
}

SwitchReductions::SwitchReductions(components::System& sys)
    : sys_(sys), reducer_(sys.scheduler(), sys.network()) {}

void SwitchReductions::begin() {
  end();
}

void SwitchReductions::end() {
  open_.clear();
  calls_.clear();
  reducer_.clear();
}

std::string SwitchReductions::leftovers() const {
  std::string out;
  for (const auto& [key, sum] : open_) {
    std::string missing;
    for (std::size_t i = 0; i < sum->given.size(); ++i)
      if (sum->given[i] == 0) missing += (missing.empty() ? "" : ", ") + sum->member_names[i];
    out += fmt::format("\n  {}: {} of {} programs took part; {} never did", sum->name, sum->count,
                       sum->members, missing);
  }
  if (out.empty()) return out;
  return "in-network reductions that not every member joined:" + out +
         "\n  (every program at a place must make the same switch_reduce calls)";
}

namespace {

// The sum of the members' parts, in member order: floats in f32, integers in i64.
void add_parts(SwitchSum& s) {
  const std::int64_t n = s.shape.numel();
  const auto bytes = static_cast<std::size_t>(n) * dtype_size(s.dtype);
  for (const auto& p : s.parts)
    if (p.size() != bytes) return;  // timing-only: no values
  s.sum.resize(bytes);
  if (is_floating(s.dtype)) {
    std::vector<float> acc(static_cast<std::size_t>(n), 0.0F), part(acc.size());
    for (const auto& p : s.parts) {
      tl::decode_f32(s.dtype, p.data(), n, part.data());
      for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += part[i];
    }
    tl::encode_f32(acc.data(), n, s.dtype, s.sum.data());
  } else {
    std::vector<std::int64_t> acc(static_cast<std::size_t>(n), 0), part(acc.size());
    for (const auto& p : s.parts) {
      tl::decode_i64(s.dtype, p.data(), n, part.data());
      for (std::size_t i = 0; i < acc.size(); ++i)
        acc[i] = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc[i]) +
                                           static_cast<std::uint64_t>(part[i]));
    }
    tl::encode_i64(acc.data(), n, s.dtype, s.sum.data());
  }
  for (auto& p : s.parts) std::vector<std::byte>().swap(p);
}

}  // namespace

std::shared_ptr<SwitchSum> SwitchReductions::new_sum(bool sips, const components::PeCoord& at,
                                                     std::uint64_t n, const tl::Tile& tile) const {
  const components::SystemConfig& c = sys_.config();
  auto s = std::make_shared<SwitchSum>();
  s->members = sips ? c.sips : c.cubes_per_sip;
  s->shape = tile.shape();
  s->dtype = tile.dtype();
  s->parts.resize(s->members);
  s->given.assign(s->members, 0);
  for (std::uint32_t m = 0; m < s->members; ++m)
    s->member_names.push_back(
        sys_.pe_name(sips ? (m * c.cubes_per_sip + at.cube) * c.cube.pes + at.pe
                          : (at.sip * c.cubes_per_sip + m) * c.cube.pes + at.pe));
  s->name = fmt::format("{} switch reduction {} of {}", sips ? "inter-SIP" : "UCIe", n,
                        sips ? fmt::format("sip*.cube{}.pe{}", at.cube, at.pe)
                             : fmt::format("sip{}.cube*.pe{}", at.sip, at.pe));
  return s;
}

std::shared_ptr<SwitchReceipt> SwitchReductions::contribute(Program& program, const tl::Tile& tile,
                                                            tl::Scope scope) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  program.sync();
  const char* call = scope == tl::Scope::all   ? "switch_reduce(Scope::all)"
                     : scope == tl::Scope::sip ? "switch_reduce(Scope::sip)"
                                               : "switch_reduce(Scope::cube)";
  if (launch.waves > 1) program.require_one_wave(call);
  if (!tile.valid()) program.fault(fmt::format("{} on {}: the tile is empty", call, pe.name));
  if (!program.owns(tile))
    program.fault(fmt::format("{} on {}: the tile belongs to another program", call, pe.name));
  if (scope == tl::Scope::cube)
    program.fault(fmt::format(
        "{} on {}: a cube's PEs share no switch; use Scope::sip (the cubes of a SIP, through "
        "a UCIe switch) or Scope::all (the SIPs, through an inter-SIP switch)",
        call, pe.name));
  const components::SystemConfig& c = sys_.config();
  const bool sips = scope == tl::Scope::all;
  const SwitchLevel level = sips ? SwitchLevel::inter_sip : SwitchLevel::ucie;
  const char* field = sips ? "system.inter_sip" : "system.ucie";
  const components::SwitchReduction& r = sips ? c.inter_sip.reduction : c.ucie.reduction;
  if (!r.enabled())
    program.fault(fmt::format(
        "{} on {}: {} is not a switch that reduces (topology {}{}); give it \"topology\": "
        "\"switch\" and a \"switch_reduction\" section",
        call, pe.name, field, components::to_string(sips ? c.inter_sip.topology : c.ucie.topology),
        (sips ? c.inter_sip.topology : c.ucie.topology) == components::GraphKind::switch_
            ? ", without switch_reduction"
            : ""));
  if (!r.adds(tile.dtype())) {
    std::string listed;
    for (const DType t : kAllDTypes)
      if (r.adds(t)) listed += (listed.empty() ? "" : ", ") + std::string(dtype_name(t));
    program.fault(fmt::format(
        "{} on {}: the switch cannot add {} ({}.switch_reduction.dtypes lists {}); convert "
        "the tile to one of those, or list {} there",
        call, pe.name, dtype_name(tile.dtype()), field, listed, dtype_name(tile.dtype())));
  }
  const components::PeCoord at = pe.coord;
  const std::uint32_t members = sips ? c.sips : c.cubes_per_sip;
  const std::uint32_t place = sips ? at.cube * c.cube.pes + at.pe : at.sip * c.cube.pes + at.pe;
  const std::uint32_t member = sips ? at.sip : at.cube;
  const std::uint32_t global_pe = pe.hw.global_pe();
  const std::uint64_t n = calls_[{static_cast<int>(level), global_pe}]++;
  std::shared_ptr<SwitchSum>& slot = open_[{static_cast<int>(level), place, n}];
  if (!slot) slot = new_sum(sips, at, n, tile);
  std::shared_ptr<SwitchSum> sum = slot;
  if (sum->shape != tile.shape() || sum->dtype != tile.dtype()) {
    std::size_t first = 0;
    while (sum->given[first] == 0) ++first;
    program.fault(
        fmt::format("{} on {}: its tile ({} {}) does not match the {} {} that {} gave "
                    "to {}; every member's tile must be alike",
                    call, pe.name, tile.shape().str(), dtype_name(tile.dtype()), sum->shape.str(),
                    dtype_name(sum->dtype), sum->member_names[first], sum->name));
  }
  if (const std::byte* v = tile.raw(); v != nullptr) sum->parts[member].assign(v, v + tile.bytes());
  sum->given[member] = 1;
  if (++sum->count == members) open_.erase({static_cast<int>(level), place, n});

  auto receipt = std::make_shared<SwitchReceipt>(launch.sched, sum);
  receipt->owner = program.index();
  receipt->tile =
      program.make_tile(tile.shape(), tile.dtype(),
                        program.tile_bytes("switch_reduce", tile.shape(), tile.dtype()), true);
  // Reductions are keyed by where the sum object lives while any member holds it.
  reducer_.contribute(level, reinterpret_cast<std::uintptr_t>(sum.get()), members, global_pe,
                      tile.bytes(), [receipt] { receipt->done.fire(); });
  return receipt;
}

tl::Tile SwitchReductions::wait(Program& program, SwitchReceipt* receipt) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  program.sync();
  if (receipt == nullptr)
    program.fault("wait on " + pe.name + ": the ReduceHandle came from no switch_reduce_async");
  SwitchReceipt& r = *receipt;
  program.require_this_launch(r.tile, "ReduceHandle", "switch_reduce_async",
                              "its reduction ended with that launch");
  if (r.owner != program.index())
    program.fault("wait on " + pe.name +
                  ": the ReduceHandle belongs to another program's switch_reduce_async");
  if (r.taken) return r.tile;
  const emu::Tick t0 = launch.sched.now();
  r.done.wait();
  SwitchSum& s = *r.sum;
  if (!s.summed) {
    add_parts(s);
    s.summed = true;
  }
  if (std::byte* dst = !s.sum.empty() && r.tile.valid() ? tl::TileAccess::raw(r.tile) : nullptr)
    std::memcpy(dst, s.sum.data(), std::min<std::size_t>(s.sum.size(), r.tile.bytes()));
  if (launch.sched.now() > t0 && launch.tracing(pe))
    launch.trace_slice(pe, false, "switch_reduce wait", t0, launch.sched.now(),
                       fmt::format(R"({{"reduction":"{}","bytes":{}}})", s.name, r.tile.bytes()));
  r.taken = true;
  return r.tile;
}

}  // namespace cubesim::detail
