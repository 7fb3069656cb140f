#pragma once
// What the links of a Topology carried since their statistics were last zeroed: each link that
// carried traffic, the busiest one and the one held back most, bytes by kind of link, and the
// network's packet counts. Typed here; the run report (triton_emu/launch/run_stats.hpp) is the one
// place it becomes JSON.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "components/cache/cube_cache.hpp"
#include "components/hbm/banked_hbm.hpp"
#include "components/network/link.hpp"
#include "components/network/topology.hpp"
#include "emu/time.hpp"

namespace cubesim::components {

inline constexpr std::size_t kLinkKinds = static_cast<std::size_t>(LinkKind::cache) + 1;

struct LinkRecord {
  std::string name;  // Topology::link_name
  LinkKind kind = LinkKind::noc;
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  emu::Tick busy_ps = 0;
  // Time packets waited at its input for room beyond it, summed over packets; measured only
  // with bounded buffers (LinkStats::bounded_buffers).
  emu::Tick credit_wait_ps = 0;
};

struct LinkStats {
  emu::Tick elapsed_ps = 0;      // what utilisation is measured against
  bool bounded_buffers = false;  // credit waits are measured (the packet model, finite buffers)
  std::uint64_t transfers = 0;
  std::uint64_t packets = 0;  // in the flow model: those the transfers would have been cut into
  std::uint64_t packet_hops = 0;
  std::array<std::uint64_t, kLinkKinds> bytes_by_kind{};  // summed over links, by LinkKind
  std::vector<LinkRecord> links;  // those that carried traffic, in link id order
  // Indices into `links`: the longest busy time and the longest credit wait (the first link of
  // equals); none when no link was busy, or no packet waited.
  std::optional<std::size_t> busiest;
  std::optional<std::size_t> most_held_back;
  // What the cubes' caches did (system.cube.cache); none without a cache.
  std::optional<CacheStats> cache;
  // What the HBM channels' controllers did (the banked model in the packet model); none
  // otherwise.
  std::optional<DramStats> dram;

  // Bytes carried by links of one kind (bytes x links crossed).
  std::uint64_t bytes(LinkKind kind) const { return bytes_by_kind[static_cast<std::size_t>(kind)]; }
  // The fraction of elapsed_ps the link was busy; 0 over no time.
  double utilisation(const LinkRecord& link) const;
  // The record of the link named `name`; null if it carried no traffic.
  const LinkRecord* link(std::string_view name) const;
  const LinkRecord* busiest_link() const { return busiest ? &links[*busiest] : nullptr; }
  const LinkRecord* most_held_back_link() const {
    return most_held_back ? &links[*most_held_back] : nullptr;
  }
};

// The statistics the links of `topology` hold now, measured over `elapsed`. The network's own
// counts (transfers, packets, packet hops) are left at zero: Network::link_stats fills them.
LinkStats measure_links(const Topology& topology, emu::Tick elapsed, bool bounded_buffers);

}  // namespace cubesim::components
