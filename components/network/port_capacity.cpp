#include "components/network/port_capacity.hpp"

#include <algorithm>

#include "components/network/channel_load.hpp"

namespace cubesim::components {
namespace {

constexpr std::uint64_t kMaxPairs = std::uint64_t{1} << 18;

// A pattern whose routes carry equal shares: the most it can carry is `routes` times what one
// route can, through the first link to fill.
class PatternLoad {
 public:
  explicit PatternLoad(const Topology& t) : t_(t), load_(t) {}
  void add(const Route& r) {
    ++routes_;
    load_.add(r, 1.0);
  }
  void bound(PortCapacity& c) const {
    if (load_.empty()) return;
    const ChannelLoad::Bound b = load_.bound();
    c.delivered_bytes_per_s = std::min(b.rate * static_cast<double>(routes_), c.peak_bytes_per_s);
    c.bottleneck = b.link_name;
    c.bottleneck_field = link_bandwidth_field(t_.link(b.link).kind);
  }

 private:
  const Topology& t_;
  ChannelLoad load_;
  std::uint64_t routes_ = 0;
};

// Every source with an even sample of the destinations: at most kMaxPairs pairs.
template <class Each>
void sample_pairs(std::uint32_t sources, std::uint32_t destinations, Each each) {
  const std::uint64_t pairs = std::uint64_t{sources} * destinations;
  const std::uint64_t stride = (pairs + kMaxPairs - 1) / kMaxPairs;
  for (std::uint32_t s = 0; s < sources; ++s)
    for (std::uint64_t d = s % stride; d < destinations; d += stride)
      each(s, static_cast<std::uint32_t>(d));
}

PortCapacity capacity(std::string resource, std::string pattern, double peak) {
  PortCapacity c;
  c.resource = std::move(resource);
  c.pattern = std::move(pattern);
  c.peak_bytes_per_s = peak;
  return c;
}

}  // namespace

std::vector<PortCapacity> port_capacities(const Topology& t) {
  const SystemConfig& c = t.config();
  const std::uint32_t pes = t.pes_per_cube(), channels = c.cube.hbm.channels;
  std::vector<PortCapacity> out;

  const auto rate = [](Bandwidth b, std::uint32_t links) {
    return static_cast<double>(b.bytes_per_s()) * links;
  };
  PortCapacity read =
      capacity("hbm_read", "every PE of a cube reads every channel of its cube evenly",
               rate(c.cube.hbm.bandwidth, 1));
  PortCapacity write =
      capacity("hbm_write", "every PE of a cube writes every channel of its cube evenly",
               rate(c.cube.hbm.bandwidth, 1));
  PatternLoad reads(t), writes(t);
  sample_pairs(pes, channels, [&](std::uint32_t pe, std::uint32_t ch) {
    reads.add(t.memory_to_pe(0, ch, pe));
    writes.add(t.pe_to_memory(pe, 0, ch));
  });
  reads.bound(read);
  writes.bound(write);
  out.push_back(std::move(read));
  out.push_back(std::move(write));

  if (c.cubes_per_sip > 1) {
    PortCapacity ucie =
        capacity("ucie", "every PE of a cube sends to every PE of its first neighbour",
                 rate(c.ucie.bandwidth, c.ucie.connections));
    PatternLoad load(t);
    sample_pairs(pes, pes, [&](std::uint32_t a, std::uint32_t b) {
      load.add(t.pe_to_pe(a, pes + b));  // cube 1 neighbours cube 0 in every UCIe topology
    });
    load.bound(ucie);
    out.push_back(std::move(ucie));
  }
  if (c.sips > 1) {
    PortCapacity sip =
        capacity("inter_sip", "every PE of a SIP's port cube sends to every PE of the next SIP's",
                 rate(c.inter_sip.bandwidth, c.inter_sip.connections));
    const std::uint32_t from = c.inter_sip.port_cube * pes;
    const std::uint32_t to = (c.cubes_per_sip + c.inter_sip.port_cube) * pes;
    PatternLoad load(t);
    sample_pairs(pes, pes,
                 [&](std::uint32_t a, std::uint32_t b) { load.add(t.pe_to_pe(from + a, to + b)); });
    load.bound(sip);
    out.push_back(std::move(sip));
  }
  return out;
}

}  // namespace cubesim::components
