#include "kernels/collectives/executor.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "components/collectives/alpha_beta_model.hpp"
#include "components/network/topology.hpp"

namespace cubesim::kernels::collectives {

using components::collectives::Action;
using components::collectives::Buffer;
using components::collectives::LastUses;
using components::collectives::Op;
using components::collectives::OpKind;
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
  struct LoadRun;    // a load of several pieces
  struct Scattered;  // a message of several pieces

 public:
  Executor(tl::Context& tl, const ScheduleArgs& a)
      : tl_(tl),
        a_(a),
        me_(global_program_id(tl)),
        pipe_(*a.schedule, me_, a.pipelining, a.buffer),
        piece_(a.pipelining.piece),
        message_(std::max(a.pipelining.message, a.pipelining.piece)) {
    if (a_.buffer == Buffer::sram) values_.resize(pipe_.values());
    rows_.resize(static_cast<std::size_t>(pipe_.row_slots()));
  }

  void run() {
    // Before the clock: what is never written goes from input to output as it is, and
    // buffer=sram loads every input.
    if (a_.buffer == Buffer::sram)
      stage_loads();
    else
      copy_unwritten();
    tl_.barrier();
    if (a_.clock) a_.clock->begin[static_cast<std::size_t>(me_)] = tl_.now();
    run_pairs();
    while (!stores_.empty()) wait_oldest_store();
    if (a_.clock) a_.clock->end[static_cast<std::size_t>(me_)] = tl_.now();
    if (a_.buffer == Buffer::sram) {
      // Untimed, after the clock, and after every program's clock: a program that finished
      // early must not store over the links and ports the others' messages still cross.
      tl_.barrier();
      stage_stores();
    }
  }

 private:
  using Pair = components::collectives::Pipeline::Pair;

  // The pairs in order, each row's loads issued `lookahead` pairs before the pair.
  void run_pairs() {
    std::deque<Pair> ahead;
    Pair p;
    const auto fill = [&] {
      while (static_cast<std::int64_t>(ahead.size()) <= a_.pipelining.lookahead && pipe_.next(p)) {
        prefetch(p);
        ahead.push_back(p);
      }
    };
    for (fill(); !ahead.empty(); fill()) {
      const Pair now = ahead.front();
      ahead.pop_front();
      run_pair(now);
    }
    store_deferred(true);
    while (!pending_.empty()) resolve(pending_.front().value);
  }

  // ---- The untimed moves before and after the clock ----------------------------------------
  // They go in runs of pieces that lie one after another in memory, as large as the free SRAM
  // allows, rather than one access per message-sized piece: the same data in far fewer
  // transfers and packets. Tiles have no slice view, so each piece is a tile of its own (made
  // as tile math makes its results) holding a copy of its elements; a load's run and its
  // pieces are held together for a moment, so a load run takes at most half the free SRAM, and
  // a store's pieces are dropped once stored.
  struct PieceAt {
    std::int64_t at = 0;  // elements into the input (loads) or output (stores)
    std::int64_t elems = 0;
    std::size_t value = 0;
  };
  // Every piece of the segments `want` selects, in memory order.
  template <class Want>
  std::vector<PieceAt> pieces_in_memory(bool input, Want want) const {
    std::vector<PieceAt> out;
    for (std::size_t s = 0; s < pipe_.segments().size(); ++s) {
      if (!want(s)) continue;
      for (std::int64_t r = 0; r < pipe_.rows(); ++r) {
        const Segment row = pipe_.row_segment(r, s);
        for (std::int64_t j = 0; j * piece_ < row.elems; ++j)
          out.push_back({(input ? row.in_at : row.out_at) + j * piece_,
                         std::min(piece_, row.elems - j * piece_), pipe_.value_index(r, s, j)});
      }
    }
    std::sort(out.begin(), out.end(),
              [](const PieceAt& a, const PieceAt& b) { return a.at < b.at; });
    return out;
  }
  // The run of pieces from `i` on that follow one another and fit `budget` bytes: its end.
  static std::size_t run_end(const std::vector<PieceAt>& pieces, std::size_t i,
                             std::uint64_t budget) {
    std::size_t e = i + 1;
    std::int64_t elems = pieces[i].elems;
    while (e < pieces.size() && pieces[e].at == pieces[e - 1].at + pieces[e - 1].elems &&
           static_cast<std::uint64_t>(elems + pieces[e].elems) * 4 <= budget)
      elems += pieces[e++].elems;
    return e;
  }
  void stage_loads() {
    const auto pieces =
        pieces_in_memory(true, [&](std::size_t s) { return pipe_.segments()[s].in_at >= 0; });
    const Ptr in = a_.in[static_cast<std::size_t>(me_)];
    for (std::size_t i = 0; i < pieces.size();) {
      const std::size_t e = run_end(pieces, i, tl_.sram_free() / 2);
      std::int64_t elems = 0;
      for (std::size_t q = i; q < e; ++q) elems += pieces[q].elems;
      const tl::Tile run = tl_.load(in + pieces[i].at * 4, {elems}, DType::f32);
      const std::byte* bytes = run.raw();  // null in timing-only runs
      for (std::int64_t at = 0; i < e; ++i) {
        tl::Tile t = tl_.make_tile({pieces[i].elems}, DType::f32);
        const auto n = static_cast<std::size_t>(pieces[i].elems) * 4;
        if (bytes != nullptr) std::memcpy(const_cast<std::byte*>(t.raw()), bytes + at, n);
        piece(pieces[i].value).value = std::move(t);
        at += static_cast<std::int64_t>(n);
      }
    }
  }
  void stage_stores() {
    const auto pieces =
        pieces_in_memory(false, [&](std::size_t s) { return pipe_.segments()[s].out_at >= 0; });
    const Ptr out = a_.out[static_cast<std::size_t>(me_)];
    for (std::size_t i = 0; i < pieces.size();) {
      const std::size_t first = i, e = run_end(pieces, i, tl_.sram_free());
      std::int64_t elems = 0;
      for (std::size_t q = i; q < e; ++q) elems += pieces[q].elems;
      tl::Tile run = tl_.make_tile({elems}, DType::f32);
      std::byte* bytes = const_cast<std::byte*>(run.raw());
      for (std::int64_t at = 0; i < e; ++i) {
        tl::Tile& held = piece(pieces[i].value).value;
        const auto n = static_cast<std::size_t>(pieces[i].elems) * 4;
        if (bytes != nullptr) std::memcpy(bytes + at, held.raw(), n);
        held = tl::Tile();
        at += static_cast<std::int64_t>(n);
      }
      tl_.store(out + pieces[first].at * 4, run);
    }
  }
  // buffer=hbm: a segment that is both input and output and never written is copied as it is,
  // in runs of at most half the free SRAM, and not kept (the steps load what they send of it).
  void copy_unwritten() {
    const Ptr in = a_.in[static_cast<std::size_t>(me_)],
              out = a_.out[static_cast<std::size_t>(me_)];
    for (std::size_t s = 0; s < pipe_.segments().size(); ++s) {
      const Segment& sg = pipe_.segments()[s];
      if (sg.in_at < 0 || sg.out_at < 0 || pipe_.last().write[s] >= 0) continue;
      // In tiles no larger than the loads the pipeline keeps ahead, which its SRAM bound counts.
      const auto most = std::max<std::int64_t>(
          1, std::min(static_cast<std::int64_t>(tl_.sram_free() / 8),
                      a_.pipelining.chunk * std::max<std::int64_t>(a_.pipelining.lookahead, 1)));
      for (std::int64_t at = 0; at < sg.elems; at += most) {
        const std::int64_t n = std::min(most, sg.elems - at);
        tl_.store(out + (sg.out_at + at) * 4, tl_.load(in + (sg.in_at + at) * 4, {n}, DType::f32));
      }
    }
  }

  // ---- The pairs ---------------------------------------------------------------------------
  // Row r of every segment, kept per row slot (a row's pairs are interleaved with others').
  const std::vector<Segment>& row_segments(std::int64_t r) {
    RowCache& c = rows_[static_cast<std::size_t>(r % pipe_.row_slots())];
    if (c.row != r) {
      c.view = &pipe_.row(r, c.segments);
      c.row = r;
    }
    return *c.view;
  }
  // buffer=hbm: the loads of pair p's first reads, issued now.
  // Segments of one piece that lie one after another go as one load (components/collectives/
  // pipeline.hpp's contiguous_run), cut into their pieces when first waited for.
  void prefetch(const Pair& p) {
    if (a_.buffer != Buffer::hbm) return;
    const Ptr in = a_.in[static_cast<std::size_t>(me_)];
    const auto segs = pipe_.loads(p.step);
    loads_.clear();
    for (const std::int32_t seg : segs) loads_.push_back(pipe_.row_segment(p.row, seg));
    const auto at = [&](std::size_t i) { return loads_[i].in_at; };
    const auto elems = [&](std::size_t i) { return loads_[i].elems; };
    for (std::size_t i = 0; i < loads_.size();) {
      const std::size_t e =
          components::collectives::contiguous_run(i, loads_.size(), piece_, message_, at, elems);
      if (e > i + 1) {
        auto run = std::make_shared<LoadRun>();
        std::int64_t total = 0;
        for (std::size_t q = i; q < e; ++q) {
          const std::size_t v = pipe_.value_index(p.row, static_cast<std::size_t>(segs[q]), 0);
          run->parts.emplace_back(v, loads_[q].elems);
          piece(v).run = run;
          total += loads_[q].elems;
        }
        run->handle = tl_.load_async(in + loads_[i].in_at * 4, {total}, DType::f32);
        i = e;
        continue;
      }
      const Segment& row = loads_[i];
      for (std::int64_t j = 0; j * piece_ < row.elems; ++j)
        piece(pipe_.value_index(p.row, static_cast<std::size_t>(segs[i]), j)).load =
            tl_.load_async(in + (row.in_at + j * piece_) * 4,
                           {std::min(piece_, row.elems - j * piece_)}, DType::f32);
      ++i;
    }
  }
  // A load of several pieces, waited for: each piece its part of it.
  void cut(const std::shared_ptr<LoadRun>& run) {
    const tl::Tile loaded = tl_.wait(run->handle);
    std::int64_t at = 0;
    for (const auto& [v, elems] : run->parts) {
      Piece& part = piece(v);
      part.value = tl_.make_tile({elems}, DType::f32);
      if (const std::byte* from = loaded.raw(); from != nullptr)
        std::memcpy(const_cast<std::byte*>(part.value.raw()), from + at * 4,
                    static_cast<std::size_t>(elems) * 4);
      part.run.reset();
      at += elems;
    }
  }
  // The piece's value as it is now: its receives waited for (and added), held in SRAM, or
  // (buffer=hbm) its load, waited for.
  const tl::Tile& value(std::size_t index) {
    resolve(index);
    return held_value(index);
  }
  const tl::Tile& held_value(std::size_t index) {
    if (Piece& p = piece(index); !p.value.valid() && p.run) {
      const std::shared_ptr<LoadRun> run = p.run;  // cut resets it
      cut(run);
    }
    Piece& p = piece(index);
    if (!p.value.valid()) {
      if (!p.load.valid())
        throw std::logic_error("collective schedule: program " + std::to_string(me_) +
                               " reads a piece before it has a value");
      p.value = tl_.wait(p.load);
      p.load = tl::LoadHandle();
    }
    return p.value;
  }
  // buffer=hbm: the final value of a piece goes to the output without waiting for it to land,
  // the stores in flight held to the budget.
  void store(std::int64_t at, const tl::Tile& t) {
    const auto bytes = static_cast<std::uint64_t>(t.shape().numel()) * 4;
    while (!stores_.empty() && (stored_bytes_ + bytes > a_.pipelining.store_budget ||
                                stores_.size() >= a_.pipelining.max_stores))
      wait_oldest_store();
    stores_.push_back({tl_.store_async(a_.out[static_cast<std::size_t>(me_)] + at * 4, t), bytes});
    stored_bytes_ += bytes;
  }
  void wait_oldest_store() {
    tl_.wait(stores_.front().handle);
    stored_bytes_ -= stores_.front().bytes;
    stores_.pop_front();
  }

  // An action with what it needs worked out before the pair's first send or receive lets
  // other programs run, so that the pair's records are read together, not one per wake-up.
  struct Planned {
    std::size_t value = 0;  // the piece's Pipeline::value_index
    std::int64_t peer = 0;
    std::int64_t elems = 0;
    std::int64_t out_at = -1;  // where a final value is stored (buffer=hbm); -1: not stored here
    std::int32_t segment = 0;
    std::int64_t piece = 0;
    bool send = false;
    bool add = false;        // a recv_add
    bool has_input = false;  // the segment starts from the input
    int switch_level = -1;   // a switch_reduce: its components::SwitchLevel
    // The first of a message's actions: how many it has (the ops grouped into it); 0 after.
    std::uint32_t message = 1;
  };

  void run_pair(const Pair& p) {
    a_.schedule->step(me_, p.step, step_);
    const std::vector<Segment>& row = row_segments(p.row);
    step_actions(row, step_, piece_, a_.pipelining.window, actions_, a_.pipelining.message);
    const bool hbm = a_.buffer == Buffer::hbm;
    // Writes into each piece in this pair still to come: its final value is stored (buffer=hbm)
    // after the last one.
    if (hbm) writes_.count(step_, actions_);
    const LastUses& last = pipe_.last();
    plan_.clear();
    for (const Action& act : actions_)
      for (std::uint32_t c = 0; c < act.count; ++c) {
        const Op& op = step_[act.op + c];
        const auto s = static_cast<std::size_t>(op.segment);
        const Segment& sg = row[s];
        const bool final = hbm && last.write[s] == p.step && sg.out_at >= 0;
        plan_.push_back({pipe_.value_index(p.row, s, act.piece), op.peer,
                         std::min(piece_, sg.elems - act.piece * piece_),
                         final ? sg.out_at + act.piece * piece_ : -1, op.segment, act.piece,
                         act.send, op.kind == OpKind::recv_add, sg.in_at >= 0,
                         op.kind == OpKind::switch_reduce ? static_cast<int>(op.peer) : -1,
                         c == 0 ? act.count : 0});
      }
    for (std::size_t i = 0; i < plan_.size(); i += plan_[i].message) {
      const std::span<const Planned> message(plan_.data() + i, plan_[i].message);
      const Planned& a = message.front();
      if (a.send) {
        send(message);
        continue;
      }
      // Posted, not waited for: the message is read out of its slot as it arrives, and the
      // program goes on to its next pair, so a channel keeps its rows in flight over a long
      // route. The receive is waited for (and added to what it adds to) when its value is
      // next needed. Only this program changes its pieces: whether it adds is known now.
      if (a.switch_level >= 0)
        switch_reduce(message);
      else
        post_receive(message);
      for (const Planned& x : message)
        if (x.out_at >= 0 && writes_.done(x.segment, x.piece))
          deferred_.push_back({x.value, x.out_at, pairs_, p.row, p.step});
    }
    ++pairs_;
    last_pair_ = p;
    // Final values go to memory `lookahead` pairs after the pair that received them, and not
    // before their row's next step, so that their receives are not waited for before they are
    // needed.
    store_deferred(false);
    // What is not needed after the pair (a value still to be stored goes once stored).
    for (const std::int32_t seg : pipe_.dead_after(p.step)) {
      const auto s = static_cast<std::size_t>(seg);
      if (kept(s)) continue;
      for (std::int64_t j = 0; j < pipe_.pieces_per_row(); ++j)
        drop(pipe_.value_index(p.row, s, j));
    }
  }
  // The message's pieces gathered into one tile (the DMA engine reads them from where they
  // are: no vector work).
  tl::Tile gather(std::span<const Planned> message) {
    std::int64_t elems = 0;
    for (const Planned& x : message) elems += x.elems;
    tl::Tile gathered = tl_.make_tile({elems}, DType::f32);
    auto* bytes = const_cast<std::byte*>(gathered.raw());  // null in timing-only runs
    std::size_t at = 0;
    for (const Planned& x : message) {
      const tl::Tile& v = value(x.value);
      const auto n = static_cast<std::size_t>(x.elems) * 4;
      if (bytes != nullptr) std::memcpy(bytes + at, v.raw(), n);
      at += n;
    }
    return gathered;
  }
  // A message of one piece, or of several gathered.
  void send(std::span<const Planned> message) {
    const tl::Peer to = peer_of(tl_, message.front().peer);
    if (message.size() == 1)
      tl_.send(to, value(message.front().value));
    else
      tl_.send(to, gather(message));
  }
  // Up to the switch now; the sum replaces each piece when it is next needed.
  void switch_reduce(std::span<const Planned> message) {
    const tl::Scope scope =
        message.front().switch_level == static_cast<int>(components::SwitchLevel::ucie)
            ? tl::Scope::sip
            : tl::Scope::all;
    if (message.size() == 1) {
      tl::ReduceHandle reduced = tl_.switch_reduce_async(value(message.front().value), scope);
      PendingRecv& r = pending_.emplace_back();
      r.value = message.front().value;
      r.reduced = std::move(reduced);
      return;
    }
    auto shared = std::make_shared<Scattered>();
    shared->reduced = tl_.switch_reduce_async(gather(message), scope);
    scatter(message, shared);
  }
  // Each piece of a message received (or reduced) whole: a receive of its part.
  void scatter(std::span<const Planned> message, const std::shared_ptr<Scattered>& shared) {
    std::int64_t at = 0;
    for (const Planned& x : message) {
      PendingRecv& r = pending_.emplace_back();
      r.value = x.value;
      r.scattered = shared;
      r.at = at;
      r.elems = x.elems;
      at += x.elems;
    }
  }
  // A receive posted: of one piece, or of a message of several, each piece its part of it.
  void post_receive(std::span<const Planned> message) {
    const auto adds = [&](const Planned& x) {
      return x.add && (has_value(x.value) || is_pending(x.value) || x.has_input);
    };
    const tl::Peer from = peer_of(tl_, message.front().peer);
    if (message.size() == 1) {
      const Planned& a = message.front();
      const bool add = adds(a);
      if (!add) replaced(a.value);
      tl::RecvHandle handle = tl_.recv_async(from, {a.elems}, DType::f32);
      PendingRecv& r = pending_.emplace_back();
      r.value = a.value;
      r.handle = std::move(handle);
      r.adds = add;
      return;
    }
    std::int64_t elems = 0;
    for (const Planned& x : message) elems += x.elems;
    thread_local std::vector<char> add;  // whether each part adds, before any is posted
    add.clear();
    for (const Planned& x : message) add.push_back(adds(x) ? 1 : 0);
    auto shared = std::make_shared<Scattered>();
    shared->handle = tl_.recv_async(from, {elems}, DType::f32);
    for (std::size_t i = 0; i < message.size(); ++i)
      if (add[i] == 0) replaced(message[i].value);
    const std::size_t first = pending_.size();
    scatter(message, shared);
    for (std::size_t i = 0; i < message.size(); ++i) pending_[first + i].adds = add[i] != 0;
  }
  // A receive that does not add is posted into the piece: every later read of the piece
  // waits for it first (value()), so what the piece holds now is dead and its SRAM free. (A
  // leaf of a tree with buffer=sram held its sent input beside its received result for the
  // whole vector: twice the vector, which its SRAM bound does not count.)
  void replaced(std::size_t index) {
    if (!has_value(index) || is_pending(index)) return;
    Piece& p = piece(index);
    if (!p.run && !p.load.valid()) p.value = tl::Tile();
  }
  // A receive's value: its message waited for. A part of a message of several: the message,
  // once there, is cut into every part's tile at once, so that it is not held beside them.
  tl::Tile received(std::size_t i) {
    auto& r = pending_[i];
    if (r.part.valid()) return std::move(r.part);
    if (!r.scattered) return r.handle.valid() ? tl_.wait(r.handle) : tl_.wait(r.reduced);
    const std::shared_ptr<Scattered> m = r.scattered;
    const tl::Tile message = m->handle.valid() ? tl_.wait(m->handle) : tl_.wait(m->reduced);
    for (PendingRecv& q : pending_) {
      if (q.scattered != m) continue;
      q.part = tl_.make_tile({q.elems}, DType::f32);
      if (const std::byte* from = message.raw(); from != nullptr)
        std::memcpy(const_cast<std::byte*>(q.part.raw()), from + q.at * 4,
                    static_cast<std::size_t>(q.elems) * 4);
      q.scattered.reset();
    }
    return std::move(r.part);
  }
  // The receives into piece `index` posted and not yet waited for, waited for in order.
  void resolve(std::size_t index) {
    for (std::size_t i = 0; i < pending_.size();) {
      if (pending_[i].value != index) {
        ++i;
        continue;
      }
      tl::Tile got = received(i);
      if (pending_[i].adds) got = got + held_value(index);
      piece(index).value = std::move(got);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  bool is_pending(std::size_t index) const {
    return std::any_of(pending_.begin(), pending_.end(),
                       [&](const PendingRecv& r) { return r.value == index; });
  }
  void drop(std::size_t index) {
    if (std::any_of(deferred_.begin(), deferred_.end(),
                    [&](const Deferred& d) { return d.value == index; })) {
      if (std::find(dropped_.begin(), dropped_.end(), index) == dropped_.end())
        dropped_.push_back(index);
      return;
    }
    resolve(index);
    forget(index);
  }
  // The deferred stores of pairs `lookahead` or more pairs back whose rows have reached their
  // next step (`all`: every one).
  void store_deferred(bool all) {
    const std::int64_t lag = std::max<std::int64_t>(1, a_.pipelining.lookahead);
    const auto due = [&](std::size_t i) {
      const Deferred& d = deferred_[i];
      return all || (d.pair + lag <= pairs_ && pipe_.reached(last_pair_, d.row, d.step + 1));
    };
    while (!deferred_.empty() && due(0)) {
      // Final values that lie one after another go as one store.
      std::size_t n = 1;
      while (n < deferred_.size() && due(n)) ++n;
      const std::size_t e = components::collectives::contiguous_run(
          0, n, piece_, message_, [&](std::size_t i) { return deferred_[i].out_at; },
          [&](std::size_t i) { return value(deferred_[i].value).shape().numel(); });
      if (e == 1) {
        store(deferred_.front().out_at, value(deferred_.front().value));
      } else {
        std::int64_t total = 0;
        for (std::size_t i = 0; i < e; ++i) total += value(deferred_[i].value).shape().numel();
        tl::Tile run = tl_.make_tile({total}, DType::f32);
        auto* bytes = const_cast<std::byte*>(run.raw());  // null in timing-only runs
        for (std::size_t i = 0, at = 0; i < e; ++i) {
          const tl::Tile& v = value(deferred_[i].value);
          const auto size = static_cast<std::size_t>(v.shape().numel()) * 4;
          if (bytes != nullptr) std::memcpy(bytes + at, v.raw(), size);
          at += size;
        }
        store(deferred_.front().out_at, run);
      }
      for (std::size_t i = 0; i < e; ++i) {
        const Deferred d = deferred_.front();
        deferred_.pop_front();
        const auto was = std::find(dropped_.begin(), dropped_.end(), d.value);
        if (was != dropped_.end() &&
            std::none_of(deferred_.begin(), deferred_.end(),
                         [&](const Deferred& x) { return x.value == d.value; })) {
          dropped_.erase(was);
          forget(d.value);
        }
      }
    }
  }
  // Whether a segment stays held to the end (buffer=sram keeps its outputs in SRAM).
  bool kept(std::size_t s) const {
    return a_.buffer == Buffer::sram && pipe_.segments()[s].out_at >= 0;
  }

  struct RowCache {
    std::int64_t row = -1;
    std::vector<Segment> segments;  // the row's, unless the pipeline has one row
    const std::vector<Segment>* view = nullptr;
  };
  struct Store {
    tl::StoreHandle handle;
    std::uint64_t bytes = 0;
  };

  tl::Context& tl_;
  const ScheduleArgs& a_;
  std::int64_t me_;
  components::collectives::Pipeline pipe_;
  std::int64_t piece_;
  std::int64_t message_;  // elements a message, a load or a store of several pieces takes at most
  std::vector<Segment> loads_;  // a pair's, scratch
  // Each piece's value by Pipeline::value_index (invalid: not held) and, buffer=hbm, its load
  // in flight.
  struct LoadRun {
    tl::LoadHandle handle;
    std::vector<std::pair<std::size_t, std::int64_t>> parts;  // (value index, elements)
  };
  struct Piece {
    tl::Tile value;
    tl::LoadHandle load;
    std::shared_ptr<LoadRun> run;  // instead of `load`: a part of a load of several pieces
  };
  std::vector<Piece> values_;
  std::unordered_map<std::size_t, Piece> live_;
  // The piece's record: buffer=sram holds every piece for the whole collective (values_, made
  // at the start); buffer=hbm holds the few rows in flight of a vector of any length, so only
  // the pieces live now are kept (live_), and a program's record does not grow with the
  // segments (a flat ring over 2048 programs has 2048 of them).
  Piece& piece(std::size_t index) { return values_.empty() ? live_[index] : values_[index]; }
  bool has_value(std::size_t index) const {
    if (!values_.empty()) return values_[index].value.valid();
    const auto it = live_.find(index);
    return it != live_.end() && it->second.value.valid();
  }
  // The piece's value is not needed any more (a load still in flight stays).
  void forget(std::size_t index) {
    if (!values_.empty()) {
      values_[index].value = tl::Tile();
      return;
    }
    const auto it = live_.find(index);
    if (it == live_.end()) return;
    it->second.value = tl::Tile();
    if (!it->second.load.valid() && !it->second.run) live_.erase(it);
  }
  // The receives posted and not yet waited for, in the order posted (a few: each is waited for
  // when its piece is next needed).
  // A message of several pieces, received (or reduced in a switch) once for all of its parts.
  struct Scattered {
    tl::RecvHandle handle;
    tl::ReduceHandle reduced;
  };
  struct PendingRecv {
    std::size_t value = 0;  // the piece it is received into
    tl::RecvHandle handle;
    bool adds = false;
    tl::ReduceHandle reduced;  // a switch_reduce's, instead of a receive
    // Instead, a part of a message of several pieces (its elements from `at` on) until the
    // message is waited for, then the part's value.
    std::shared_ptr<Scattered> scattered;
    std::int64_t at = 0, elems = 0;
    tl::Tile part;
  };
  std::vector<PendingRecv> pending_;
  // The pieces dropped while a store of theirs waits (a few): forgotten once stored.
  std::vector<std::size_t> dropped_;
  // Final values to store, each with the pair (counted from 0) that received it.
  struct Deferred {
    std::size_t value = 0;
    std::int64_t out_at = 0;
    std::int64_t pair = 0;
    std::int64_t row = 0, step = 0;  // the pair's
  };
  std::deque<Deferred> deferred_;
  std::int64_t pairs_ = 0;
  Pair last_pair_;              // the last pair performed
  std::vector<RowCache> rows_;  // per row slot
  std::deque<Store> stores_;
  std::uint64_t stored_bytes_ = 0;  // in flight
  Step step_;
  std::vector<Action> actions_;
  std::vector<Planned> plan_;
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
  m.pipelining = args.pipelining;
  m.slot_limit = args.slot_limit;
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
