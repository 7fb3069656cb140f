#include "components/collectives/alpha_beta_model.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "components/network/link_calendar.hpp"
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
    free_.resize(system.network().topology().links().size());
    packet_bytes_ = system.config().cube.noc.packet_bytes;
    response_time_ = system.config().cube.noc.link_bandwidth.transfer_time(
        system.config().cube.noc.response_bytes);
    const bool pe_slots = m_.memory == components::SlotMemory::pe_sram;
    hbm_slots_ = m_.memory == components::SlotMemory::hbm;
    // HBM slots: a message is there once its write lands, and read over the network.
    slot_latency_ = hbm_slots_ ? 0 : pe_slots ? m_.pe_sram_latency : m_.cube_sram_latency;
    slot_bw_ = pe_slots ? m_.pe_sram_bandwidth : m_.cube_sram_bandwidth;
    hbm_ = a.buffer == Buffer::hbm;
    message_ = std::max(a.pipelining.message, a.pipelining.piece);
    total_cubes_ = system.config().total_cubes();
    hbm_channels_ = system.config().cube.hbm.channels;
    for (std::int64_t g = 0; g < n; ++g) {
      Program& p = programs_[static_cast<std::size_t>(g)];
      p.pipe = std::make_unique<Pipeline>(*a.schedule, g, a.pipelining, a.buffer);
      if (hbm_) {
        p.held.assign(p.pipe->values(), 0);
      }
      p.dropped.assign(p.pipe->values(), 0);
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
      now_ = at;
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
    std::uint32_t slots = 1;         // its class's window
    std::uint64_t slot_bytes = 0;
    std::uint64_t slot_stride = 0;  // slots in HBM: from one to the next
    Path message, credit;
    std::vector<emu::Tick> arrival, credit_back;  // by sequence number modulo the slots
    std::uint64_t sent = 0, arrived = 0, read = 0, credited = 0, posted = 0;
    std::int64_t sender = -1, receiver = -1;  // parked: waiting for a credit, a message
    std::uint64_t slot_base = 0;              // slots in HBM: their address
    // Receives posted whose message has not arrived: read out as it does.
    struct Posted {
      std::int64_t program = 0;
      emu::Tick at = 0;  // when it was posted
      std::uint64_t bytes = 0;
    };
    std::vector<Posted> waiting;  // a few, oldest first (a deque would allocate per channel)
  };
  struct Program {
    std::unique_ptr<Pipeline> pipe;
    std::deque<Pipeline::Pair> ahead;  // the pairs whose loads are issued, the first running
    bool started = false;              // whether ahead.front() is running
    Step step;
    // The running pair's row of every segment: the pipeline's segments when it has one row,
    // else `row_copy`; and which row that is (a flat ring's programs have thousands).
    const std::vector<Segment>* row = nullptr;
    std::vector<Segment> row_copy;
    std::int64_t row_at = -1;
    std::vector<Action> actions;
    std::size_t next = 0;
    emu::Tick t = 0;
    bool done = false;
    // buffer=hbm: which pieces are held in SRAM and when each one being loaded arrives (by
    // Pipeline::value_index; only those in flight, a few pairs' worth), the writes into each piece
    // still to come in this pair (as the executor counts them), and the stores in flight (when each
    // lands, and its bytes).
    std::vector<char> held;
    std::unordered_map<std::size_t, emu::Tick> load_ready;
    PieceWrites writes;
    std::deque<std::pair<emu::Tick, std::uint64_t>> stores;
    std::uint64_t stored_bytes = 0;
    // As the executor: the receives posted into each piece (by value index) and not yet waited
    // for, each with when its read-out ends (kNotRead: its message has not arrived); the final
    // values whose stores wait `lookahead` pairs; the pieces to drop once stored; pairs done.
    struct PendingRecv {
      std::size_t value = 0;  // the piece it is received into
      std::size_t channel = 0;
      std::uint64_t seq = 0;
      bool adds = false;
      std::uint64_t bytes = 0;
      emu::Tick ready = -1;
    };
    std::vector<PendingRecv> pending;  // in the order posted (a few)
    struct Deferred {
      std::size_t value = 0;
      std::int64_t out_at = 0;
      std::uint64_t bytes = 0;
      std::int64_t pair = 0;
      std::int64_t row = 0, step = 0;  // the pair's
    };
    std::deque<Deferred> deferred;
    std::vector<char> dropped;
    std::int64_t pairs = 0;
    bool counted = false;  // the running pair is counted in `pairs`
    // The channel it last sent on and received on: a program talking to one peer at a time (a
    // ring) finds its channel without the map.
    struct LastChannel {
      std::int64_t peer = -1;
      std::size_t id = 0;
    };
    LastChannel sent_on, received_on;
  };
  static constexpr emu::Tick kNotRead = -1;

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
    const components::MessageWindow& w = system_.config().message_window(c.from, c.to);
    c.slots = a_.slot_limit > 0 ? std::min(w.slots, a_.slot_limit) : w.slots;
    c.slot_bytes = w.slot_bytes;
    c.slot_stride = components::hbm_slot_stride(system_.config().cube.hbm, w.slot_bytes, c.slots);
    c.arrival.assign(c.slots, 0);
    c.credit_back.assign(c.slots, 0);
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

  // `bytes` leave the path's first link as soon as it is free for them, from `ready` (and a
  // read's request and access) on: when will the head reach the route's last link.
  emu::Tick leave(const Path& p, std::uint64_t bytes, emu::Tick ready, emu::Tick* left) {
    const emu::Tick length = p.port.transfer_time(bytes);
    *left = free_[p.first].gap(ready + p.pre_delay, length);
    free_[p.first].occupy(*left, *left + length, now_);
    return *left + p.before_last;
  }
  // The head is at the last link (the receiver's ejection port, or the HBM channel written)
  // at `head`: when the whole of it has arrived, behind what else came through that link and
  // over the same path.
  emu::Tick arrive(Path& p, std::uint64_t bytes, emu::Tick left, emu::Tick head) {
    const emu::Tick start = free_[p.last].gap(head, p.eject.transfer_time(bytes));
    const emu::Tick through = std::max(start + p.eject.transfer_time(bytes),
                                       left + p.before_last + p.slowest.transfer_time(bytes));
    free_[p.last].occupy(start, through, now_);
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
      const std::uint64_t key =
          ((std::uint64_t{pe} * total_cubes_ + piece.loc.global_cube) * hbm_channels_ + channel) *
              2 +
          (write ? 1 : 0);
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
      // A write is done when its response is back: the way there again, and the response
      // through the PE's port (Network::write).
      const emu::Tick back = write ? it->second.before_last + response_time_ : 0;
      done = std::max(done, arrive(it->second, piece.len, left, head) + back);
      addr += piece.len;
      bytes -= piece.len;
    }
    return done;
  }
  // Message `seq`'s slot of channel c (slots in HBM).
  std::uint64_t slot_address(const Channel& c, std::uint64_t seq) const {
    return c.slot_base + (seq % c.slots) * c.slot_stride;
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
        c.credit_back[c.credited++ % c.slots] = arrive(c.credit, e.bytes, e.leave, at);
        wake(c.sender);
        return;
      }
      case What::message_landed: {
        Channel& c = channels_[ch];
        c.arrival[c.arrived++ % c.slots] = at;
        start_reads(ch);
        wake(c.receiver);
        return;
      }
      case What::message_head: {
        Channel& c = channels_[ch];
        c.arrival[c.arrived++ % c.slots] = arrive(c.message, e.bytes, e.leave, at);
        start_reads(ch);
        wake(c.receiver);
        return;
      }
    }
  }

  // Runs program g's actions from time `at` until one must wait.
  void act(emu::Tick at, std::int64_t g) {
    Program& p = programs_[static_cast<std::size_t>(g)];
    for (;;) {
      if (p.next == p.actions.size()) {
        if (p.started) {
          if (!p.counted) ++p.pairs, p.counted = true;
          if (!store_deferred(at, g, p, false) || !finish_pair(at, g, p)) return;
        }
        if (!start_pair(g, p)) {
          // The end: the deferred stores out and every receive waited for, once the stores
          // have landed.
          if (!store_deferred(at, g, p, true)) return;
          while (!p.pending.empty())
            if (!resolve(at, g, p, p.pending.front().value)) return;
          for (const auto& [landed, bytes] : p.stores) p.t = std::max(p.t, landed);
          p.done = true;
          return;
        }
        continue;
      }
      const Action& action = p.actions[p.next];
      if (!(action.send ? send(at, g, p, action) : receive(at, g, p, action))) return;
    }
  }

  // The next pair of program g, its loads `lookahead` pairs ahead issued: whether there is one.
  bool start_pair(std::int64_t g, Program& p) {
    Pipeline::Pair pair;
    while (static_cast<std::int64_t>(p.ahead.size()) <= a_.pipelining.lookahead &&
           p.pipe->next(pair)) {
      if (hbm_) prefetch(g, p, pair);
      p.ahead.push_back(pair);
    }
    if (p.ahead.empty()) return false;
    const Pipeline::Pair now = p.ahead.front();
    a_.schedule->step(g, now.step, p.step);
    if (p.row_at != now.row) {
      p.row = &p.pipe->row(now.row, p.row_copy);
      p.row_at = now.row;
    }
    step_actions(*p.row, p.step, a_.pipelining.piece, a_.pipelining.window, p.actions,
                 a_.pipelining.message);
    p.next = 0;
    p.started = true;
    p.counted = false;
    if (hbm_) p.writes.count(p.step, p.actions);
    return true;
  }
  // As the executor: segments of one piece that lie one after another go as one load.
  void prefetch(std::int64_t g, Program& p, const Pipeline::Pair& pair) {
    const std::int64_t piece = a_.pipelining.piece;
    const auto segs = p.pipe->loads(pair.step);
    thread_local std::vector<Segment> rows;
    rows.clear();
    for (const std::int32_t seg : segs) rows.push_back(p.pipe->row_segment(pair.row, seg));
    for (std::size_t i = 0; i < rows.size();) {
      const std::size_t e = contiguous_run(
          i, rows.size(), piece, message_, [&](std::size_t q) { return rows[q].in_at; },
          [&](std::size_t q) { return rows[q].elems; });
      if (e > i + 1) {
        std::int64_t total = 0;
        for (std::size_t q = i; q < e; ++q) total += rows[q].elems;
        const emu::Tick ready =
            memory(g, rows[i].in_at, static_cast<std::uint64_t>(total) * 4, false, p.t);
        for (std::size_t q = i; q < e; ++q) {
          const std::size_t v = p.pipe->value_index(pair.row, static_cast<std::size_t>(segs[q]), 0);
          p.load_ready.insert_or_assign(v, ready);
          p.held[v] = 1;
        }
        i = e;
        continue;
      }
      const Segment& row = rows[i];
      for (std::int64_t j = 0; j * piece < row.elems; ++j) {
        const std::size_t v = p.pipe->value_index(pair.row, static_cast<std::size_t>(segs[i]), j);
        const auto bytes = static_cast<std::uint64_t>(std::min(piece, row.elems - j * piece)) * 4;
        p.load_ready.insert_or_assign(v, memory(g, row.in_at + j * piece, bytes, false, p.t));
        p.held[v] = 1;
      }
      ++i;
    }
  }
  // What the pair leaves is dropped (buffer=hbm keeps no output), its receives waited for
  // first, unless its store is deferred: whether done (false: the program waits).
  bool finish_pair(emu::Tick at, std::int64_t g, Program& p) {
    const Pipeline::Pair now = p.ahead.front();
    for (const std::int32_t seg : p.pipe->dead_after(now.step)) {
      // buffer=sram keeps its outputs to the end.
      if (!hbm_ && p.pipe->segments()[static_cast<std::size_t>(seg)].out_at >= 0) continue;
      for (std::int64_t j = 0; j < p.pipe->pieces_per_row(); ++j) {
        const std::size_t v = p.pipe->value_index(now.row, static_cast<std::size_t>(seg), j);
        if (std::any_of(p.deferred.begin(), p.deferred.end(),
                        [&](const Program::Deferred& d) { return d.value == v; })) {
          p.dropped[v] = 1;
          continue;
        }
        if (!resolve(at, g, p, v)) return false;
        if (hbm_) p.held[v] = 0;
      }
    }
    if (busy(p.t, at, g)) return false;
    p.ahead.pop_front();
    p.started = false;
    return true;
  }
  // The receives into piece v waited for in order, each added to what it adds to: false while
  // one's message has not been read out (the program waits for its channel).
  bool resolve(emu::Tick /*at*/, std::int64_t g, Program& p, std::size_t v) {
    auto& pending = p.pending;
    for (std::size_t i = 0; i < pending.size();) {
      const Program::PendingRecv& r = pending[i];
      if (r.value != v) {
        ++i;
        continue;
      }
      if (r.ready == kNotRead) {
        if (r.channel >= kSwitch)
          sums_[r.channel - kSwitch].parked.push_back(g);
        else
          channels_[r.channel].receiver = g;
        return false;
      }
      p.t = std::max(p.t, r.ready);
      if (r.adds) {
        if (hbm_) loaded(p, v);
        p.t += system_.vector_unit().time(r.bytes / 4);
      }
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return true;
  }
  static bool is_pending(const Program& p, std::size_t v) {
    return std::any_of(p.pending.begin(), p.pending.end(),
                       [&](const Program::PendingRecv& r) { return r.value == v; });
  }
  // Channel ch's posted receives whose messages have arrived, read out of their slots in order,
  // each slot's credit returned after.
  void start_reads(std::size_t ch) {
    Channel& c = channels_[ch];
    while (!c.waiting.empty() && c.arrived > c.read) {
      const Channel::Posted w = c.waiting.front();
      c.waiting.erase(c.waiting.begin());
      const std::uint64_t seq = c.read;
      const emu::Tick begin = std::max(w.at, c.arrival[seq % c.slots] + slot_latency_);
      const emu::Tick read = hbm_slots_ ? access(c.to, slot_address(c, seq), w.bytes, false, begin)
                                        : begin + slot_latency_ + slot_bw_.transfer_time(w.bytes);
      ++c.read;
      push(read, What::credit_leaves, static_cast<std::int64_t>(ch));
      for (Program::PendingRecv& r : programs_[static_cast<std::size_t>(w.program)].pending)
        if (r.channel == ch && r.seq == seq) r.ready = read;
    }
  }
  // A piece being loaded is waited for (buffer=hbm).
  void loaded(Program& p, std::size_t v) {
    const auto it = p.load_ready.find(v);
    if (it == p.load_ready.end()) return;
    p.t = std::max(p.t, it->second);
    p.load_ready.erase(it);
  }
  // The piece of the action's op `c` (of its count).
  std::size_t value_of(const Program& p, const Action& action, std::uint32_t c = 0) const {
    return p.pipe->value_index(
        p.ahead.front().row, static_cast<std::size_t>(p.step[action.op + c].segment), action.piece);
  }

  // Whether program g, at `at`, is busy until `until`: then it acts again at that time.
  bool busy(emu::Tick until, emu::Tick at, std::int64_t g) {
    if (until <= at) return false;
    push(until, What::act, g);
    return true;
  }
  std::uint64_t bytes_of(const Program& p, const Action& action, std::uint32_t c = 0) const {
    const Op& op = p.step[action.op + c];
    const std::int64_t piece = a_.pipelining.piece;
    const std::int64_t elems = std::min(
        piece, (*p.row)[static_cast<std::size_t>(op.segment)].elems - action.piece * piece);
    return static_cast<std::uint64_t>(elems) * 4;
  }

  // The action's pieces' receives waited for and their loads (buffer=hbm), and the program
  // free at `at`, with their bytes in `bytes`: false when it waits (for an event, or until p.t).
  bool values_ready(emu::Tick at, std::int64_t g, Program& p, const Action& action,
                    std::uint64_t& bytes) {
    bytes = 0;
    for (std::uint32_t k = 0; k < action.count; ++k) {
      bytes += bytes_of(p, action, k);
      const std::size_t v = value_of(p, action, k);
      if (!resolve(at, g, p, v)) return false;
      if (hbm_) loaded(p, v);
    }
    return !busy(p.t, at, g);
  }

  // Program g's send `action` at `at`: whether it went (false: the program waits for an event).
  bool send(emu::Tick at, std::int64_t g, Program& p, const Action& action) {
    const Op& op = p.step[action.op];
    std::uint64_t bytes = 0;  // of every piece it gathers
    if (!values_ready(at, g, p, action, bytes)) return false;
    const std::size_t ch = channel(p.sent_on, op.peer, g, op.peer);
    Channel& c = channels_[ch];
    if (c.sent >= c.slots) {  // the credit of the message `slots` before this one
      if (c.credited <= c.sent - c.slots) {
        c.sender = g;
        return false;
      }
      p.t = std::max(p.t, c.credit_back[(c.sent - c.slots) % c.slots]);
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

  // Program g's receive `action` at `at`, posted (as the executor's recv_async): its message is
  // read out of its slot once it has arrived, and waited for when its value is next needed.
  bool receive(emu::Tick at, std::int64_t g, Program& p, const Action& action) {
    const Op& first = p.step[action.op];
    if (first.kind == OpKind::switch_reduce) return switch_reduce(at, g, p, action);
    const std::size_t ch = channel(p.received_on, first.peer, first.peer, g);
    Channel& c = channels_[ch];
    // One message, each of its pieces a receive into its own value.
    const std::uint64_t seq = c.posted++;
    std::uint64_t total = 0;
    for (std::uint32_t k = 0; k < action.count; ++k) {
      const Op& op = p.step[action.op + k];
      const std::uint64_t bytes = bytes_of(p, action, k);
      const std::size_t v = value_of(p, action, k);
      const Segment& sg = (*p.row)[static_cast<std::size_t>(op.segment)];
      // What it adds to: a value held or loaded, or one still being received (buffer=sram holds
      // every input).
      const bool adds =
          op.kind == OpKind::recv_add && (!hbm_ || is_pending(p, v) || p.held[v] || sg.in_at >= 0);
      p.pending.push_back({v, ch, seq, adds, bytes, kNotRead});
      total += bytes;
    }
    c.waiting.push_back({g, p.t, total});
    start_reads(ch);
    for (std::uint32_t k = 0; k < action.count; ++k)
      posted(p, p.step[action.op + k], action, value_of(p, action, k), bytes_of(p, action, k));
    ++p.next;
    return true;
  }

  // Program g's switch_reduce `action` at `at` (as the executor's switch_reduce_async): once its
  // value is there, its part goes up to the switch, whose adder on that link adds it after the
  // parts before it; once every member's part is added the sum goes down to each member, and the
  // program waits for it when the value is next needed.
  bool switch_reduce(emu::Tick at, std::int64_t g, Program& p, const Action& action) {
    const Op& op = p.step[action.op];
    std::uint64_t bytes = 0;  // of every piece it gathers
    if (!values_ready(at, g, p, action, bytes)) return false;
    const auto level = static_cast<SwitchLevel>(op.peer);
    const std::uint32_t pe = global_pe(g);
    SwitchPort& port = switch_port(pe, level);
    emu::Tick left = 0;
    const emu::Tick head = leave(port.up, bytes, p.t, &left);
    const emu::Tick in_switch = arrive(port.up, bytes, left, head);
    const SystemConfig& c = system_.config();
    const SwitchReduction& r =
        level == SwitchLevel::inter_sip ? c.inter_sip.reduction : c.ucie.reduction;
    emu::Tick& adder = adder_free_[port.up.last];
    adder = std::max(in_switch, adder) + r.bandwidth.transfer_time(bytes);
    // The reduction: the n-th of this program's place, as the switch counts them.
    const bool sips = level == SwitchLevel::inter_sip;
    const std::uint32_t pes = c.cube.pes, cube = pe / pes, local = pe % pes;
    const std::uint32_t place =
        sips ? (cube % c.cubes_per_sip) * pes + local : (cube / c.cubes_per_sip) * pes + local;
    const std::uint64_t nth = switch_calls_[std::uint64_t{pe} << 1 | (sips ? 1U : 0U)]++;
    const auto key = std::make_tuple(static_cast<int>(level), place, nth);
    auto [it, fresh] = open_sums_.try_emplace(key);
    if (fresh) {
      it->second = sums_.size();
      sums_.push_back({sips ? c.sips : c.cubes_per_sip, 0, {}, {}});
    }
    const std::size_t id = it->second;
    SwitchSum& sum = sums_[id];
    sum.summed = std::max(sum.summed, adder);
    sum.members.push_back({g, &port, bytes});
    for (std::uint32_t k = 0; k < action.count; ++k) {
      const std::size_t v = value_of(p, action, k);
      p.pending.push_back({v, kSwitch + id, 0, false, bytes_of(p, action, k), kNotRead});
      posted(p, p.step[action.op + k], action, v, bytes_of(p, action, k));
    }
    if (sum.members.size() == sum.size) {
      open_sums_.erase(it);
      for (const SwitchSum::Member& m : sum.members) {
        emu::Tick down_left = 0;
        const emu::Tick down_head = leave(m.port->down, m.bytes, sum.summed, &down_left);
        const emu::Tick back = arrive(m.port->down, m.bytes, down_left, down_head);
        Program& q = programs_[static_cast<std::size_t>(m.program)];
        for (Program::PendingRecv& pr : q.pending)
          if (pr.channel == kSwitch + id) pr.ready = back;
      }
      for (const std::int64_t w : sum.parked)
        push(programs_[static_cast<std::size_t>(w)].t, What::act, w);
      sum.parked.clear();
      sum.members.clear();
    }
    ++p.next;
    return true;
  }
  // A piece written by a receive or a switch_reduce (buffer=hbm): held, and its store deferred
  // when this is its final write.
  void posted(Program& p, const Op& op, const Action& action, std::size_t v, std::uint64_t bytes) {
    if (!hbm_) return;
    const auto seg = static_cast<std::size_t>(op.segment);
    const Segment& sg = (*p.row)[seg];
    p.held[v] = 1;
    // A piece is final after the last write of the last step writing it: its store waits.
    if (p.writes.done(op.segment, action.piece) &&
        p.pipe->last().write[seg] == p.ahead.front().step && sg.out_at >= 0)
      p.deferred.push_back({v, sg.out_at + action.piece * a_.pipelining.piece, bytes, p.pairs,
                            p.ahead.front().row, p.ahead.front().step});
  }
  struct SwitchPort {  // a PE's ways up to a switch and down from it
    Path up, down;
  };
  SwitchPort& switch_port(std::uint32_t pe, SwitchLevel level) {
    auto [it, fresh] =
        switch_ports_.try_emplace(std::uint64_t{pe} << 1 | static_cast<std::uint32_t>(level));
    if (fresh) {
      const auto& topo = system_.network().topology();
      it->second.up = path(topo.pe_to_switch(pe, level));
      it->second.down = path(topo.switch_to_pe(level, topo.switch_connection(pe, level), pe));
    }
    return it->second;
  }

  // The deferred stores of pairs `lookahead` or more pairs back whose rows have reached their
  // next step (`all`: every one), each once its value's receives are waited for, in flight up to
  // the store budget: false while one waits.
  bool store_deferred(emu::Tick at, std::int64_t g, Program& p, bool all) {
    const std::int64_t lag = std::max<std::int64_t>(1, a_.pipelining.lookahead);
    const auto due = [&](std::size_t i) {
      const Program::Deferred& d = p.deferred[i];
      return all ||
             (d.pair + lag <= p.pairs && p.pipe->reached(p.ahead.front(), d.row, d.step + 1));
    };
    while (!p.deferred.empty() && due(0)) {
      // As the executor: final values that lie one after another go as one store.
      std::size_t n = 1;
      while (n < p.deferred.size() && due(n)) ++n;
      const std::size_t e = contiguous_run(
          0, n, a_.pipelining.piece, message_, [&](std::size_t i) { return p.deferred[i].out_at; },
          [&](std::size_t i) { return static_cast<std::int64_t>(p.deferred[i].bytes / 4); });
      std::uint64_t bytes = 0;
      for (std::size_t i = 0; i < e; ++i) {
        const std::size_t v = p.deferred[i].value;
        if (!resolve(at, g, p, v)) return false;
        loaded(p, v);
        bytes += p.deferred[i].bytes;
      }
      if (busy(p.t, at, g)) return false;
      const std::int64_t out_at = p.deferred.front().out_at;
      while (!p.stores.empty() && (p.stored_bytes + bytes > a_.pipelining.store_budget ||
                                   p.stores.size() >= a_.pipelining.max_stores)) {
        p.t = std::max(p.t, p.stores.front().first);
        p.stored_bytes -= p.stores.front().second;
        p.stores.pop_front();
      }
      p.stores.emplace_back(memory(g, out_at, bytes, true, p.t), bytes);
      p.stored_bytes += bytes;
      for (std::size_t i = 0; i < e; ++i) {
        const Program::Deferred d = p.deferred.front();
        p.deferred.pop_front();
        if (p.dropped[d.value] != 0 &&
            std::none_of(p.deferred.begin(), p.deferred.end(),
                         [&](const Program::Deferred& x) { return x.value == d.value; })) {
          p.dropped[d.value] = 0;
          p.held[d.value] = 0;
        }
      }
    }
    return true;
  }

  const System& system_;
  const ModelArgs& a_;
  const components::MessagesConfig& m_;
  bool hbm_slots_ = false, hbm_ = false;
  std::int64_t message_ = 0;  // elements a message, load or store of several pieces takes at most
  emu::Tick slot_latency_ = 0;
  emu::Bandwidth slot_bw_ = kNone;
  std::vector<Program> programs_;
  std::vector<Channel> channels_;
  std::unordered_map<std::uint64_t, std::size_t> channel_of_;  // sender * programs + receiver
  std::vector<LinkCalendar> free_;                             // per link: when it is busy
  emu::Tick now_ = 0;                                          // the event being handled
  // By (PE, cube, HBM channel, write), packed: a 2048-PE launch reaches half a million.
  std::unordered_map<std::uint64_t, Path> memory_paths_;
  std::uint64_t total_cubes_ = 1, hbm_channels_ = 1;
  // In-network reductions: a PendingRecv's channel is kSwitch + the reduction's index in
  // sums_; the reductions not yet complete by (level, place, n-th call at the place); calls per
  // (PE, level); each link up's adder, when free.
  static constexpr std::size_t kSwitch = std::size_t{1} << 62;
  struct SwitchSum {
    std::uint32_t size = 0;
    emu::Tick summed = 0;  // when the last part added so far is added
    struct Member {
      std::int64_t program;
      SwitchPort* port;
      std::uint64_t bytes;
    };
    std::vector<Member> members;
    std::vector<std::int64_t> parked;  // programs waiting for the sum
  };
  std::vector<SwitchSum> sums_;
  std::map<std::tuple<int, std::uint32_t, std::uint64_t>, std::size_t> open_sums_;
  std::unordered_map<std::uint64_t, std::uint64_t> switch_calls_;
  std::unordered_map<std::uint64_t, SwitchPort> switch_ports_;
  std::unordered_map<std::size_t, emu::Tick> adder_free_;
  std::uint64_t packet_bytes_ = 0;
  emu::Tick response_time_ = 0;  // a write's response through a PE's port
  emu::EventQueue events_;
  std::vector<Event> events_of_;
  std::vector<std::uint32_t> free_events_;
};

}  // namespace

emu::Tick alpha_beta_time(const System& system, const ModelArgs& args) {
  return Model(system, args).run();
}

}  // namespace cubesim::components::collectives
