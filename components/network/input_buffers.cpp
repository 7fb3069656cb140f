#include "components/network/input_buffers.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim::components {

namespace {

// The buffers at the far end of a link of this kind, or nullptr for a sink. An HBM channel
// (or a cache slice) feeds its controller's router port when read from (and is the last hop, a
// sink, when written to: the packet model never asks for a buffer beyond a route's last link).
const BufferConfig* far_end(const SystemConfig& c, LinkKind kind) {
  switch (kind) {
    case LinkKind::noc:
    case LinkKind::inject:
    case LinkKind::hbm_channel:
    case LinkKind::cache:
      return &c.cube.noc.router;
    case LinkKind::ucie:
      return &c.ucie.buffers;
    case LinkKind::inter_sip:
      return &c.inter_sip.buffers;
    case LinkKind::eject:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

InputBuffers::InputBuffers(const Topology& topology) : plan_(VcPlan::of(topology.config())) {
  const SystemConfig& c = topology.config();
  const std::vector<Link>& links = topology.links();
  any_ = c.cube.noc.router.bounded() || c.ucie.buffers.bounded() || c.inter_sip.buffers.bounded();
  if (!any_) return;
  const std::array<const BufferConfig*, 3> configs{&c.cube.noc.router, &c.ucie.buffers,
                                                   &c.inter_sip.buffers};
  for (std::size_t k = 0; k < configs.size(); ++k) {
    capacity_[k] = configs[k]->vc_bytes();
    credit_latency_[k] = configs[k]->credit_latency;
    vcs_[k] = configs[k]->virtual_channels;
  }
  ports_.assign(links.size(), Port{});
  std::size_t channels = 0;
  for (LinkId id = 0; id < links.size(); ++id) {
    const BufferConfig* b = far_end(c, links[id].kind);
    if (b == nullptr || !b->bounded()) continue;
    // Specs are validated with these words (components/spec/validate.cpp); a config built by
    // hand is checked here, since either would leave packets waiting forever.
    if (b->vc_bytes() < c.cube.noc.packet_bytes)
      throw std::invalid_argument("InputBuffers: a virtual channel is smaller than a packet");
    const std::uint32_t mask = plan_.holds(links[id]);
    const auto classes = static_cast<std::uint32_t>(__builtin_popcount(mask));
    if (b->virtual_channels < classes)
      throw std::invalid_argument("InputBuffers: fewer virtual channels than classes");
    Port& p = ports_[id];
    p.first = static_cast<std::uint32_t>(channels);
    const auto kind =
        static_cast<std::uint32_t>(std::find(configs.begin(), configs.end(), b) - configs.begin());
    p.kind = static_cast<std::uint16_t>(kind);
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const Groups& x) { return x.kind == kind && x.mask == mask; });
    if (g == groups_.end()) {
      Groups n{kind, mask, classes, {}};
      for (std::uint32_t cls = 0; cls < plan_.classes(); ++cls)
        n.range.push_back(
            vc_range(vcs_[kind], classes, (mask >> cls & 1) != 0 ? VcPlan::group(mask, cls) : 0));
      groups_.push_back(std::move(n));
      g = groups_.end() - 1;
    }
    p.groups = static_cast<std::uint16_t>(g - groups_.begin());
    channels += b->virtual_channels;
  }
  channels_.assign(channels, Channel{});
  spills_.resize(channels);
}

void InputBuffers::clear() {
  for (Channel& c : channels_) c = Channel{};
  for (Spill& s : spills_) {
    s.queue.clear();
    s.head = 0;
  }
}

void InputBuffers::spill_pop(Channel& c) {
  Spill& s = spills_[index(&c)];
  c.release[kInline - 1] = s.queue[s.head].release;
  c.bytes[kInline - 1] = s.queue[s.head].bytes;
  ++s.head;
  if (s.head == s.queue.size()) {
    s.queue.clear();
    s.head = 0;
  } else if (s.head >= 64 && 2 * s.head >= s.queue.size()) {  // never emptied: drop the front
    s.queue.erase(s.queue.begin(), s.queue.begin() + static_cast<std::ptrdiff_t>(s.head));
    s.head = 0;
  }
}

}  // namespace cubesim::components
