#include "components/network/fabric.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim::components {

Fabric::Fabric(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map)
    : sched_(scheduler),
      topology_(topology),
      map_(map),
      links_(topology.links()),
      packet_bytes_(topology.config().cube.noc.packet_bytes),
      window_(topology.config().pe.dma.max_outstanding_packets),
      dma_(topology.total_pes()) {}

void Fabric::read(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "read");
  begin(Kind::read, pe, 0, addr, bytes, std::move(done));
}

void Fabric::write(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "write");
  begin(Kind::write, pe, 0, addr, bytes, std::move(done));
}

void Fabric::send(std::uint32_t src_pe, std::uint32_t dst_pe, std::uint64_t bytes, Done done) {
  if (dst_pe >= topology_.total_pes())
    throw std::out_of_range("Fabric::send: destination PE index out of range");
  begin(Kind::send, src_pe, dst_pe, 0, bytes, std::move(done));
}

void Fabric::begin(Kind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
                   std::uint64_t bytes, Done done) {
  if (pe >= dma_.size()) throw std::out_of_range("Fabric: PE index out of range");
  Transfer& t = *new_transfer();
  t.kind = kind;
  t.pe = pe;
  t.peer = peer;
  t.addr = addr;
  t.bytes = bytes;
  t.done = std::move(done);
  start(t);
}

void Fabric::start(Transfer& t) {
  ++transfers_;
  ++live_transfers_;
  if (t.bytes == 0) {
    sched_.schedule_in(0, [this, &t] {
      --live_transfers_;
      Done d = std::move(t.done);
      t.next_free = free_transfers_;
      free_transfers_ = &t;
      if (d) d();
    }, 0, "empty transfer");
    return;
  }
  dma_[t.pe].ready.push_back(&t);
  pump(t.pe);
}

void Fabric::pump(std::uint32_t pe) {
  Dma& d = dma_[pe];
  while (d.in_flight < window_ && !d.ready.empty()) {
    Transfer& t = *d.ready.front();
    d.ready.pop_front();
    ++d.in_flight;
    issue_packet(t);
    if (t.issued < t.bytes) d.ready.push_back(&t);
  }
}

const Route& Fabric::route_for(Transfer& t, std::uint64_t addr, std::uint32_t* bytes) {
  const std::uint64_t left = t.bytes - t.issued;
  const std::uint64_t pes = topology_.total_pes();
  std::uint64_t key;
  Location loc{};
  std::uint32_t ch = 0;
  if (t.kind == Kind::send) {
    // Packets of a PE-to-PE transfer are cut at packet_bytes of the transfer's own offset.
    *bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, packet_bytes_));
    key = (2 * pes + t.pe) * pes + t.peer;
  } else {
    // The first piece of the remaining range: one cube, one channel, at most one packet.
    const auto piece = map_.first_piece(addr, left, packet_bytes_);
    loc = piece.loc;
    *bytes = static_cast<std::uint32_t>(piece.len);
    ch = map_.channel(loc);
    key = ((std::uint64_t{t.kind == Kind::read} * pes + t.pe) * map_.cubes() + loc.global_cube) *
              map_.hbm_channels() + ch;
  }
  if (key == t.route_key) return *t.route;
  Dma& d = dma_[t.pe];
  if (key != d.route_key) {
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      Route r = t.kind == Kind::send   ? topology_.pe_to_pe(t.pe, t.peer)
                : t.kind == Kind::read ? topology_.memory_to_pe(loc.global_cube, ch, t.pe)
                                       : topology_.pe_to_memory(t.pe, loc.global_cube, ch);
      it = routes_.emplace(key, std::move(r)).first;  // nodes are stable: pointers stay valid
    }
    d.route_key = key;
    d.route = &it->second;
  }
  t.route_key = key;
  t.route = d.route;
  return *d.route;
}

void Fabric::issue_packet(Transfer& t) {
  Packet& p = *new_packet();
  p.transfer = &t;
  p.route = &route_for(t, t.addr + t.issued, &p.bytes);
  p.hop = 0;
  p.tail = sched_.now() + p.route->pre_delay;
  t.issued += p.bytes;
  ++t.in_flight;
  ++packets_;
  if (p.route->pre_delay == 0)
    advance(p);
  else
    sched_.schedule_in(p.route->pre_delay, [this, &p] { advance(p); }, 0, "noc packet");
}

void Fabric::advance(Packet& p) {
  const emu::Tick now = sched_.now();
  const Route& r = *p.route;
  for (;;) {
    const LinkId id = r.links[p.hop];
    Link& l = links_[id];
    const emu::Tick ser =
        p.bytes == packet_bytes_ ? l.full_packet_time : l.bandwidth.transfer_time(p.bytes);
    const emu::Tick start = std::max(now, l.free_at);
    const emu::Tick end = std::max(start + ser, p.tail);
    l.free_at = end;
    l.busy += end - start;
    l.bytes += p.bytes;
    ++l.packets;
    ++packet_hops_;
    if (trace_) trace_busy(id, l, start, end);
    const emu::Tick lat = r.latency[p.hop];
    if (++p.hop == r.links.size()) {
      sched_.schedule_at(end + lat, [this, &p] { delivered(p); }, 0, "noc delivery");
      return;
    }
    p.tail = end + lat;
    const emu::Tick next = start + lat;
    if (next != now) {
      sched_.schedule_at(next, [this, &p] { advance(p); }, 0, "noc packet");
      return;
    }
    // A zero-latency port with the next link ready now: go on without another event.
  }
}

void Fabric::delivered(Packet& p) {
  Transfer& t = *p.transfer;
  t.delivered += p.bytes;
  --t.in_flight;
  p.next_free = free_packets_;
  free_packets_ = &p;
  --dma_[t.pe].in_flight;
  pump(t.pe);
  if (t.issued < t.bytes || t.in_flight != 0) return;
  --live_transfers_;
  Done d = std::move(t.done);
  t.done = nullptr;
  t.next_free = free_transfers_;
  free_transfers_ = &t;
  if (d) d();
}

Fabric::Transfer* Fabric::new_transfer() {
  Transfer* t = free_transfers_;
  if (t) {
    free_transfers_ = t->next_free;
    *t = Transfer{};
  } else {
    t = &transfer_store_.emplace_back();
  }
  return t;
}

Fabric::Packet* Fabric::new_packet() {
  Packet* p = free_packets_;
  if (p) {
    free_packets_ = p->next_free;
  } else {
    p = &packet_store_.emplace_back();
  }
  return p;
}

void Fabric::trace_busy(LinkId id, Link& l, emu::Tick start, emu::Tick end) {
  if (l.trace_end > l.trace_start && start <= l.trace_end) {
    l.trace_end = std::max(l.trace_end, end);
    return;
  }
  if (l.trace_end > l.trace_start) {
    auto it = link_tracks_.find(id);
    if (it == link_tracks_.end())
      it = link_tracks_.emplace(id, trace_->track("links", topology_.link_name(id))).first;
    trace_->complete(it->second, "busy", l.trace_start, l.trace_end - l.trace_start, "link");
  }
  l.trace_start = start;
  l.trace_end = end;
}

void Fabric::flush_trace() {
  if (!trace_) return;
  for (LinkId id = 0; id < links_.size(); ++id) {
    Link& l = links_[id];
    if (l.trace_end <= l.trace_start) continue;
    auto it = link_tracks_.find(id);
    if (it == link_tracks_.end())
      it = link_tracks_.emplace(id, trace_->track("links", topology_.link_name(id))).first;
    trace_->complete(it->second, "busy", l.trace_start, l.trace_end - l.trace_start, "link");
    l.trace_start = l.trace_end = 0;
  }
}

void Fabric::reset_stats() {
  for (Link& l : links_) {
    l.busy = 0;
    l.bytes = 0;
    l.packets = 0;
  }
  packets_ = packet_hops_ = transfers_ = 0;
}

std::uint64_t Fabric::link_bytes(LinkKind kind) const {
  std::uint64_t sum = 0;
  for (const Link& l : links_)
    if (l.kind == kind) sum += l.bytes;
  return sum;
}

nlohmann::json Fabric::stats_json(emu::Tick elapsed) const {
  nlohmann::json links = nlohmann::json::object();
  LinkId busiest = 0;
  emu::Tick busiest_time = 0;
  for (LinkId id = 0; id < links_.size(); ++id) {
    const Link& l = links_[id];
    if (l.packets == 0) continue;
    links[topology_.link_name(id)] = {
        {"kind", link_kind_name(l.kind)},
        {"bytes", l.bytes},
        {"packets", l.packets},
        {"busy_ps", l.busy},
        {"utilisation", elapsed ? static_cast<double>(l.busy) / static_cast<double>(elapsed) : 0.0}};
    if (l.busy > busiest_time) {
      busiest_time = l.busy;
      busiest = id;
    }
  }
  nlohmann::json out = {
      {"transfers", transfers_},
      {"packets", packets_},
      {"packet_hops", packet_hops_},
      {"bytes",
       {{"noc", link_bytes(LinkKind::noc)},
        {"inject", link_bytes(LinkKind::inject)},
        {"eject", link_bytes(LinkKind::eject)},
        {"hbm", link_bytes(LinkKind::hbm_channel)},
        {"ucie", link_bytes(LinkKind::ucie)},
        {"inter_sip", link_bytes(LinkKind::inter_sip)}}},
      {"links", std::move(links)}};
  if (busiest_time > 0)
    out["busiest_link"] = {
        {"name", topology_.link_name(busiest)},
        {"busy_ps", busiest_time},
        {"utilisation",
         elapsed ? static_cast<double>(busiest_time) / static_cast<double>(elapsed) : 0.0}};
  return out;
}

}  // namespace cubesim::components
