#include "components/network/route_cache.hpp"

namespace cubesim::components {
namespace {
// Routes remembered per PE; a power of two. 128: the channels of 4 cubes on default.json
// (every (cube, channel) a PE's interleaved reads meet), 2 KiB per PE.
constexpr std::uint64_t kSlots = 128;
}  // namespace

RouteCache::RouteCache(const Topology& topology)
    : topology_(topology), recent_(topology.total_pes()) {}

RouteCache::Key RouteCache::key(TransferKind kind, std::uint32_t pe, std::uint32_t peer,
                                Location loc, std::uint32_t channel) {
  const std::uint64_t who = std::uint64_t{static_cast<std::uint32_t>(kind)} << 32 | pe;
  if (kind == TransferKind::send) return {who, peer};
  // The ways up to a switch and down from it: the level (`peer`) and the connection down.
  if (kind == TransferKind::to_switch || kind == TransferKind::from_switch)
    return {who, std::uint64_t{peer} << 32 | channel};
  return {who, std::uint64_t{loc.global_cube} << 32 | channel};
}

const Route& RouteCache::get(TransferKind kind, std::uint32_t pe, std::uint32_t peer, Location loc,
                             std::uint32_t channel) {
  const Key k = key(kind, pe, peer, loc, channel);
  Recent& r = recent_[pe];
  if (k == r.last.key) return *r.last.route;
  if (r.slots.empty()) r.slots.resize(kSlots);
  // The PE is the same for all of its slots: index by where the route goes (low bits: the
  // channel, or the peer), the kind mixed in.
  Slot& slot = r.slots[(k.where + (k.where >> 29) + (k.who >> 32) * 0x9e37) & (kSlots - 1)];
  if (k != slot.key) {
    auto it = routes_.find(k);
    if (it == routes_.end()) {
      const auto level = static_cast<SwitchLevel>(peer);
      Route route =
          kind == TransferKind::send          ? topology_.pe_to_pe(pe, peer)
          : kind == TransferKind::to_switch   ? topology_.pe_to_switch(pe, level)
          : kind == TransferKind::from_switch ? topology_.switch_to_pe(level, channel, pe)
          : kind == TransferKind::read        ? topology_.memory_to_pe(loc.global_cube, channel, pe)
          : kind == TransferKind::cache_read  ? topology_.cache_to_pe(loc.global_cube, channel, pe)
                                             : topology_.pe_to_memory(pe, loc.global_cube, channel);
      it = routes_.emplace(k, std::move(route)).first;  // nodes are stable: pointers stay valid
    }
    slot.key = k;
    slot.route = &it->second;
  }
  r.last = slot;
  return *slot.route;
}

}  // namespace cubesim::components
