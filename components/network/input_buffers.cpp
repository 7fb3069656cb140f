#include "components/network/input_buffers.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim::components {

namespace {

// The buffers at the far end of a link of this kind, or nullptr for a sink. An HBM channel
// feeds its controller's router port when read from (and is the last hop, a sink, when
// written to: the packet model never asks for a buffer beyond a route's last link).
const BufferConfig* far_end(const SystemConfig& c, LinkKind kind) {
  switch (kind) {
    case LinkKind::noc:
    case LinkKind::inject:
    case LinkKind::hbm_channel:
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
  const std::array<LinkKind, 3> kinds{LinkKind::noc, LinkKind::ucie, LinkKind::inter_sip};
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const std::uint32_t classes = plan_.classes(kinds[k]);
    for (std::uint32_t i = 0; i < classes; ++i)
      ranges_[k].push_back(vc_range(configs[k]->virtual_channels, classes, i));
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
    if (b->virtual_channels < plan_.classes(links[id].kind))
      throw std::invalid_argument("InputBuffers: fewer virtual channels than classes");
    Port& p = ports_[id];
    p.first = static_cast<std::uint32_t>(channels);
    p.vcs = static_cast<std::uint16_t>(b->virtual_channels);
    p.kind =
        static_cast<std::uint8_t>(std::find(configs.begin(), configs.end(), b) - configs.begin());
    p.link_kind = links[id].kind;
    p.capacity = b->vc_bytes();
    p.credit_latency = b->credit_latency;
    channels += b->virtual_channels;
  }
  channels_.assign(channels, Channel{});
}

void InputBuffers::clear() {
  for (Channel& c : channels_) c = Channel{};
  spills_.clear();
  free_spills_.clear();
}

void InputBuffers::spill_push(Channel& c, Tick release, std::uint32_t bytes) {
  if (c.spill == kNone) {
    if (free_spills_.empty()) {
      c.spill = static_cast<std::uint32_t>(spills_.size());
      spills_.emplace_back();
    } else {
      c.spill = free_spills_.back();
      free_spills_.pop_back();
    }
  }
  spills_[c.spill].push_back({release, bytes});
}

void InputBuffers::spill_pop(Channel& c) {
  std::deque<Granted>& q = spills_[c.spill];
  c.release[kInline - 1] = q.front().release;
  c.bytes[kInline - 1] = q.front().bytes;
  q.pop_front();
  if (q.empty()) {
    free_spills_.push_back(c.spill);
    c.spill = kNone;
  }
}

}  // namespace cubesim::components
