#include "components/collectives/alpha_beta_model.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "emu/event_queue.hpp"

namespace cubesim::components::collectives {

namespace {

const emu::Bandwidth kNone = emu::Bandwidth::from_bytes_per_s(1);  // until set

// The model's state: programs going through their actions in time order, channels with the
// arrival of each message in flight and the return of each credit.
class Model {
 public:
  Model(const System& system, const ModelArgs& a)
      : system_(system), a_(a), m_(system.config().messages) {
    const std::int64_t n = a.schedule->programs();
    programs_.resize(static_cast<std::size_t>(n));
    free_.assign(system.network().topology().links().size(), 0);
    packet_bytes_ = system.config().cube.noc.packet_bytes;
    const bool pe_slots = m_.memory == components::SlotMemory::pe_sram;
    hbm_slots_ = m_.memory == components::SlotMemory::hbm;
    // HBM slots: a message is there once its write lands, and read over the network.
    slot_latency_ = hbm_slots_ ? 0 : pe_slots ? m_.pe_sram_latency : m_.cube_sram_latency;
    slot_bw_ = pe_slots ? m_.pe_sram_bandwidth : m_.cube_sram_bandwidth;
    for (std::int64_t g = 0; g < n; ++g) {
      Program& p = programs_[static_cast<std::size_t>(g)];
      p.segments = a.schedule->segments(g);
      p.steps = a.schedule->steps(g);
      if (a.buffer == Buffer::hbm) {
        // Nothing is held at first; a segment is stored once its last step wrote it.
        p.held.resize(p.segments.size());
        for (std::size_t s = 0; s < p.segments.size(); ++s)
          p.held[s].assign(static_cast<std::size_t>(pieces_of(p.segments[s].elems, a.piece)), 0);
        p.last_write = LastUses(*a.schedule, g, p.steps, p.segments.size()).write;
        // What is never written was copied from input to output before the clock, and kept.
        for (std::size_t s = 0; s < p.segments.size(); ++s)
          if (p.last_write[s] < 0 && p.segments[s].in_at >= 0 && p.segments[s].out_at >= 0)
            std::fill(p.held[s].begin(), p.held[s].end(), 1);
      }
      push(0, What::act, g);
    }
  }

  emu::Tick run() {
    while (!events_.empty()) {
      const emu::Tick at = events_.top_time();
      const auto slot = reinterpret_cast<std::uintptr_t>(events_.top_payload()) - 1;
      events_.pop();
      const Event e = events_of_[slot];
      free_events_.push_back(static_cast<std::uint32_t>(slot));
      handle(at, e);
    }
    emu::Tick end = 0;
    for (std::size_t g = 0; g < programs_.size(); ++g) {
      if (!programs_[g].done)
        throw std::logic_error("collective model: program " + std::to_string(g) +
                               " never finished (the schedule deadlocks)");
      end = std::max(end, programs_[g].t);
    }
    return end;
  }

 private:
  struct Path {
    emu::Tick pre_delay = 0;                      // a read's request and the HBM access
    emu::Tick before_last = 0, last_latency = 0;  // hop latencies up to / of the last link
    // The first (the sender's injection port, or the HBM channel a read comes from), last
    // (the receiver's ejection port, or the channel a write goes to) and slowest link.
    std::size_t first = 0, last = 0;
    emu::Bandwidth port = kNone, eject = kNone, slowest = kNone;
    emu::Tick edge_last = 0;  // the last arrival over this path
  };
  struct Channel {
    std::uint32_t from = 0, to = 0;  // global PEs
    Path message, credit;
    std::vector<emu::Tick> arrival, credit_back;  // by sequence number modulo the slots
    std::uint64_t sent = 0, arrived = 0, read = 0, credited = 0;
    std::int64_t sender = -1, receiver = -1;  // parked: waiting for a credit, a message
    std::uint64_t slot_base = 0;              // slots in HBM: their address
  };
  struct Program {
    std::vector<Segment> segments;
    std::int64_t steps = 0, k = -1;
    Step step;
    std::vector<Action> actions;
    std::size_t next = 0;
    emu::Tick t = 0;
    bool done = false;
    // buffer=hbm: which pieces are held in SRAM, the last step writing each segment, and the
    // writes into each piece still to come in this step (as the executor counts them).
    std::vector<std::vector<char>> held;
    std::vector<std::int64_t> last_write;
    PieceWrites writes;
    // The channel it last sent on and received on: a program talking to one peer at a time (a
    // ring) finds its channel without the map.
    struct LastChannel {
      std::int64_t peer = -1;
      std::size_t id = 0;
    };
    LastChannel sent_on, received_on;
  };
  // What happens at a time: a program acts; a read slot's credit leaves its receiver; the
  // head of a message (or of a credit) reaches the last link of its route.
  // With slots in HBM a message's arrival is known when it leaves (its write is served whole):
  // it lands then.
  enum class What : std::uint8_t { act, credit_leaves, message_head, credit_head, message_landed };
  struct Event {
    What what;
    std::int64_t id;      // the program, or the channel
    emu::Tick leave = 0;  // heads: when the sender's port sent it
    std::uint64_t bytes = 0;
  };

  // Events run in (time, push order). The queue is the scheduler's ladder queue: it holds
  // (time, order, payload), the payload naming the event's slot in events_of_.
  void push(emu::Tick at, What what, std::int64_t id, emu::Tick leave = 0,
            std::uint64_t bytes = 0) {
    std::uint32_t slot = 0;
    if (free_events_.empty()) {
      slot = static_cast<std::uint32_t>(events_of_.size());
      events_of_.emplace_back();
    } else {
      slot = free_events_.back();
      free_events_.pop_back();
    }
    events_of_[slot] = {what, id, leave, bytes};
    events_.push(at, 0, reinterpret_cast<void*>(std::uintptr_t{slot} + 1));
  }

  std::uint32_t global_pe(std::int64_t g) const { return a_.pe[static_cast<std::size_t>(g)]; }

  Path path(std::uint32_t from, std::uint32_t to) const {
    return path(system_.network().topology().pe_to_pe(from, to));
  }
  Path path(const components::Route& route) const {
    const auto& links = system_.network().topology().links();
    Path p;
    p.pre_delay = route.pre_delay;
    p.first = route.links.front();
    p.last = route.links.back();
    p.port = links[route.links.front()].bandwidth;
    p.eject = links[route.links.back()].bandwidth;
    p.slowest = p.port;
    for (std::size_t i = 0; i < route.links.size(); ++i) {
      if (links[route.links[i]].bandwidth.bytes_per_s() < p.slowest.bytes_per_s())
        p.slowest = links[route.links[i]].bandwidth;
      (i + 1 < route.links.size() ? p.before_last : p.last_latency) += route.latency[i];
    }
    return p;
  }

  // The channel from -> to, through `last` when it is the one last used with `peer`.
  std::size_t channel(Program::LastChannel& last, std::int64_t peer, std::int64_t from,
                      std::int64_t to) {
    if (last.peer != peer) last = {peer, channel(from, to)};
    return last.id;
  }
  std::size_t channel(std::int64_t from, std::int64_t to) {
    const auto key =
        static_cast<std::uint64_t>(from * static_cast<std::int64_t>(programs_.size()) + to);
    const auto [it, fresh] = channel_of_.try_emplace(key, channels_.size());
    if (!fresh) return it->second;
    const std::size_t ch = it->second;
    Channel c;
    c.from = global_pe(from);
    c.to = global_pe(to);
    c.message = path(c.from, c.to);
    c.credit = path(c.to, c.from);
    c.arrival.assign(m_.slots, 0);
    c.credit_back.assign(m_.slots, 0);
    if (hbm_slots_) {
      const auto base = a_.hbm_slots ? a_.hbm_slots(c.from, c.to) : std::nullopt;
      if (!base)
        throw std::logic_error("collective model: the launch made no HBM slots for channel " +
                               std::to_string(from) + " -> " + std::to_string(to));
      c.slot_base = *base;
    }
    channels_.push_back(std::move(c));
    return ch;
  }

  // `bytes` leave the path's first link as soon as it is free, from `ready` (and a read's
  // request and access) on; when will the head reach the route's last link.
  emu::Tick leave(const Path& p, std::uint64_t bytes, emu::Tick ready, emu::Tick* left) {
    *left = std::max(ready + p.pre_delay, free_[p.first]);
    free_[p.first] = *left + p.port.transfer_time(bytes);
    return *left + p.before_last;
  }
  // The head is at the last link (the receiver's ejection port, or the HBM channel written)
  // at `head`: when the whole of it has arrived, behind what else came through that link and
  // over the same path.
  emu::Tick arrive(Path& p, std::uint64_t bytes, emu::Tick left, emu::Tick head) {
    const emu::Tick start = std::max(head, free_[p.last]);
    const emu::Tick through = std::max(start + p.eject.transfer_time(bytes),
                                       left + p.before_last + p.slowest.transfer_time(bytes));
    free_[p.last] = through;
    const emu::Tick at =
        std::max(through + p.last_latency, p.edge_last + p.slowest.transfer_time(bytes));
    p.edge_last = at;
    return at;
  }

  // Program g loads (or stores) `bytes` at element `at` of its input (output) from `ready`:
  // when the last packet has arrived (or landed).
  emu::Tick memory(std::int64_t g, std::int64_t at, std::uint64_t bytes, bool write,
                   emu::Tick ready) {
    const auto& buffers = write ? a_.out : a_.in;
    return access(global_pe(g),
                  buffers[static_cast<std::size_t>(g)] + static_cast<std::uint64_t>(at) * 4, bytes,
                  write, ready);
  }
  // PE `pe` reads (or writes) `bytes` of HBM at `addr` from `ready`: when the last packet has
  // arrived (or landed). The access is cut into packets as the network cuts it, each over its
  // own channel's path; all are issued at once.
  emu::Tick access(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, bool write,
                   emu::Tick ready) {
    const auto& map = system_.address_map();
    emu::Tick done = ready;
    while (bytes > 0) {
      const auto piece = map.first_piece(addr, bytes, packet_bytes_);
      const std::uint32_t channel = map.channel(piece.loc);
      const auto key = std::make_tuple(pe, piece.loc.global_cube, channel, write);
      auto it = memory_paths_.find(key);
      if (it == memory_paths_.end()) {
        const auto& topo = system_.network().topology();
        it = memory_paths_
                 .emplace(key, path(write ? topo.pe_to_memory(pe, piece.loc.global_cube, channel)
                                          : topo.memory_to_pe(piece.loc.global_cube, channel, pe)))
                 .first;
      }
      emu::Tick left = 0;
      const emu::Tick head = leave(it->second, piece.len, ready, &left);
      done = std::max(done, arrive(it->second, piece.len, left, head));
      addr += piece.len;
      bytes -= piece.len;
    }
    return done;
  }
  // Message `seq`'s slot of channel c (slots in HBM).
  std::uint64_t slot_address(const Channel& c, std::uint64_t seq) const {
    return c.slot_base + (seq % m_.slots) * m_.slot_bytes;
  }

  void wake(std::int64_t& parked) {
    if (parked < 0) return;
    const std::int64_t g = parked;
    parked = -1;
    push(programs_[static_cast<std::size_t>(g)].t, What::act, g);
  }

  void handle(emu::Tick at, const Event& e) {
    const auto ch = static_cast<std::size_t>(e.id);
    switch (e.what) {
      case What::act:
        act(at, e.id);
        return;
      case What::credit_leaves: {
        Channel& c = channels_[ch];
        emu::Tick left = 0;
        const emu::Tick head = leave(c.credit, m_.credit_bytes, at, &left);
        push(head, What::credit_head, e.id, left, m_.credit_bytes);
        return;
      }
      case What::credit_head: {
        Channel& c = channels_[ch];
        c.credit_back[c.credited++ % m_.slots] = arrive(c.credit, e.bytes, e.leave, at);
        wake(c.sender);
        return;
      }
      case What::message_landed: {
        Channel& c = channels_[ch];
        c.arrival[c.arrived++ % m_.slots] = at;
        wake(c.receiver);
        return;
      }
      case What::message_head: {
        Channel& c = channels_[ch];
        c.arrival[c.arrived++ % m_.slots] = arrive(c.message, e.bytes, e.leave, at);
        wake(c.receiver);
        return;
      }
    }
  }

  // Runs program g's actions from time `at` until one must wait.
  // Runs program g's actions from time `at` until one must wait.
  void act(emu::Tick at, std::int64_t g) {
    Program& p = programs_[static_cast<std::size_t>(g)];
    for (;;) {
      if (p.next == p.actions.size()) {
        if (++p.k == p.steps) {
          p.done = true;
          return;
        }
        a_.schedule->step(g, p.k, p.step);
        step_actions(p.segments, p.step, a_.piece, a_.window, p.actions);
        p.next = 0;
        if (!p.held.empty()) p.writes.count(p.step, p.actions);
        continue;
      }
      const Action& action = p.actions[p.next];
      if (!(action.send ? send(at, g, p, action) : receive(at, g, p, action))) return;
    }
  }

  // Whether program g, at `at`, is busy until `until`: then it acts again at that time.
  bool busy(emu::Tick until, emu::Tick at, std::int64_t g) {
    if (until <= at) return false;
    push(until, What::act, g);
    return true;
  }
  std::uint64_t bytes_of(const Program& p, const Action& action) const {
    const Op& op = p.step[action.op];
    const std::int64_t elems = std::min(
        a_.piece, p.segments[static_cast<std::size_t>(op.segment)].elems - action.piece * a_.piece);
    return static_cast<std::uint64_t>(elems) * 4;
  }

  // Program g's send `action` at `at`: whether it went (false: the program waits for an event).
  bool send(emu::Tick at, std::int64_t g, Program& p, const Action& action) {
    const Op& op = p.step[action.op];
    const std::uint64_t bytes = bytes_of(p, action);
    const auto seg = static_cast<std::size_t>(op.segment);
    const auto piece = static_cast<std::size_t>(action.piece);
    if (!p.held.empty() && !p.held[seg][piece]) {  // buffer=hbm: load it first
      p.held[seg][piece] = 1;
      p.t = memory(g, p.segments[seg].in_at + action.piece * a_.piece, bytes, false, p.t);
      if (busy(p.t, at, g)) return false;
    }
    const std::size_t ch = channel(p.sent_on, op.peer, g, op.peer);
    Channel& c = channels_[ch];
    if (c.sent >= m_.slots) {  // the credit of the message `slots` before this one
      if (c.credited <= c.sent - m_.slots) {
        c.sender = g;
        return false;
      }
      p.t = std::max(p.t, c.credit_back[(c.sent - m_.slots) % m_.slots]);
      if (busy(p.t, at, g)) return false;
    }
    if (hbm_slots_) {  // a write into the slot's HBM address
      const emu::Tick landed = access(c.from, slot_address(c, c.sent), bytes, true, p.t);
      ++c.sent;
      push(landed, What::message_landed, static_cast<std::int64_t>(ch));
    } else {
      ++c.sent;
      emu::Tick left = 0;
      const emu::Tick head = leave(c.message, bytes, p.t, &left);
      push(head, What::message_head, static_cast<std::int64_t>(ch), left, bytes);
    }
    ++p.next;
    return true;
  }

  // Program g's receive `action` at `at`: whether it went (false: the program waits).
  bool receive(emu::Tick at, std::int64_t g, Program& p, const Action& action) {
    const Op& op = p.step[action.op];
    const std::uint64_t bytes = bytes_of(p, action);
    const std::size_t ch = channel(p.received_on, op.peer, op.peer, g);
    Channel& c = channels_[ch];
    if (c.arrived <= c.read) {
      c.receiver = g;
      return false;
    }
    const emu::Tick begin = std::max(p.t, c.arrival[c.read % m_.slots] + slot_latency_);
    if (busy(begin, at, g)) return false;
    const emu::Tick read = hbm_slots_ ? access(c.to, slot_address(c, c.read), bytes, false, begin)
                                      : begin + slot_latency_ + slot_bw_.transfer_time(bytes);
    ++c.read;
    push(read, What::credit_leaves, static_cast<std::int64_t>(ch));
    p.t = read;
    if (p.held.empty()) {
      if (op.kind == OpKind::recv_add) p.t += system_.vector_unit().time(bytes / 4);
    } else {
      hold(g, p, action, bytes);
    }
    ++p.next;
    return !busy(p.t, at, g);
  }

  // buffer=hbm, as the executor does it: the value added to is loaded after the receive, and a
  // piece is stored after the last write of the last step writing it.
  void hold(std::int64_t g, Program& p, const Action& action, std::uint64_t bytes) {
    const Op& op = p.step[action.op];
    const auto seg = static_cast<std::size_t>(op.segment);
    const auto piece = static_cast<std::size_t>(action.piece);
    const Segment& sg = p.segments[seg];
    if (op.kind == OpKind::recv_add && (p.held[seg][piece] || sg.in_at >= 0)) {
      if (!p.held[seg][piece])
        p.t = memory(g, sg.in_at + action.piece * a_.piece, bytes, false, p.t);
      p.t += system_.vector_unit().time(bytes / 4);
    }
    p.held[seg][piece] = 1;
    if (p.writes.done(op.segment, action.piece) && p.last_write[seg] == p.k && sg.out_at >= 0)
      p.t = memory(g, sg.out_at + action.piece * a_.piece, bytes, true, p.t);
  }

  const System& system_;
  const ModelArgs& a_;
  const components::MessagesConfig& m_;
  bool hbm_slots_ = false;
  emu::Tick slot_latency_ = 0;
  emu::Bandwidth slot_bw_ = kNone;
  std::vector<Program> programs_;
  std::vector<Channel> channels_;
  std::unordered_map<std::uint64_t, std::size_t> channel_of_;  // sender * programs + receiver
  std::vector<emu::Tick> free_;  // per link: when it is free to start the next message
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, bool>, Path> memory_paths_;
  std::uint64_t packet_bytes_ = 0;
  emu::EventQueue events_;
  std::vector<Event> events_of_;
  std::vector<std::uint32_t> free_events_;
};

}  // namespace

emu::Tick alpha_beta_time(const System& system, const ModelArgs& args) {
  return Model(system, args).run();
}

}  // namespace cubesim::components::collectives
