#include "triton_emu/ops/channels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "components/topology/graph.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::detail {

using components::SlotMemory;

Messages::Messages(components::System& sys,
                   std::function<std::uint64_t(std::uint32_t, std::uint64_t)> alloc_hbm)
    : sys_(sys), cfg_(sys.config().messages), alloc_hbm_(std::move(alloc_hbm)) {
  if (cfg_.memory == SlotMemory::cube_sram)
    cube_sram_.assign(sys.config().total_cubes(), components::Sram(cfg_.cube_sram_bytes));
}

void Messages::begin(const std::int64_t grid[3], const std::vector<PeState*>& programs) {
  end();
  std::copy(grid, grid + 3, grid_);
  programs_ = programs;
  program_of_pe_.assign(sys_.total_pes(), -1);
  for (std::size_t i = 0; i < programs.size(); ++i)
    program_of_pe_[programs[i]->hw.global_pe()] = static_cast<std::int64_t>(i);
  blocked_.assign(programs.size(), Blocked{});
  last_used_.assign(programs.size(), {});
}

void Messages::end() {
  for (auto& [pe, bytes] : pe_sram_taken_) pe->hw.sram().free(bytes);
  for (auto& [cube, bytes] : cube_sram_taken_) cube_sram_[cube].free(bytes);
  pe_sram_taken_.clear();
  cube_sram_taken_.clear();
  channels_.clear();
  channel_of_.clear();
  blocked_.assign(blocked_.size(), Blocked{});
  last_used_.assign(last_used_.size(), {});
}

const std::string& Messages::pe_name(std::uint32_t program) const {
  return programs_[program]->name;
}

std::uint32_t Messages::pe_of(std::uint32_t program) const {
  return programs_[program]->hw.global_pe();
}

std::string Messages::leftovers() const {
  std::string out;
  for (const Channel& c : channels_) {
    std::uint64_t unread = 0;
    for (const Entry& e : c.entries) unread += e.sent && !e.read;
    if (unread == 0) continue;
    out += fmt::format("\n  {} sent {} message{} that {} never received (channel {})",
                       pe_name(c.from), unread, unread == 1 ? "" : "s", pe_name(c.to), c.name);
  }
  if (out.empty()) return out;
  return "messages were sent and never received:" + out +
         "\nEvery tl.send needs a tl.recv of the same shape and dtype on the receiving program.";
}

std::string Messages::CreditGate::describe() const {
  return fmt::format(
      "a free slot of channel {} ({} of {} slots full: sent, not yet received "
      "and credited back)",
      name(), slots_ - credits_, slots_);
}

std::map<std::string, std::string> Messages::blocked_by_pe() const {
  std::map<std::string, std::string> out;
  for (std::size_t p = 0; p < blocked_.size(); ++p) {
    const Blocked& b = blocked_[p];
    if (!b.on) continue;
    const Channel& c = channels_[b.channel];
    out[pe_name(static_cast<std::uint32_t>(p))] =
        b.sending ? fmt::format("waits to send to {}: all {} slots of channel {} are full",
                                pe_name(c.to), c.slots, c.name)
                  : fmt::format(
                        "waits to receive from {} on channel {}: message {} has not "
                        "been sent",
                        pe_name(c.from), c.name, c.sent + 1);
  }
  return out;
}

std::vector<std::string> Messages::blocked_cycles() const {
  // Each blocked program waits for one other: a sender for its receiver to free a slot, a
  // receiver for its sender to send. Following the waits from every program finds each cycle
  // once: a walk stops at the first program an earlier walk (or this one) visited.
  const std::size_t n = blocked_.size();
  std::vector<std::int64_t> waits_for(n, -1);
  for (std::size_t p = 0; p < n; ++p)
    if (blocked_[p].on) {
      const Channel& c = channels_[blocked_[p].channel];
      waits_for[p] = blocked_[p].sending ? c.to : c.from;
    }
  std::vector<std::size_t> walk_of(n, 0);  // 0: not visited; else the walk (1-based)
  std::vector<std::string> cycles;
  for (std::size_t start = 0; start < n; ++start) {
    std::int64_t p = static_cast<std::int64_t>(start);
    while (p >= 0 && walk_of[static_cast<std::size_t>(p)] == 0) {
      walk_of[static_cast<std::size_t>(p)] = start + 1;
      p = waits_for[static_cast<std::size_t>(p)];
    }
    if (p < 0 || walk_of[static_cast<std::size_t>(p)] != start + 1) continue;
    std::string cycle = pe_name(static_cast<std::uint32_t>(p));
    for (std::int64_t q = waits_for[static_cast<std::size_t>(p)];;
         q = waits_for[static_cast<std::size_t>(q)]) {
      cycle += " -> " + pe_name(static_cast<std::uint32_t>(q));
      if (q == p) break;
    }
    cycles.push_back(std::move(cycle));
  }
  return cycles;
}

std::uint32_t Messages::resolve(Program& caller, std::uint32_t self, const tl::Peer& peer,
                                const char* call) const {
  const components::SystemConfig& c = sys_.config();
  const components::PeCoord me = programs_[self]->coord;
  components::PeCoord at = me;
  const auto none = [&](const std::string& why) {
    caller.fault(fmt::format("{}({}) from {}: {}", call, peer.str(), pe_name(self), why));
  };
  switch (peer.kind) {
    case tl::Peer::Kind::north:
    case tl::Peer::Kind::south:
    case tl::Peer::Kind::east:
    case tl::Peer::Kind::west: {
      const std::uint32_t mx = c.cube.noc.mesh_x, my = c.cube.noc.mesh_y;
      std::int64_t x = me.pe % mx, y = me.pe / mx;
      x += peer.kind == tl::Peer::Kind::east ? 1 : peer.kind == tl::Peer::Kind::west ? -1 : 0;
      y += peer.kind == tl::Peer::Kind::south ? 1 : peer.kind == tl::Peer::Kind::north ? -1 : 0;
      if (x < 0 || y < 0 || x >= mx || y >= my)
        none(
            fmt::format("node ({}, {}) has no neighbour {} in the {}x{} mesh (north is y - 1, "
                        "west x - 1); send along a direction that stays inside the mesh",
                        me.pe % mx, me.pe / mx, peer.str(), mx, my));
      at.pe = static_cast<std::uint32_t>(y * mx + x);
      break;
    }
    case tl::Peer::Kind::ucie:
    case tl::Peer::Kind::inter_sip: {
      const bool ucie = peer.kind == tl::Peer::Kind::ucie;
      const components::Graph g =
          ucie ? components::Graph(c.ucie.topology, c.cubes_per_sip, c.ucie.mesh_x, c.ucie.mesh_y)
               : components::Graph(c.inter_sip.topology, c.sips, c.inter_sip.grid_x,
                                   c.inter_sip.grid_y);
      const std::uint32_t self_node = ucie ? me.cube : me.sip;
      const std::vector<std::uint32_t> n = g.neighbours(self_node);
      if (peer.index < 0 || peer.index >= static_cast<std::int64_t>(n.size()))
        none(fmt::format("{} {} has {} neighbour{} over {} links ({}, {}); k must be in [0, {})",
                         ucie ? "cube" : "SIP", self_node, n.size(), n.size() == 1 ? "" : "s",
                         ucie ? "UCIe" : "inter-SIP", to_string(g.kind()),
                         ucie ? "system.ucie.topology" : "system.inter_sip.topology", n.size()));
      (ucie ? at.cube : at.sip) = n[static_cast<std::size_t>(peer.index)];
      break;
    }
    case tl::Peer::Kind::program: {
      std::int64_t index = 0;
      for (int a = 2; a >= 0; --a) {
        if (peer.id[a] < 0 || peer.id[a] >= grid_[a])
          none(fmt::format("program_id({}) = {} is outside the launch grid [{}, {}, {}]", a,
                           peer.id[a], grid_[0], grid_[1], grid_[2]));
        index = index * grid_[a] + peer.id[a];
      }
      return static_cast<std::uint32_t>(index);
    }
  }
  const std::int64_t program = program_of_pe_[sys_.global_pe(at)];
  if (program < 0)
    none(fmt::format("{} runs no program of this launch (the launch grid is [{}, {}, {}])",
                     sys_.pe_name(sys_.global_pe(at)), grid_[0], grid_[1], grid_[2]));
  return static_cast<std::uint32_t>(program);
}

std::uint32_t Messages::channel(Program& caller, std::uint32_t from, std::uint32_t to) {
  const auto key = std::make_pair(from, to);
  if (const auto it = channel_of_.find(key); it != channel_of_.end()) return it->second;
  PeState& dst = *programs_[to];
  const std::string name = pe_name(from) + " -> " + pe_name(to);
  const components::ChannelClass kind =
      sys_.config().channel_class(pe_of(from), dst.hw.global_pe());
  components::MessageWindow w = cfg_.window(kind);
  if (slot_limit_ > 0) w.slots = std::min(w.slots, slot_limit_);
  const std::uint64_t bytes = w.bytes();
  const std::string fields =
      fmt::format("system.messages.{}.slots, slot_KiB", components::channel_class_name(kind));
  // The channel's slots are taken in the receiver's memory for the rest of the launch.
  switch (cfg_.memory) {
    case SlotMemory::pe_sram:
      if (!dst.hw.sram().allocate(bytes))
        caller.fault(fmt::format(
            "channel {}: its {} slots of {} bytes need {} bytes of {}'s SRAM "
            "and {} are free; use fewer or smaller slots ({}), fewer channels into the PE, or "
            "put the slots elsewhere (system.messages.memory)",
            name, w.slots, w.slot_bytes, bytes, dst.name, dst.hw.sram().available(), fields));
      pe_sram_taken_.emplace_back(&dst, bytes);
      break;
    case SlotMemory::cube_sram: {
      const std::uint32_t cube = dst.hw.global_pe() / sys_.config().cube.pes;
      if (!cube_sram_[cube].allocate(bytes))
        caller.fault(
            fmt::format("channel {}: its {} slots of {} bytes need {} bytes of the cube's "
                        "shared SRAM and {} of {} are free; use fewer or smaller slots ({}), or "
                        "raise system.messages.cube_sram.capacity_KiB",
                        name, w.slots, w.slot_bytes, bytes, cube_sram_[cube].available(),
                        cube_sram_[cube].capacity(), fields));
      cube_sram_taken_.emplace_back(cube, bytes);
      break;
    }
    case SlotMemory::hbm:
      break;
  }
  const auto id = static_cast<std::uint32_t>(channels_.size());
  Channel& c = channels_.emplace_back();
  c.from = from;
  c.to = to;
  c.kind = kind;
  c.slots = w.slots;
  c.slot_bytes = w.slot_bytes;
  c.credits = w.slots;
  c.name = name;
  c.gate = std::make_unique<CreditGate>(sys_.scheduler(), name, c.credits, w.slots);
  if (cfg_.memory == SlotMemory::hbm) {
    const auto& hbm = sys_.config().cube.hbm;
    c.slot_stride = components::hbm_slot_stride(hbm, w.slot_bytes, w.slots);
    const std::uint64_t span = (w.slots - 1) * c.slot_stride + w.slot_bytes;
    const auto pair = std::make_pair(pe_of(from), pe_of(to));
    auto it = hbm_slots_.find(pair);
    // A buffer made for fewer slots (a launch whose slots were limited) is not reused: the
    // channel gets one its slots fit.
    if (it == hbm_slots_.end() || it->second.bytes < span) {
      // Where slots are skewed (whole turns of the channel interleave, which buffers made one
      // after another would all begin on the same HBM channel), the n-th buffer on a cube
      // starts n interleave granules into a turn.
      const std::uint32_t cube = dst.hw.global_pe() / sys_.config().cube.pes;
      const std::uint64_t granule = std::max<std::uint64_t>(hbm.channel_interleave_bytes, 1);
      const std::uint32_t channels = std::max<std::uint32_t>(hbm.channels, 1);
      const std::uint64_t skew =
          w.slot_bytes % (granule * channels) == 0 ? hbm_buffers_[cube]++ % channels * granule : 0;
      const HbmSlots made{alloc_hbm_(cube, span + skew) + skew, span};
      it = hbm_slots_.insert_or_assign(pair, made).first;
    }
    c.slot_base = it->second.address;
  }
  channel_of_.emplace(key, id);
  return id;
}

std::uint32_t Messages::channel_used(Program& caller, std::uint32_t self, bool sending,
                                     std::uint32_t peer) {
  LastChannel& last = last_used_[self][sending ? 1 : 0];
  if (last.peer != peer)
    last = {peer, sending ? channel(caller, self, peer) : channel(caller, peer, self)};
  return last.id;
}

void Messages::send(Program& caller, std::uint32_t from, std::uint32_t to, const tl::Tile& tile,
                    LaunchState* trace) {
  const std::uint32_t id = channel_used(caller, from, true, to);
  Channel& c = channels_[id];
  const std::uint64_t bytes = tile.bytes();
  if (bytes > c.slot_bytes)
    caller.fault(
        fmt::format("send to {} over channel {}: a {} tile of shape {} is {} bytes, more "
                    "than a slot holds ({} bytes, system.messages.{}.slot_KiB); send it in "
                    "pieces or use larger slots",
                    pe_name(to), c.name, dtype_name(tile.dtype()), tile.shape().str(), bytes,
                    c.slot_bytes, components::channel_class_name(c.kind)));
  while (c.credits == 0) {
    blocked_[from] = {true, true, id};
    c.gate->wait();
    blocked_[from] = {};
  }
  --c.credits;
  const std::uint64_t seq = c.sent++;
  Entry& e = c.entry(id, seq);
  e.sent = true;
  e.bytes = bytes;
  e.shape = tile.shape();
  e.dtype = tile.dtype();
  if (const std::byte* v = tile.raw(); v != nullptr) e.payload.assign(v, v + bytes);
  if (e.receipt) e.receipt->error = mismatch(e, *e.receipt, c);
  auto done = [this, &e] { arrived(e); };
  if (trace == nullptr) {
    post(from, to, c, seq, bytes, std::move(done));
    return;
  }
  // Traced: the transfer is a slice on one of the sender's DMA lanes, from the send to the
  // payload's arrival, with flow arrows through the links it took.
  PeState& pe = *programs_[from];
  const int lane = trace->take_copy_lane(pe);
  const std::uint64_t flow = trace->begin_trace_flow(pe);
  const emu::Tick issued = sys_.scheduler().now();
  post(from, to, c, seq, bytes, [this, &pe, trace, lane, flow, issued, id, to, seq, bytes, done] {
    done();
    trace->trace_copy(pe, lane, "send", issued, sys_.scheduler().now(),
                      fmt::format(R"({{"to":"{}","bytes":{},"channel":"{}","seq":{}}})",
                                  pe_name(to), bytes, channels_[id].name, seq),
                      flow);
    trace->release_copy_lane(pe, lane);
  });
  trace->end_trace_flow(flow);
}

void Messages::post(std::uint32_t from, std::uint32_t to, const Channel& c, std::uint64_t seq,
                    std::uint64_t bytes, std::function<void()> done) {
  if (cfg_.memory == SlotMemory::hbm)
    sys_.network().write_posted(pe_of(from), c.slot_base + (seq % c.slots) * c.slot_stride, bytes,
                                std::move(done));
  else
    sys_.network().send(pe_of(from), pe_of(to), bytes, std::move(done));
}

std::string Messages::mismatch(const Entry& e, const Receipt& r, const Channel& c) {
  if (e.shape == r.tile.shape() && e.dtype == r.tile.dtype()) return {};
  return fmt::format(
      "the message on channel {} is a {} tile of shape {}, but the recv asked "
      "for a {} tile of shape {}; recv with the shape and dtype that was sent",
      c.name, dtype_name(e.dtype), e.shape.str(), dtype_name(r.tile.dtype()), r.tile.shape().str());
}

void Messages::arrived(Entry& e) {
  const emu::Tick write = cfg_.memory == SlotMemory::pe_sram     ? cfg_.pe_sram_latency
                          : cfg_.memory == SlotMemory::cube_sram ? cfg_.cube_sram_latency
                                                                 : 0;
  e.arrived = true;
  e.visible_at = sys_.scheduler().now() + write;
  if (e.receipt) read_out(e);
}

std::shared_ptr<Receipt> Messages::recv(Program& caller, std::uint32_t to, std::uint32_t from,
                                        tl::Tile tile) {
  const std::uint32_t id = channel_used(caller, to, false, from);
  Channel& c = channels_[id];
  if (tile.bytes() > c.slot_bytes)
    caller.fault(
        fmt::format("recv from {} over channel {}: a {} tile of shape {} is {} bytes, more "
                    "than a slot holds ({} bytes, system.messages.{}.slot_KiB); no such "
                    "message can be sent",
                    pe_name(from), c.name, dtype_name(tile.dtype()), tile.shape().str(),
                    tile.bytes(), c.slot_bytes, components::channel_class_name(c.kind)));
  const std::uint64_t seq = c.posted++;
  auto r = std::make_shared<Receipt>(sys_.scheduler(), c.name, seq);
  r->tile = std::move(tile);
  r->channel = id;
  r->from = from;
  r->seq = seq;
  Entry& e = c.entry(id, seq);
  e.receipt = r;
  if (e.sent) r->error = mismatch(e, *r, c);
  if (e.arrived) read_out(e);
  return r;
}

void Messages::read_out(Entry& e) {
  emu::Scheduler& sched = sys_.scheduler();
  const emu::Tick begin = std::max(sched.now(), e.visible_at);
  if (!e.receipt->error.empty()) {  // wait() faults once the message is there; the slot stays
    if (begin == sched.now())
      e.receipt->done.fire();
    else
      sched.schedule_at(
          begin, [&e] { e.receipt->done.fire(); }, 0, "message slot write");
    return;
  }
  const auto done = [this, &e] { was_read(e); };
  if (cfg_.memory == SlotMemory::hbm) {  // visible on arrival: no write latency to wait for
    const Channel& c = channels_[e.channel];
    sys_.network().read(pe_of(c.to), c.slot_base + (e.seq % c.slots) * c.slot_stride, e.bytes,
                        done);
    return;
  }
  const bool pe = cfg_.memory == SlotMemory::pe_sram;
  const emu::Tick t =
      (pe ? cfg_.pe_sram_latency : cfg_.cube_sram_latency) +
      (pe ? cfg_.pe_sram_bandwidth : cfg_.cube_sram_bandwidth).transfer_time(e.bytes);
  sched.schedule_at(begin + t, done, 0, "message slot read");
}

void Messages::was_read(Entry& e) {
  const std::uint32_t ch = e.channel;
  Channel& c = channels_[ch];
  e.read = true;
  e.receipt->values = std::move(e.payload);
  e.receipt->done.fire();
  e.receipt.reset();
  while (!c.entries.empty() && c.entries.front().read) {
    c.entries.pop_front();
    ++c.first;
  }
  // The slot is free: its credit goes back to the sender over the network.
  sys_.network().send(pe_of(c.to), pe_of(c.from), cfg_.credit_bytes, [this, ch] {
    Channel& k = channels_[ch];
    ++k.credits;
    k.gate->open();
  });
}

std::string ReceiptDone::describe() const {
  return fmt::format("completion 'message {} of channel {}' ({} of 1 arrivals)", seq_ + 1, channel_,
                     done_ ? 1 : 0);
}

void Messages::wait(std::uint32_t self, Receipt& r) {
  if (r.done.done()) return;
  blocked_[self] = {true, false, r.channel};
  r.done.wait();
  blocked_[self] = {};
}

}  // namespace cubesim::detail
