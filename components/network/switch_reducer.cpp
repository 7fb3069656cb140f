#include "components/network/switch_reducer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cubesim::components {

SwitchReducer::SwitchReducer(emu::Scheduler& scheduler, Network& network)
    : sched_(scheduler), network_(network) {}

void SwitchReducer::contribute(SwitchLevel level, std::uint64_t key, std::uint32_t members,
                               std::uint32_t pe, std::uint64_t bytes, Done delivered) {
  const SystemConfig& c = network_.topology().config();
  if (!(level == SwitchLevel::inter_sip ? c.inter_sip.reduction : c.ucie.reduction).enabled())
    throw std::logic_error("SwitchReducer: that level's switch does not reduce");
  Group& g = groups_[key];
  if (g.parts.empty()) {
    g.level = level;
    g.members = members;
    g.bytes = bytes;
  } else if (g.level != level || g.members != members || g.bytes != bytes ||
             g.parts.size() >= members) {
    throw std::logic_error("SwitchReducer: part of reduction " + std::to_string(key) +
                           " does not match its others");
  }
  auto [port, fresh] =
      ports_.try_emplace(std::uint64_t{pe} << 1 | static_cast<std::uint32_t>(level));
  if (fresh) {
    const Topology& topo = network_.topology();
    port->second = {topo.pe_to_switch(pe, level).links.back(), topo.switch_connection(pe, level)};
  }
  const auto [up, connection] = port->second;
  g.parts.push_back({pe, connection, std::move(delivered)});
  network_.to_switch(pe, level, bytes, [this, key, up] { arrived(key, up); });
}

void SwitchReducer::arrived(std::uint64_t key, LinkId up) {
  const auto it = groups_.find(key);
  if (it == groups_.end()) return;  // forgotten (clear())
  Group& g = it->second;
  const SystemConfig& c = network_.topology().config();
  const SwitchReduction& r =
      g.level == SwitchLevel::inter_sip ? c.inter_sip.reduction : c.ucie.reduction;
  if (adder_free_.size() <= up) adder_free_.resize(network_.topology().links().size(), 0);
  const emu::Tick start = std::max(sched_.now(), adder_free_[up]);
  adder_free_[up] = start + r.bandwidth.transfer_time(g.bytes);
  g.summed = std::max(g.summed, adder_free_[up]);
  if (++g.arrived < g.members) return;
  sched_.schedule_at(
      g.summed,
      [this, key] {
        const auto found = groups_.find(key);
        if (found == groups_.end()) return;
        Group done = std::move(found->second);
        groups_.erase(found);
        for (Member& m : done.parts)
          network_.from_switch(done.level, m.connection, m.pe, done.bytes, std::move(m.delivered));
      },
      0, "switch reduction");
}

void SwitchReducer::clear() {
  groups_.clear();
  std::fill(adder_free_.begin(), adder_free_.end(), 0);
}

}  // namespace cubesim::components
