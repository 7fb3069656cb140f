#include "kernels/collectives/schedule.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "components/system/system.hpp"
#include "emu/event_queue.hpp"
#include "emu/prefetch.hpp"

namespace cubesim::kernels::collectives {

emu::Tick Clock::elapsed() const {
  if (begin.empty()) return 0;
  return *std::max_element(end.begin(), end.end()) - *std::min_element(begin.begin(), begin.end());
}

std::int64_t pieces_of(std::int64_t elems, std::int64_t piece) {
  return (elems + piece - 1) / piece;
}

void step_actions(const std::vector<Segment>& segments, const Step& step, std::int64_t piece,
                  std::uint32_t window, std::vector<Action>& out) {
  out.clear();
  // A ring's step, once per program and step: one message out and one in, of different
  // segments. What the general order below gives it: the send, then the receive.
  if (step.size() == 2 && window > 0 && step[0].kind == OpKind::send &&
      step[1].kind != OpKind::send && step[0].segment != step[1].segment &&
      pieces_of(segments[static_cast<std::size_t>(step[0].segment)].elems, piece) == 1 &&
      pieces_of(segments[static_cast<std::size_t>(step[1].segment)].elems, piece) == 1) {
    out.push_back({true, 0, 0});
    out.push_back({false, 1, 0});
    return;
  }
  // Scratch kept between calls (a step never yields, so one per thread serves every fiber).
  thread_local std::vector<Action> sends, recvs;
  thread_local std::vector<std::int64_t> pieces;  // per op
  sends.clear();
  recvs.clear();
  pieces.clear();
  std::int64_t most = 0;
  bool forwards = false;  // some send forwards a segment the step also receives into
  for (const Op& op : step) {
    pieces.push_back(pieces_of(segments[static_cast<std::size_t>(op.segment)].elems, piece));
    most = std::max(most, pieces.back());
    if (op.kind == OpKind::send)
      forwards = forwards || std::any_of(step.begin(), step.end(), [&](const Op& o) {
                   return o.kind != OpKind::send && o.segment == op.segment;
                 });
  }
  for (std::int64_t j = 0; j < most; ++j)
    for (std::uint32_t i = 0; i < step.size(); ++i)
      if (j < pieces[i])
        (step[i].kind == OpKind::send ? sends : recvs)
            .push_back({step[i].kind == OpKind::send, i, j});
  // A send of a segment the step also receives into waits until every such receive of its
  // piece is done. Steps have few ops: plain vectors, searched, and only when some send
  // forwards.
  struct Pending {
    std::int32_t segment;
    std::int64_t piece;
    int count;
  };
  thread_local std::vector<Pending> pending;
  pending.clear();
  auto find = [&](const Action& a) {
    const Op& op = step[a.op];
    return std::find_if(pending.begin(), pending.end(), [&](const Pending& p) {
      return p.segment == op.segment && p.piece == a.piece;
    });
  };
  if (forwards)
    for (const Action& r : recvs) {
      auto it = find(r);
      if (it == pending.end())
        pending.push_back({step[r.op].segment, r.piece, 1});
      else
        ++it->count;
    }
  thread_local std::vector<std::int64_t> peers;
  peers.clear();
  for (const Op& op : step)
    if (op.kind == OpKind::send && std::find(peers.begin(), peers.end(), op.peer) == peers.end())
      peers.push_back(op.peer);
  const std::size_t ahead = static_cast<std::size_t>(window) * peers.size();
  std::size_t si = 0, ri = 0;
  while (si < sends.size() || ri < recvs.size()) {
    for (; si < sends.size(); ++si) {
      if (forwards)
        if (auto it = find(sends[si]); it != pending.end() && it->count > 0) break;
      if (ri < recvs.size() && si >= ri + ahead) break;
      out.push_back(sends[si]);
    }
    if (ri < recvs.size()) {
      if (forwards) --find(recvs[ri])->count;
      out.push_back(recvs[ri++]);
    } else if (si < sends.size()) {
      throw std::logic_error("collective schedule: a send waits for a receive the step lacks");
    }
  }
}

namespace {

// When each of program g's segments is last read (sent, or added to) and last written: -1 when
// never.
struct LastUses {
  std::vector<std::int64_t> read, write;
  LastUses() = default;
  LastUses(const Schedule& schedule, std::int64_t g, std::int64_t steps, std::size_t segments)
      : read(segments, -1), write(segments, -1) {
    Step step;
    for (std::int64_t k = 0; k < steps; ++k) {
      schedule.step(g, k, step);
      for (const Op& op : step) {
        const auto s = static_cast<std::size_t>(op.segment);
        if (op.kind != OpKind::recv) read[s] = k;
        if (op.kind != OpKind::send) write[s] = k;
      }
    }
  }
};

// The writes into each (segment, piece) still to come in a step's actions: the last one stores
// its final value (buffer=hbm). Steps write few pieces: a vector, searched.
class PieceWrites {
 public:
  void count(const Step& step, const std::vector<Action>& actions) {
    counts_.clear();
    for (const Action& a : actions)
      if (!a.send) ++at({step[a.op].segment, a.piece});
  }
  // One write into `piece` is done: whether it was the step's last.
  bool done(std::int32_t segment, std::int64_t piece) { return --at({segment, piece}) == 0; }

 private:
  int& at(std::pair<std::int32_t, std::int64_t> piece) {
    for (auto& [key, count] : counts_)
      if (key == piece) return count;
    return counts_.emplace_back(piece, 0).second;
  }
  std::vector<std::pair<std::pair<std::int32_t, std::int64_t>, int>> counts_;
};

tl::Peer peer_of(const tl::Context& tl, std::int64_t g) {
  const std::int64_t pes = tl.num_programs(0), cubes = tl.num_programs(1);
  return tl::program(g % pes, (g / pes) % cubes, g / (pes * cubes));
}

class Executor {
 public:
  Executor(tl::Context& tl, const ScheduleArgs& a)
      : tl_(tl),
        a_(a),
        me_(global_program_id(tl)),
        steps_(a.schedule->steps(me_)),
        segments_(a.schedule->segments(me_)),
        last_(tracks_last_uses() ? LastUses(*a.schedule, me_, steps_, segments_.size())
                                 : LastUses()) {
    first_.resize(segments_.size() + 1);
    for (std::size_t s = 0; s < segments_.size(); ++s)
      first_[s + 1] = first_[s] + static_cast<std::size_t>(pieces_of(segments_[s].elems, a.piece));
    values_.resize(first_.back());
  }

  void run() {
    // Before the clock: what is never written goes from input to output as it is, and
    // buffer=sram loads every input.
    const auto copied = [&](std::size_t s) {
      return segments_[s].in_at >= 0 && segments_[s].out_at >= 0 && last_.write[s] < 0;
    };
    if (a_.buffer == Buffer::sram)
      stage(Move::load, [&](std::size_t s) { return segments_[s].in_at >= 0; });
    else
      stage(Move::copy, copied);
    tl_.barrier();
    if (a_.clock) a_.clock->begin[static_cast<std::size_t>(me_)] = tl_.now();
    // Each step is worked out a step ahead, so that the step before can prefetch its records.
    std::array<Step, 2> steps;
    if (steps_ > 0) a_.schedule->step(me_, 0, steps[0]);
    for (std::int64_t k = 0; k < steps_; ++k) {
      Step& next = steps[static_cast<std::size_t>((k + 1) % 2)];
      if (k + 1 < steps_)
        a_.schedule->step(me_, k + 1, next);
      else
        next.clear();
      run_step(k, steps[static_cast<std::size_t>(k % 2)], next);
    }
    if (a_.clock) a_.clock->end[static_cast<std::size_t>(me_)] = tl_.now();
    if (a_.buffer == Buffer::sram) {
      // Untimed, after the clock, and after every program's clock: a program that finished
      // early must not store over the links and ports the others' messages still cross.
      tl_.barrier();
      stage(Move::store, [&](std::size_t s) { return segments_[s].out_at >= 0; });
    }
  }

 private:
  // The untimed moves before and after the clock go in runs of pieces that lie one after
  // another in memory, as large as the free SRAM allows, rather than one access per
  // message-sized piece: the same data in far fewer transfers and packets. Segments are taken
  // in memory order (a ring's segments follow the ring, not the addresses). Tiles have no slice
  // view, so each piece is a tile of its own (made as tile math makes its results) holding a
  // copy of its elements; a load's run and its pieces are held together for a moment, so a
  // load run takes at most half the free SRAM, and a store's pieces are dropped once stored.
  enum class Move : std::uint8_t { load, copy, store };  // copy: load, and store as it is
  struct Cursor {  // a piece: the i-th segment in memory order, piece j
    std::size_t i = 0, j = 0;
  };
  // Goes through the pieces of the segments `want` selects, in memory order, run by run.
  template <class Want>
  void stage(Move move, Want want) {
    const bool by_in = move != Move::store, by_out = move != Move::load;
    std::vector<std::size_t> order;
    for (std::size_t s = 0; s < segments_.size(); ++s)
      if (pieces(s) > 0 && want(s)) order.push_back(s);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return by_in ? segments_[a].in_at < segments_[b].in_at
                   : segments_[a].out_at < segments_[b].out_at;
    });
    const auto seg = [&](const Cursor& c) { return order[c.i]; };
    const auto next = [&](Cursor& c) {
      if (++c.j == pieces(seg(c))) {
        ++c.i;
        c.j = 0;
      }
    };
    const auto in_at = [&](const Cursor& c) {
      return segments_[seg(c)].in_at + static_cast<std::int64_t>(c.j) * a_.piece;
    };
    const auto out_at = [&](const Cursor& c) {
      return segments_[seg(c)].out_at + static_cast<std::int64_t>(c.j) * a_.piece;
    };
    const Ptr in = a_.in[static_cast<std::size_t>(me_)],
              out = a_.out[static_cast<std::size_t>(me_)];
    for (Cursor c; c.i < order.size();) {
      // The run: pieces following one another (in the input, the output, or both).
      const std::uint64_t budget = move == Move::store ? tl_.sram_free() : tl_.sram_free() / 2;
      const Cursor first = c;
      std::int64_t elems = len(seg(c), c.j), in_run = 1;
      for (Cursor e = c;;) {
        const std::int64_t n = len(seg(e), e.j);
        const std::int64_t in_end = in_at(e) + n, out_end = out_at(e) + n;
        next(e);
        if (e.i == order.size()) break;
        if ((by_in && in_at(e) != in_end) || (by_out && out_at(e) != out_end)) break;
        if (static_cast<std::uint64_t>(elems + len(seg(e), e.j)) * 4 > budget) break;
        elems += len(seg(e), e.j);
        ++in_run;
      }
      if (in_run == 1) {  // a run of one piece is the piece
        if (move != Move::store) value_at(seg(c), c.j) = load(seg(c), c.j);
        if (move != Move::load) store(seg(c), c.j);
        if (move == Move::store) value_at(seg(c), c.j) = tl::Tile();
        next(c);
        continue;
      }
      tl::Tile run = move == Move::store ? tl_.make_tile({elems}, DType::f32)
                                         : tl_.load(in + in_at(first) * 4, {elems}, DType::f32);
      std::byte* bytes = const_cast<std::byte*>(run.raw());  // null in timing-only runs
      for (std::int64_t i = 0, at = 0; i < in_run; ++i, next(c)) {
        tl::Tile& piece = value_at(seg(c), c.j);
        const auto n = static_cast<std::size_t>(len(seg(c), c.j)) * 4;
        if (move == Move::store) {
          if (bytes != nullptr) std::memcpy(bytes + at, piece.raw(), n);
          piece = tl::Tile();
        } else {
          tl::Tile t = tl_.make_tile({len(seg(c), c.j)}, DType::f32);
          if (bytes != nullptr) std::memcpy(const_cast<std::byte*>(t.raw()), bytes + at, n);
          piece = std::move(t);
        }
        at += static_cast<std::int64_t>(n);
      }
      if (move != Move::load) tl_.store(out + out_at(first) * 4, run);
    }
  }

  // With thousands of programs taking turns, what a program touches in a step (its segments'
  // records, the pieces' tiles and their shared records) has left the cache since its last
  // step, and left it again by the time a receive returns. Rather than taking those misses one
  // after another as the work reaches them, a step starts them together: these prefetch what
  // each op of the step touches, a segment of many pieces only its first few (the rest follow
  // in memory, and a step that long leaves them time).
  static constexpr std::size_t kPrefetchedPieces = 8;
  void prefetch_segments(const Step& step) const {
    for (const Op& op : step) {
      const auto s = static_cast<std::size_t>(op.segment);
      emu::prefetch(&segments_[s]);
      emu::prefetch(&first_[s]);
      emu::prefetch(&first_[s + 1]);
      if (!last_.read.empty()) {
        emu::prefetch(&last_.read[s]);
        emu::prefetch(&last_.write[s]);
      }
    }
  }
  static void prefetch_tile(const tl::Tile& tile) {
    emu::prefetch(&tile);
    emu::prefetch(reinterpret_cast<const char*>(&tile) + sizeof(tl::Tile) - 1);
  }
  // f(tile) for the first pieces of each op's segment.
  template <class F>
  void for_first_pieces(const Step& step, F f) {
    for (const Op& op : step) {
      const auto s = static_cast<std::size_t>(op.segment);
      for (std::size_t j = 0; j < std::min(pieces(s), kPrefetchedPieces); ++j) f(value_at(s, j));
    }
  }

  std::size_t pieces(std::size_t s) const { return first_[s + 1] - first_[s]; }
  tl::Tile& value_at(std::size_t s, std::size_t j) { return values_[first_[s] + j]; }
  // Whether a segment stays held to the end (buffer=sram keeps its outputs in SRAM).
  bool kept(std::size_t s) const { return a_.buffer == Buffer::sram && segments_[s].out_at >= 0; }
  // Last uses are needed to store final values (buffer=hbm) and to free what is not kept.
  bool tracks_last_uses() const {
    if (a_.buffer == Buffer::hbm) return true;
    for (std::size_t s = 0; s < segments_.size(); ++s)
      if (!kept(s)) return true;
    return false;
  }

  std::int64_t len(std::size_t s, std::size_t j) const {
    return std::min(a_.piece, segments_[s].elems - static_cast<std::int64_t>(j) * a_.piece);
  }
  tl::Tile load(std::size_t s, std::size_t j) {
    const std::int64_t at = segments_[s].in_at + static_cast<std::int64_t>(j) * a_.piece;
    return tl_.load(a_.in[static_cast<std::size_t>(me_)] + at * 4, {len(s, j)}, DType::f32);
  }
  void store(std::size_t s, std::size_t j) {
    const std::int64_t at = segments_[s].out_at + static_cast<std::int64_t>(j) * a_.piece;
    tl_.store(a_.out[static_cast<std::size_t>(me_)] + at * 4, value_at(s, j));
  }
  // The segment's piece as it is now (`v`, its value_at): held in SRAM, or (buffer=hbm) loaded
  // from the input.
  const tl::Tile& value(tl::Tile& v, std::size_t s, std::size_t j) {
    if (!v.valid()) {
      if (segments_[s].in_at < 0)
        throw std::logic_error("collective schedule: program " + std::to_string(me_) +
                               " reads segment " + std::to_string(s) + " before it has a value");
      v = load(s, j);
    }
    return v;
  }

  // An action with what it needs worked out before the step's first send or receive lets
  // other programs run: after each, this program's records have left the cache again.
  struct Planned {
    tl::Tile* held = nullptr;  // the piece's value_at
    std::int64_t peer = 0;
    std::int64_t elems = 0;
    std::int32_t segment = 0;
    bool send = false;
    bool add = false;        // a recv_add
    bool has_input = false;  // the segment starts from the input
    std::size_t piece = 0;
  };

  void run_step(std::int64_t k, const Step& step, const Step& next) {
    prefetch_segments(step);
    step_actions(segments_, step, a_.piece, a_.window, actions_);
    // Writes into each segment in this step still to come, per piece: its final value is
    // stored (buffer=hbm) after the last one.
    if (a_.buffer == Buffer::hbm) writes_.count(step, actions_);
    for_first_pieces(step, prefetch_tile);
    plan_.clear();
    for (const Action& act : actions_) {
      const Op& op = step[act.op];
      const auto s = static_cast<std::size_t>(op.segment);
      const auto j = static_cast<std::size_t>(act.piece);
      plan_.push_back({&value_at(s, j), op.peer, len(s, j), op.segment, act.send,
                       op.kind == OpKind::recv_add, segments_[s].in_at >= 0, j});
    }
    frees_.clear();  // what is not needed after the step
    for (const Op& op : step) {
      const auto s = static_cast<std::size_t>(op.segment);
      if (!kept(s) && last_.read[s] <= k && last_.write[s] <= k) frees_.push_back(s);
    }
    for_first_pieces(step, [](const tl::Tile& t) { tl::Tile::prefetch_record(t.record()); });
    for (std::size_t i = 0; i < plan_.size(); ++i) {
      const Planned& a = plan_[i];
      const auto s = static_cast<std::size_t>(a.segment);
      tl::Tile& held = *a.held;
      if (a.send) {
        tl_.send(peer_of(tl_, a.peer), value(held, s, a.piece));
      } else {
        // Only this program changes its pieces: what the receive replaces (or adds to) is
        // known before it returns.
        const void* record = held.record();
        const bool adds = a.add && (held.valid() || a.has_input);
        tl::Tile got = tl_.recv(peer_of(tl_, a.peer), {a.elems}, DType::f32);
        prefetch_tile(held);
        tl::Tile::prefetch_record(record);
        if (adds) got = got + value(held, s, a.piece);
        held = std::move(got);
        if (a_.buffer == Buffer::hbm &&
            writes_.done(a.segment, static_cast<std::int64_t>(a.piece)) && last_.write[s] == k &&
            segments_[s].out_at >= 0)
          store(s, a.piece);
      }
      // Once a send or receive returns, the next action's piece (or the next step's records)
      // is cold again.
      if (i + 1 < plan_.size())
        prefetch_tile(*plan_[i + 1].held);
      else
        prefetch_segments(next);
    }
    for (const std::size_t s : frees_)
      for (std::size_t j = 0; j < pieces(s); ++j) value_at(s, j) = tl::Tile();
  }

  tl::Context& tl_;
  const ScheduleArgs& a_;
  std::int64_t me_, steps_;
  std::vector<Segment> segments_;
  // Each piece's value, segment after segment (segment s's pieces from first_[s] on); invalid:
  // not held. One array: a step's cold segment is one record away, not two.
  std::vector<tl::Tile> values_;
  std::vector<std::size_t> first_;
  LastUses last_;
  std::vector<Action> actions_;
  std::vector<Planned> plan_;
  std::vector<std::size_t> frees_;
  PieceWrites writes_;
};

}  // namespace

void run_schedule(tl::Context& tl, const ScheduleArgs& args) {
  Executor(tl, args).run();
}

namespace {

const emu::Bandwidth kNone = emu::Bandwidth::from_bytes_per_s(1);  // until set

// The model's state: programs going through their actions in time order, channels with the
// arrival of each message in flight and the return of each credit.
class Model {
 public:
  Model(Simulation& sim, GridShape grid, const ScheduleArgs& a)
      : sim_(sim), grid_(grid), a_(a), m_(sim.config().messages) {
    const std::int64_t n = a.schedule->programs();
    programs_.resize(static_cast<std::size_t>(n));
    free_.assign(sim.system().network().topology().links().size(), 0);
    packet_bytes_ = sim.config().cube.noc.packet_bytes;
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

  std::uint32_t global_pe(std::int64_t g) const {
    const auto& cfg = sim_.config();
    const std::int64_t pe = g % grid_.pes, cube = (g / grid_.pes) % grid_.cubes,
                       sip = g / (grid_.pes * grid_.cubes);
    return static_cast<std::uint32_t>((sip * cfg.cubes_per_sip + cube) * cfg.cube.pes + pe);
  }

  Path path(std::uint32_t from, std::uint32_t to) const {
    return path(sim_.system().network().topology().pe_to_pe(from, to));
  }
  Path path(const components::Route& route) const {
    const auto& links = sim_.system().network().topology().links();
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
      const auto base = sim_.message_slots(c.from, c.to);
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
                  buffers[static_cast<std::size_t>(g)].addr + static_cast<std::uint64_t>(at) * 4,
                  bytes, write, ready);
  }
  // PE `pe` reads (or writes) `bytes` of HBM at `addr` from `ready`: when the last packet has
  // arrived (or landed). The access is cut into packets as the network cuts it, each over its
  // own channel's path; all are issued at once.
  emu::Tick access(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, bool write,
                   emu::Tick ready) {
    const auto& map = sim_.system().address_map();
    emu::Tick done = ready;
    while (bytes > 0) {
      const auto piece = map.first_piece(addr, bytes, packet_bytes_);
      const std::uint32_t channel = map.channel(piece.loc);
      const auto key = std::make_tuple(pe, piece.loc.global_cube, channel, write);
      auto it = memory_paths_.find(key);
      if (it == memory_paths_.end()) {
        const auto& topo = sim_.system().network().topology();
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
      const Action& act = p.actions[p.next];
      const Op& op = p.step[act.op];
      const std::int64_t elems = std::min(
          a_.piece, p.segments[static_cast<std::size_t>(op.segment)].elems - act.piece * a_.piece);
      const auto bytes = static_cast<std::uint64_t>(elems) * 4;
      const auto seg = static_cast<std::size_t>(op.segment);
      const auto piece = static_cast<std::size_t>(act.piece);
      if (act.send && !p.held.empty() && !p.held[seg][piece]) {  // buffer=hbm: load it first
        p.held[seg][piece] = 1;
        p.t = memory(g, p.segments[seg].in_at + act.piece * a_.piece, bytes, false, p.t);
        if (p.t > at) {
          push(p.t, What::act, g);
          return;
        }
      }
      if (act.send) {
        const std::size_t ch = channel(p.sent_on, op.peer, g, op.peer);
        Channel& c = channels_[ch];
        if (c.sent >= m_.slots) {  // the credit of the message `slots` before this one
          if (c.credited <= c.sent - m_.slots) {
            c.sender = g;
            return;
          }
          p.t = std::max(p.t, c.credit_back[(c.sent - m_.slots) % m_.slots]);
          if (p.t > at) {
            push(p.t, What::act, g);
            return;
          }
        }
        if (hbm_slots_) {  // a write into the slot's HBM address
          const emu::Tick landed = access(c.from, slot_address(c, c.sent), bytes, true, p.t);
          ++c.sent;
          push(landed, What::message_landed, static_cast<std::int64_t>(ch));
          ++p.next;
          continue;
        }
        ++c.sent;
        emu::Tick left = 0;
        const emu::Tick head = leave(c.message, bytes, p.t, &left);
        push(head, What::message_head, static_cast<std::int64_t>(ch), left, bytes);
        ++p.next;
        continue;
      }
      const std::size_t ch = channel(p.received_on, op.peer, op.peer, g);
      Channel& c = channels_[ch];
      if (c.arrived <= c.read) {
        c.receiver = g;
        return;
      }
      const emu::Tick begin = std::max(p.t, c.arrival[c.read % m_.slots] + slot_latency_);
      if (begin > at) {
        push(begin, What::act, g);
        return;
      }
      const emu::Tick read = hbm_slots_ ? access(c.to, slot_address(c, c.read), bytes, false, begin)
                                        : begin + slot_latency_ + slot_bw_.transfer_time(bytes);
      ++c.read;
      push(read, What::credit_leaves, static_cast<std::int64_t>(ch));
      p.t = read;
      if (p.held.empty()) {
        if (op.kind == OpKind::recv_add)
          p.t += sim_.system().vector_unit().time(static_cast<std::uint64_t>(elems));
      } else {
        // buffer=hbm, as the executor does it: the value added to is loaded after the
        // receive, and a piece is stored after the last write of the last step writing it.
        const Segment& sg = p.segments[seg];
        if (op.kind == OpKind::recv_add && (p.held[seg][piece] || sg.in_at >= 0)) {
          if (!p.held[seg][piece])
            p.t = memory(g, sg.in_at + act.piece * a_.piece, bytes, false, p.t);
          p.t += sim_.system().vector_unit().time(static_cast<std::uint64_t>(elems));
        }
        p.held[seg][piece] = 1;
        if (p.writes.done(op.segment, act.piece) && p.last_write[seg] == p.k && sg.out_at >= 0)
          p.t = memory(g, sg.out_at + act.piece * a_.piece, bytes, true, p.t);
      }
      ++p.next;
      if (p.t > at) {
        push(p.t, What::act, g);
        return;
      }
    }
  }

  Simulation& sim_;
  GridShape grid_;
  const ScheduleArgs& a_;
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

emu::Tick model_time(Simulation& sim, GridShape grid, const ScheduleArgs& args) {
  return Model(sim, grid, args).run();
}

}  // namespace cubesim::kernels::collectives
