#include "components/network/packet_network.hpp"

#include <algorithm>
#include <array>

namespace cubesim::components {

PacketNetwork::PacketNetwork(emu::Scheduler& scheduler, Topology& topology, const AddressMap& map)
    : Network(NetworkModel::packet, scheduler, topology, map),
      credits_(buffers_.any()),
      turnaround_(topology.config().cube.noc.router_timing.turnaround),
      speedup_(topology.config().cube.noc.router_timing.input_speedup),
      crossbar_(topology.config().cube.noc.link_bandwidth),
      crossbar_packet_time_(crossbar_.transfer_time(packet_bytes_)),
      allocation_(topology.config().cube.noc.router_timing.allocation),
      wake_priority_(allocation_ == RouterAllocation::fcfs ? 0 : 1),
      cycle_(topology.config().cube.noc.router_timing.pipeline -
             topology.config().cube.noc.router_timing.turnaround),
      dma_(topology.total_pes(), DmaEngine(window_)),
      response_bytes_(topology.config().cube.noc.response_bytes) {
  if (credits_) {
    waiters_.resize(links_.size());
    listed_.assign(links_.size(), 0);
    ports_.resize(links_.size());
    link_waiters_.assign(links_.size(), 0);
    if (allocation_ == RouterAllocation::round_robin) last_input_.assign(links_.size(), 0);
  }
  if (topology.hbm().scheduled()) {
    const auto& hbm = dynamic_cast<const BankedHbm&>(topology.hbm());
    const std::uint32_t channels = map.hbm_channels();
    dram_of_link_.assign(links_.size(), InputBuffers::kNone);
    for (std::uint32_t cube = 0; cube < topology.cubes(); ++cube)
      for (std::uint32_t ch = 0; ch < channels; ++ch) {
        dram_of_link_[topology.hbm_channel(cube, ch)] = static_cast<std::uint32_t>(dram_.size());
        dram_.push_back(hbm.make_channel(ch, channels));
      }
    dram_wake_.assign(dram_.size(), emu::kTickMax);
    dram_latency_ = hbm.access_latency();
  }
}

void PacketNetwork::start(Transfer& t) {
  if (!uses_dma_window(t.kind)) {
    // The switch (or controller) sends its packets at once; its link down serialises them.
    while (t.issued < t.bytes) issue_packet(t);
    return;
  }
  DmaEngine& d = dma_[t.pe];
  if (d.free()) {
    // What pump() does with this transfer alone in the queue, without the queue: a small
    // transfer (every small tl.load) is one packet, issued at once.
    issue_packet(t);
    if (t.issued == t.bytes) return;
  }
  d.queue(t);
  pump(t.pe);
}

void PacketNetwork::pump(std::uint32_t pe) {
  DmaEngine& d = dma_[pe];
  while (d.can_issue()) {
    Transfer& t = d.take();
    issue_packet(t);
    if (t.issued < t.bytes) d.queue(t);
  }
}

RouteCursor PacketNetwork::packet_route(const Transfer& t, std::uint32_t* bytes, emu::Tick* delay,
                                        std::uint64_t* dram_addr) const {
  const std::uint64_t left = t.bytes - t.issued;
  *delay = 0;
  if (t.kind == TransferKind::reply) {
    // From the controller's router: the route a read's data takes, less the channel.
    *bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, packet_bytes_));
    RouteCursor r = topology_.start_memory_to_pe(static_cast<std::uint32_t>(t.addr), t.peer, t.pe);
    *delay = r.latency;
    topology_.next(r);
    return r;
  }
  if (t.kind == TransferKind::send || t.kind == TransferKind::to_switch ||
      t.kind == TransferKind::from_switch) {
    // Packets of a PE-to-PE transfer are cut at packet_bytes of the transfer's own offset.
    *bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, packet_bytes_));
    const auto level = static_cast<SwitchLevel>(t.peer);
    if (t.kind == TransferKind::to_switch) return topology_.start_pe_to_switch(t.pe, level);
    if (t.kind == TransferKind::from_switch)
      return topology_.start_switch_to_pe(level, static_cast<std::uint32_t>(t.addr), t.pe);
    return topology_.start_pe_to_pe(t.pe, t.peer);
  }
  // The first piece of the remaining range: one cube, one channel, at most one packet.
  const auto piece = map_.first_piece(t.addr + t.issued, left, packet_bytes_);
  *bytes = static_cast<std::uint32_t>(piece.len);
  const std::uint32_t cube = piece.loc.global_cube, channel = map_.channel(piece.loc);
  if (!dram_.empty()) {
    // The channel's own address: its granules laid end to end.
    const std::uint64_t granule = map_.channel_interleave_bytes();
    const std::uint64_t turn = granule * map_.hbm_channels();
    *dram_addr = piece.loc.offset / turn * granule + piece.loc.offset % granule;
  }
  if (t.kind == TransferKind::write) return topology_.start_pe_to_memory(t.pe, cube, channel);
  if (t.kind == TransferKind::cache_read) {
    *delay = topology_.cache_request_delay(t.pe, cube, channel);
    return topology_.start_cache_to_pe(cube, channel, t.pe);
  }
  *delay = topology_.read_request_delay(t.pe, cube, channel);
  return topology_.start_memory_to_pe(cube, channel, t.pe);
}

void PacketNetwork::issue_packet(Transfer& t) {
  Packet& p = *new_packet();
  p.transfer = &t;
  p.response = false;
  emu::Tick delay = 0;
  std::uint64_t dram_addr = 0;
  p.route = packet_route(t, &p.bytes, &delay, &dram_addr);
  p.set_dram_addr(dram_addr);
  if (delay > emu::kTickMax - sched_.now()) [[unlikely]]
    request_overflow(t.pe, sched_.now(), delay);
  p.tail = sched_.now() + delay;
  t.issued += p.bytes;
  ++t.in_flight;
  // The packet holds a slot of its PE's window until delivered (not the switch's).
  if (uses_dma_window(t.kind)) dma_[t.pe].sent();
  ++packets_;
  if (t.kind == TransferKind::read && !dram_.empty()) {
    // The request reaches the channel's controller after `delay`; the data sets out from there.
    if (delay == 0)
      to_dram(p);
    else
      sched_.schedule_in(
          delay, [this, &p] { to_dram(p); }, 0, "hbm request");
    return;
  }
  set_out(p, sched_.now() + delay);
}

void PacketNetwork::set_out(Packet& p, emu::Tick at) {
  if (credits_) {
    p.held_channel = InputBuffers::kNone;
    p.in_line = false;
    p.vc_class = 0;
    p.waiting_since = emu::kTickMax;
    if (at == sched_.now())
      arrive(p);
    else
      sched_.schedule_at(
          at, [this, &p] { arrive(p); }, 0, "noc packet");
    return;
  }
  if (at == sched_.now())
    advance(p);
  else
    sched_.schedule_at(
        at, [this, &p] { advance(p); }, 0, "noc packet");
}

void PacketNetwork::advance(Packet& p) {
  const emu::Tick now = sched_.now();
  for (;;) {
    const LinkId id = p.route.link;
    const emu::Tick start = std::max(now, links_[id].free_at);
    const emu::Tick end = occupy(p, id, start);
    const emu::Tick lat = p.route.latency;
    if (!move_on(p, end)) return;
    const emu::Tick next = start + lat;
    if (next != now) {
      sched_.schedule_at(
          next, [this, &p] { advance(p); }, 0, "noc packet");
      return;
    }
    // A zero-latency port with the next link ready now: go on without another event.
  }
}

[[gnu::always_inline]] inline emu::Tick PacketNetwork::occupy(Packet& p, LinkId id,
                                                              emu::Tick start) {
  Link& l = links_[id];
  const emu::Tick ser =
      p.bytes == packet_bytes_ ? l.full_packet_time : l.bandwidth.transfer_time(p.bytes);
  if (ser > emu::kTickMax - start) [[unlikely]]
    busy_overflow(id, p.bytes, start);
  const emu::Tick end = std::max(start + ser, p.tail);
  const emu::Tick lat = p.route.latency;
  if (lat > emu::kTickMax - end) [[unlikely]]
    arrival_overflow(id, end, lat);
  l.free_at = end;
  l.busy += end - start;
  if (!p.response) {  // a write's response is control: it takes the link's time, carries no data
    l.bytes += p.bytes;
    ++l.packets;
    ++packet_hops_;
  }
  if (tracer_.on()) tracer_.busy(id, start, end, p.bytes, *p.transfer);
  return end;
}

void PacketNetwork::arrive(Packet& p) {
  // It leaves its channel first in line: behind another packet, it waits for that one's grant.
  if (p.held_channel != InputBuffers::kNone && !buffers_.first_in_line(p.held_channel, &p)) {
    return;  // grant() of the packet ahead goes on with it
  }
  request(p);
}

void PacketNetwork::request(Packet& p) {
  // Granting one packet can make the next in its channel first in line, and so on down the
  // channel: those requests are queued and taken here one after another, not nested (a
  // callback may run on a program's small fiber stack).
  if (requesting_) {  // a request further up the stack takes it
    pending_.push_back(&p);
    return;
  }
  requesting_ = true;
  request_now(p);
  if (!pending_.empty()) {
    for (std::size_t i = 0; i < pending_.size(); ++i) request_now(*pending_[i]);
    pending_.clear();
  }
  requesting_ = false;
}

[[gnu::always_inline]] inline void PacketNetwork::request_now(Packet& p) {
  const emu::Tick now = sched_.now();
  const LinkId id = p.route.link;
  if (p.held_channel != InputBuffers::kNone) {
    // In a router buffer: the output is asked for once the packet's channel has turned round
    // after the packet ahead, not before, so that it is not held idle for this packet meanwhile
    // (under fcfs, unless the output is busy past then anyway: the request keeps its place).
    const emu::Tick ready = buffers_.clear_at(p.held_channel) + turnaround_;
    if (ready > (allocation_ == RouterAllocation::fcfs ? std::max(now, links_[id].free_at) : now)) {
      sched_.schedule_at(
          ready, [this, &p] { request(p); }, 0, "noc packet");
      return;
    }
    if (allocation_ != RouterAllocation::fcfs && (listed_[id] || links_[id].free_at > now)) {
      // The output chooses among every packet ready for it in this tick, after they have all
      // asked (wake_priority_).
      wait_for(id, waiting(p));
      ++link_waiters_[id];
      schedule_wake(id, std::max(now, links_[id].free_at));
      return;
    }
  }
  emu::Tick retry = 0;
  Wait why = Wait::credits;
  if (try_grant(p, &retry, &why)) return;
  if (why == Wait::credits) p.waiting_since = now;
  wait_for(id, waiting(p));
  if (why == Wait::link && p.held_channel != InputBuffers::kNone) ++link_waiters_[id];
  if (retry != InputBuffers::kUnknown) schedule_wake(id, retry);
}

[[gnu::always_inline]] inline bool PacketNetwork::try_grant(Packet& p, emu::Tick* retry,
                                                            Wait* why) {
  const LinkId id = p.route.link;
  const Link& l = links_[id];
  const emu::Tick now = sched_.now();
  const emu::Tick start = std::max(now, l.free_at);
  if (p.held_channel != InputBuffers::kNone) {  // in a router buffer
    const emu::Tick ready = buffers_.clear_at(p.held_channel) + turnaround_;
    if (ready > (allocation_ == RouterAllocation::fcfs ? start : now)) {
      *retry = ready;
      *why = Wait::input;
      return false;
    }
    if (start > now && allocation_ != RouterAllocation::fcfs) {
      *retry = start;
      *why = Wait::link;
      return false;
    }
    const emu::Tick port = port_free(p.held_link, start, crossing(p.bytes));
    if (port > start) {
      *retry = port;
      *why = Wait::input;
      return false;
    }
  } else if (link_waiters_.size() != 0 && link_waiters_[id] != 0) {
    *retry = start;
    *why = Wait::link;
    return false;
  }
  // A packet crossing between cubes or SIPs takes its class beyond the link (VcPlan).
  const std::uint32_t cls =
      joins_cubes(l.kind)
          ? buffers_.plan().after(p.vc_class, l,
                                  l.to == p.route.dst_cube / topology_.config().cubes_per_sip)
          : p.vc_class;
  std::uint32_t channel = InputBuffers::kNone;
  if (!p.route.last && buffers_.bounded(id)) {
    channel = buffers_.choose(id, cls, p.bytes, start, retry);
    if (channel == InputBuffers::kNone) {
      *why = Wait::credits;
      return false;
    }
  }
  p.vc_class = cls;
  grant(p, start, channel);
  return true;
}

[[gnu::always_inline]] inline void PacketNetwork::grant(Packet& p, emu::Tick start,
                                                        std::uint32_t channel) {
  const LinkId id = p.route.link;
  const emu::Tick end = occupy(p, id, start);
  const emu::Tick lat = p.route.latency;
  if (p.waiting_since != emu::kTickMax) {
    links_[id].credit_wait += sched_.now() - p.waiting_since;
    p.waiting_since = emu::kTickMax;
  }
  if (p.held_channel != InputBuffers::kNone) {  // its tail leaves the buffer it sat in at `end`
    book_port(p.held_link, start, start + crossing(p.bytes));
    granted_input_ = p.held_link;
    if (!last_input_.empty()) last_input_[id] = p.held_link;
    InputBuffers::Place* next = nullptr;
    const emu::Tick release = buffers_.leave(p.held_link, p.held_channel, &p, p.bytes, end, &next);
    if (next != nullptr) request(*static_cast<Packet*>(next));  // first in line now
    if (listed_[p.held_link]) schedule_wake(p.held_link, release);
    p.held_channel = InputBuffers::kNone;
  }
  if (channel != InputBuffers::kNone) {
    buffers_.enter(channel, p.bytes, &p);
    p.held_link = id;
    p.held_channel = channel;
  }
  if (!move_on(p, end)) return;
  if (start + lat == sched_.now()) {
    arrive(p);  // a zero-latency port, granted now: on without another event
    return;
  }
  sched_.schedule_at(
      start + lat, [this, &p] { arrive(p); }, 0, "noc packet");
}

void PacketNetwork::schedule_wake(LinkId id, emu::Tick at) {
  Waiters& w = waiters_[id];
  at = std::max(at, sched_.now());
  if (at >= w.wake_at) return;  // an earlier one will look again
  w.wake_at = at;
  sched_.schedule_at(
      at,
      [this, id] {
        if (waiters_[id].wake_at != sched_.now()) return;  // replaced by an earlier one
        waiters_[id].wake_at = emu::kTickMax;
        wake(id);
      },
      wake_priority_, "credit");
}

void PacketNetwork::wait_for(LinkId id, const Waiting& e) {
  Waiters& w = waiters_[id];
  w.list.push_back(e);
  listed_[id] = 1;
  w.classes |= class_bit(e.vc_class);
  if (e.bytes < packet_bytes_) ++w.partial;
}

void PacketNetwork::wake(LinkId id) {
  Waiters& w = waiters_[id];
  // Detached: packets that start waiting for `id` meanwhile (a grant here can move the next
  // packet of a channel on) join the list behind the ones kept, in the order it all happens.
  waking_.clear();
  waking_.swap(w.list);
  listed_[id] = 0;
  const std::uint32_t classes = w.classes;
  std::uint32_t partial = w.partial;
  w.classes = 0;
  w.partial = 0;
  link_waiters_[id] = 0;  // counted again as they are listed again
  if (allocation_ != RouterAllocation::fcfs && waking_.size() > 1) order_waiting(id, waking_);
  const emu::Tick now = sched_.now();
  emu::Tick soonest = InputBuffers::kUnknown;
  // Per class: the smallest packet that found no room in this pass. A packet
  // of that class at least as big is passed over without looking: many packets often wait on
  // one link, and one look per class tells them all. Once every class listed has found no room
  // and only full packets are left, all of them would be passed over: they stay as they are,
  // without a look each (a DMA window's worth of packets can wait at one injection port).
  constexpr std::uint32_t kClassesTracked = 16;
  std::array<std::uint32_t, kClassesTracked> no_room;
  no_room.fill(~std::uint32_t{0});
  std::uint32_t failed = 0;  // class_bit of the classes that found no room
  bool held_granted = false;
  for (std::size_t i = 0; i < waking_.size(); ++i) {
    if (held_granted || (partial == 0 && (failed & classes) == classes)) {
      // The link went to a packet of a router buffer and is busy past now, so no other packet
      // gets it now (under round_robin and age nothing books it ahead while they wait); or no
      // class has room. Those left wait on as they are.
      for (std::size_t j = i; j < waking_.size(); ++j) {
        wait_for(id, waking_[j]);
        if (held_granted && waking_[j].packet->held_channel != InputBuffers::kNone) {
          ++link_waiters_[id];
          // One of a class that found no room here would not have asked for the link.
          if ((failed & class_bit(waking_[j].vc_class)) == 0) lost_arbitration(*waking_[j].packet);
        }
      }
      if (held_granted) soonest = std::min(soonest, links_[id].free_at);
      break;
    }
    const Waiting& e = waking_[i];
    Packet& p = *e.packet;
    if (e.bytes < packet_bytes_) --partial;
    const bool tracked = e.vc_class < kClassesTracked;
    const bool held = p.held_channel != InputBuffers::kNone;
    emu::Tick retry = 0;
    Wait why = Wait::credits;
    if (tracked && e.bytes >= no_room[e.vc_class]) {
      wait_for(id, e);
      continue;
    }
    if (try_grant(p, &retry, &why)) {
      held_granted = held && allocation_ != RouterAllocation::fcfs && links_[id].free_at > now;
      continue;
    }
    wait_for(id, e);
    if (why == Wait::link && held) ++link_waiters_[id];
    if (retry != 0) soonest = std::min(soonest, retry);
    if (why == Wait::credits) {
      if (p.waiting_since == emu::kTickMax) p.waiting_since = now;
      if (tracked) {
        no_room[e.vc_class] = std::min(no_room[e.vc_class], e.bytes);
        failed |= class_bit(e.vc_class);
      }
    } else if (p.waiting_since != emu::kTickMax) {  // no longer held back by credits
      links_[id].credit_wait += now - p.waiting_since;
      p.waiting_since = emu::kTickMax;
    }
  }
  if (soonest != InputBuffers::kUnknown) schedule_wake(id, soonest);
}

void PacketNetwork::lost_arbitration(const Packet& p) {
  // A separable allocator's input arbiter (BookSim's input-first, one iteration) picked this
  // packet's channel for the cycle, its output went to another input, and the input sends
  // nothing in that cycle, though another of its channels could have gone elsewhere. A packet
  // that was not ready to go (its channel turning round, its input's port busy) did not ask.
  if (cycle_ == 0) return;
  const emu::Tick now = sched_.now();
  if (p.held_link == granted_input_) return;
  if (buffers_.clear_at(p.held_channel) + turnaround_ > now) return;
  if (port_free(p.held_link, now, cycle_) > now) return;
  book_port(p.held_link, now, now + cycle_);
}

emu::Tick PacketNetwork::port_free(LinkId input, emu::Tick start, emu::Tick time) {
  // Crossings booked ahead can leave gaps a later one fits in, so the port keeps each crossing
  // until it is over, not only when the last one ends.
  Port& port = ports_[input];
  if (start >= port.last_until) return start;  // after every crossing booked
  const emu::Tick now = sched_.now();
  std::erase_if(port.busy, [now](const Crossing& c) { return c.until <= now; });
  std::uint32_t overlapping = 0;
  emu::Tick soonest = emu::kTickMax;
  for (const Crossing& c : port.busy)
    if (c.from < start + time && start < c.until) {
      ++overlapping;
      soonest = std::min(soonest, c.until);
    }
  return overlapping < speedup_ ? start : soonest;
}

void PacketNetwork::book_port(LinkId input, emu::Tick from, emu::Tick until) {
  Port& port = ports_[input];
  if (port.last_until <= sched_.now()) port.busy.clear();  // every crossing booked is over
  port.busy.push_back({from, until});
  port.last_until = std::max(port.last_until, until);
}

void PacketNetwork::order_waiting(LinkId id, std::vector<Waiting>& list) const {
  // Packets of the same input keep the order they began to wait in. A packet not in a router
  // buffer (it books the link ahead) goes after those that are.
  const auto key = [&](const Waiting& e) -> std::uint64_t {
    const Packet& p = *e.packet;
    if (p.held_channel == InputBuffers::kNone) return ~std::uint64_t{0};
    if (allocation_ == RouterAllocation::age) return p.transfer->born;
    // round_robin: the inputs after the last one granted first, in link order, wrapping round
    const LinkId last = last_input_[id];
    return p.held_link > last ? p.held_link - last : p.held_link + links_.size() - last;
  };
  std::stable_sort(list.begin(), list.end(),
                   [&](const Waiting& a, const Waiting& b) { return key(a) < key(b); });
}

bool PacketNetwork::move_on(Packet& p, emu::Tick end) {
  const emu::Tick arrival = end + p.route.latency;
  if (p.route.last && !dram_.empty() && links_[p.route.link].kind == LinkKind::hbm_channel) {
    // A write's data is at its channel's controller once its tail has crossed.
    sched_.schedule_at(
        end, [this, &p] { to_dram(p); }, 0, "hbm request");
    return false;
  }
  if (p.route.last) {
    sched_.schedule_at(
        arrival, [this, &p] { delivered(p); }, 0, "noc delivery");
    return false;
  }
  topology_.next(p.route);
  p.tail = arrival;
  return true;
}

void PacketNetwork::to_dram(Packet& p) {
  const std::uint32_t c = dram_of_link_[p.route.link];
  const bool write = p.transfer->kind == TransferKind::write;
  dram_[c].push({p.dram_addr(), p.bytes, write, sched_.now(), &p});
  dram_schedule(c);
}

void PacketNetwork::dram_schedule(std::uint32_t c) {
  // The controller decides when its bus frees, after the requests of that instant have come.
  const emu::Tick at = std::max(sched_.now(), dram_[c].bus_free());
  if (at >= dram_wake_[c]) return;
  dram_wake_[c] = at;
  sched_.schedule_at(
      at,
      [this, c] {
        if (dram_wake_[c] != sched_.now()) return;  // replaced by an earlier one
        dram_wake_[c] = emu::kTickMax;
        dram_serve(c);
      },
      1, "hbm controller");
}

void PacketNetwork::dram_serve(std::uint32_t c) {
  DramChannel& ch = dram_[c];
  if (ch.empty()) return;
  const DramChannel::Served s = ch.serve(sched_.now());
  Packet& p = *static_cast<Packet*>(s.tag);
  if (!ch.empty()) dram_schedule(c);
  if (p.transfer->kind == TransferKind::write) {
    sched_.schedule_at(
        s.end + dram_latency_, [this, &p] { delivered(p); }, 0, "noc delivery");
    return;
  }
  // A read's data leaves the channel link as the bus delivers it: the link's statistics count
  // its serialisation, and its head goes on once the packet's last serialisation has begun.
  const LinkId id = p.route.link;
  Link& l = links_[id];
  const emu::Tick ser =
      p.bytes == packet_bytes_ ? l.full_packet_time : l.bandwidth.transfer_time(p.bytes);
  const emu::Tick start = std::max(s.start, s.end > ser ? s.end - ser : 0);
  l.free_at = std::max(l.free_at, s.end);
  l.busy += ser;
  l.bytes += p.bytes;
  ++l.packets;
  ++packet_hops_;
  if (tracer_.on()) tracer_.busy(id, start, s.end, p.bytes, *p.transfer);
  const emu::Tick lat = p.route.latency;
  if (move_on(p, s.end)) set_out(p, start + lat);
}

std::optional<DramStats> PacketNetwork::dram_stats() const {
  if (dram_.empty()) return std::nullopt;
  DramStats total;
  for (const DramChannel& ch : dram_) total += ch.stats();
  return total;
}

void PacketNetwork::reset_dram_stats() {
  for (DramChannel& ch : dram_) ch.reset_stats();
}

void PacketNetwork::respond(Packet& p) {
  // From the controller's router back to the PE, as a read's data goes (the channel itself,
  // the DRAM's data bus, is not crossed).
  const Link& channel = links_[p.route.link];
  const Transfer& t = *p.transfer;
  p.response = true;
  p.bytes = response_bytes_;
  p.route = topology_.start_memory_to_pe(channel.owner, channel.from, t.pe);
  const emu::Tick lat = p.route.latency;
  topology_.next(p.route);
  p.tail = sched_.now() + lat;
  set_out(p, sched_.now() + lat);
}

void PacketNetwork::delivered(Packet& p) {
  Transfer& t = *p.transfer;
  if (t.acknowledged && !p.response) {
    t.delivered += p.bytes;
    respond(p);
    return;
  }
  if (!p.response) t.delivered += p.bytes;
  --t.in_flight;
  p.next = free_packets_;
  free_packets_ = &p;
  if (uses_dma_window(t.kind)) {
    dma_[t.pe].delivered();
    pump(t.pe);
  }
  if (t.issued < t.bytes || t.in_flight != 0) return;
  complete(t);
}

PacketNetwork::Packet* PacketNetwork::new_packet() {
  Packet* p = free_packets_;
  if (p) {
    free_packets_ = static_cast<Packet*>(p->next);
  } else {
    p = &packet_store_.emplace_back();
  }
  return p;
}

void PacketNetwork::forget_in_flight() {
  for (DmaEngine& d : dma_) d.clear();
  for (Waiters& w : waiters_) w = Waiters{};
  std::fill(link_waiters_.begin(), link_waiters_.end(), 0);
  for (Port& port : ports_) port = Port{};
  std::fill(listed_.begin(), listed_.end(), 0);
  pending_.clear();
  requesting_ = false;
  for (DramChannel& ch : dram_) ch.drop_requests();
  std::fill(dram_wake_.begin(), dram_wake_.end(), emu::kTickMax);
  free_packets_ = nullptr;
  for (Packet& p : packet_store_) {
    p.next = free_packets_;
    free_packets_ = &p;
  }
}

}  // namespace cubesim::components
