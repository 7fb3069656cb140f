#include "components/network/input_buffers.hpp"

#include <stdexcept>

namespace cubesim::components {

namespace {

// The buffers at the far end of a link of this kind, or nullptr for a sink. An HBM channel
// feeds its controller's router port when read from (and is the last hop, a sink, when
// written to: the fabric never asks for a buffer beyond a route's last link).
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
  first_.assign(links.size(), kNone);
  any_ = c.cube.noc.router.bounded() || c.ucie.buffers.bounded() || c.inter_sip.buffers.bounded();
  if (!any_) return;
  vcs_.assign(links.size(), 0);
  kind_.assign(links.size(), 0);
  capacity_.assign(links.size(), 0);
  credit_latency_.assign(links.size(), 0);
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
    first_[id] = static_cast<std::uint32_t>(channels);
    vcs_[id] = static_cast<std::uint16_t>(b->virtual_channels);
    kind_[id] = static_cast<std::uint8_t>(links[id].kind);
    capacity_[id] = b->vc_bytes();
    credit_latency_[id] = b->credit_latency;
    channels += b->virtual_channels;
  }
  channels_.assign(channels, Channel{});
}

Tick InputBuffers::room_at(Channel& c, std::uint64_t capacity, std::uint64_t bytes, Tick at) {
  // Requests on a link come in time order, so what is released by `at` stays released.
  while (c.head != nullptr && c.head->release <= at) {
    Occupant* o = c.head;
    c.used -= o->bytes;
    c.head = o->next;
    o->next = free_;
    free_ = o;
  }
  if (c.head == nullptr) c.tail = nullptr;
  std::uint64_t room = capacity - c.used;
  if (room >= bytes) return at;
  for (const Occupant* o = c.head; o != nullptr && o->release != kUnknown; o = o->next) {
    room += o->bytes;
    if (room >= bytes) return o->release;
  }
  return kUnknown;
}

std::uint32_t InputBuffers::choose(LinkId id, std::uint32_t crossed, std::uint64_t bytes, Tick at,
                                   Tick* ready) {
  // Of the class's channels with room now, the emptiest (the lowest on a tie): packets spread
  // over the channels, so one that waits blocks as few others as can be. Otherwise the one
  // with room soonest.
  const auto kind = static_cast<LinkKind>(kind_[id]);
  const VcRange r = vc_range(vcs_[id], plan_.classes(kind), plan_.class_index(kind, crossed));
  std::uint32_t best = kNone;
  Tick best_at = kUnknown;
  std::uint64_t best_used = 0;
  for (std::uint32_t v = r.first; v < r.last; ++v) {
    const std::uint32_t ch = first_[id] + v;
    Channel& c = channels_[ch];
    const Tick t = room_at(c, capacity_[id], bytes, at);
    if (t < best_at || (t == at && best_at == at && c.used < best_used)) {
      best_at = t;
      best = ch;
      best_used = c.used;
    }
  }
  *ready = best_at;
  return best_at == at ? best : kNone;
}

InputBuffers::Occupant* InputBuffers::enter(std::uint32_t ch, std::uint64_t bytes, void* packet) {
  Occupant* o = free_;
  if (o != nullptr)
    free_ = o->next;
  else
    o = &store_.emplace_back();
  *o = Occupant{bytes, kUnknown, nullptr, packet};
  Channel& c = channels_[ch];
  if (c.tail != nullptr)
    c.tail->next = o;
  else
    c.head = o;
  c.tail = o;
  if (c.waiting == nullptr) c.waiting = o;
  c.used += bytes;
  return o;
}

InputBuffers::Occupant* InputBuffers::leave(LinkId id, std::uint32_t ch, Occupant* o, Tick leaves) {
  Channel& c = channels_[ch];
  // Only the first in line is ever granted on (the FIFO), so it is c.waiting.
  o->release = emu::checked_add(leaves, credit_latency_[id], "credit return");
  c.clear_at = leaves;
  c.waiting = o->next;
  return c.waiting;
}

void InputBuffers::clear() {
  for (Channel& c : channels_) {
    for (Occupant* o = c.head; o != nullptr;) {
      Occupant* next = o->next;
      o->next = free_;
      free_ = o;
      o = next;
    }
    c = Channel{};
  }
}

}  // namespace cubesim::components
