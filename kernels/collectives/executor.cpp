#include "kernels/collectives/executor.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "components/collectives/alpha_beta_model.hpp"

namespace cubesim::kernels::collectives {

using components::collectives::Action;
using components::collectives::Buffer;
using components::collectives::LastUses;
using components::collectives::Op;
using components::collectives::OpKind;
using components::collectives::pieces_of;
using components::collectives::PieceWrites;
using components::collectives::Schedule;
using components::collectives::Segment;
using components::collectives::Step;
using components::collectives::step_actions;

emu::Tick Clock::elapsed() const {
  if (begin.empty()) return 0;
  return *std::max_element(end.begin(), end.end()) - *std::min_element(begin.begin(), begin.end());
}

namespace {

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
    Step step;
    for (std::int64_t k = 0; k < steps_; ++k) {
      a_.schedule->step(me_, k, step);
      run_step(k, step);
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
  // other programs run, so that the step's records are read together, not one per wake-up.
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

  void run_step(std::int64_t k, const Step& step) {
    step_actions(segments_, step, a_.piece, a_.window, actions_);
    // Writes into each segment in this step still to come, per piece: its final value is
    // stored (buffer=hbm) after the last one.
    if (a_.buffer == Buffer::hbm) writes_.count(step, actions_);
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
    for (const Planned& a : plan_) {
      const auto s = static_cast<std::size_t>(a.segment);
      tl::Tile& held = *a.held;
      if (a.send) {
        tl_.send(peer_of(tl_, a.peer), value(held, s, a.piece));
      } else {
        // Only this program changes its pieces: what the receive replaces (or adds to) is
        // known before it returns.
        const bool adds = a.add && (held.valid() || a.has_input);
        tl::Tile got = tl_.recv(peer_of(tl_, a.peer), {a.elems}, DType::f32);
        if (adds) got = got + value(held, s, a.piece);
        held = std::move(got);
        if (a_.buffer == Buffer::hbm &&
            writes_.done(a.segment, static_cast<std::int64_t>(a.piece)) && last_.write[s] == k &&
            segments_[s].out_at >= 0)
          store(s, a.piece);
      }
    }
    for (const std::size_t s : frees_)
      for (std::size_t j = 0; j < pieces(s); ++j) value_at(s, j) = tl::Tile();
  }

  tl::Context& tl_;
  const ScheduleArgs& a_;
  std::int64_t me_, steps_;
  std::vector<Segment> segments_;
  // Each piece's value, segment after segment (segment s's pieces from first_[s] on); invalid:
  // not held.
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

emu::Tick model_time(Simulation& sim, GridShape grid, const ScheduleArgs& args) {
  const auto& cfg = sim.config();
  components::collectives::ModelArgs m;
  m.schedule = args.schedule;
  m.buffer = args.buffer;
  m.piece = args.piece;
  m.window = args.window;
  m.hbm_slots = [&sim](std::uint32_t from, std::uint32_t to) {
    return sim.message_slots(from, to);
  };
  for (std::int64_t g = 0; g < args.schedule->programs(); ++g) {
    const std::int64_t pe = g % grid.pes, cube = (g / grid.pes) % grid.cubes,
                       sip = g / (grid.pes * grid.cubes);
    m.pe.push_back(
        static_cast<std::uint32_t>((sip * cfg.cubes_per_sip + cube) * cfg.cube.pes + pe));
    m.in.push_back(args.in[static_cast<std::size_t>(g)].addr);
    m.out.push_back(args.out[static_cast<std::size_t>(g)].addr);
  }
  return components::collectives::alpha_beta_time(sim.system(), m);
}

}  // namespace cubesim::kernels::collectives
