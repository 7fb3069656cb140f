#pragma once
// A schedule (schedule.hpp) run as a pipeline of rows, the way a collective library streams a
// vector through small buffers (NCCL's chunks and slices): the order in which one program
// performs its part, which the executor (kernels/collectives/executor.hpp) and the alpha-beta
// model (alpha_beta_model.hpp) both follow.
//
// Every segment is cut into rows of `chunk` elements; row r of the schedule is the schedule
// run over row r of every segment, so a program holds only the rows in flight, whatever the
// vector's size. Where the schedule allows (Schedule::rows_across_segments), a row lies across
// the segments in memory instead of each segment being one range: row r of every segment
// together is one range, in the segments' order, so that a step's run of segments is one
// range in every row, as NCCL's ring all-reduce lays each loop's chunks. A program performs the
// (row, step) pairs in order of row * stagger + the step's wave offset (step * spacing, unless the
// schedule places its steps itself: a wave), older rows first within a wave: with many steps (a
// ring) rows start several steps apart, with few (a tree's reduce and broadcast) a row's steps lie
// several rows apart, so that about `depth` rows are in flight. A pair's step forwards what an
// earlier wave received, so each link carries messages of several rows at once instead of one hop's
// latency per step. With the same offsets everywhere, every program orders its pairs alike, both
// ends of a channel list its messages in the same (wave, row, step-action) order, and each pair,
// like a step, receives every message it is sent: the order never deadlocks. Offsets that differ
// between programs must keep that (Schedule::wave_offsets says how).
//
// Where the data is (buffer=hbm), a segment's row is loaded `lookahead` pairs before the pair
// that first reads it, so loads overlap messages, and stored once final without waiting for
// the write to land, up to `store_budget` bytes and `max_stores` stores in flight.

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "components/collectives/schedule.hpp"

namespace cubesim::components::collectives {

struct Pipelining {
  std::int64_t piece = 0;          // elements of a segment per message at most
  std::int64_t message = 0;        // elements per message at most (schedule.hpp; 0: piece)
  std::int64_t chunk = 0;          // elements of each segment per row, in pieces of at most `piece`
  std::uint32_t window = 1;        // messages per peer sent ahead of the receives (the slots)
  std::uint32_t depth = 1;         // rows in flight the stagger and spacing aim at
  std::int64_t stagger = 1;        // waves between the starts of successive rows
  std::int64_t spacing = 1;        // waves between a row's successive steps
  std::int64_t lookahead = 1;      // pairs a load is issued before the pair that needs it
  std::uint64_t store_budget = 0;  // bytes of stores in flight at most (buffer=hbm)
  std::uint64_t max_stores = 1;    // stores in flight at most (buffer=hbm)
  std::int64_t span = 0;           // the most waves from a row's first step to its last
  // Waves after a row's last step before the values final in it are stored (0: once
  // `lookahead` pairs have passed): where no later step paces the rows, what keeps `depth`
  // rows' receives in flight instead of waiting for each as soon as it is posted.
  std::int64_t tail = 0;
};

// Sets p's stagger, spacing and tail so that about `depth` rows are in flight when a program
// has `steps` steps.
void keep_in_flight(Pipelining& p, std::int64_t steps, std::int64_t depth);
// The rows of messages a channel's slots hold: window / the pieces of a row of a segment.
std::int64_t channel_rows(const Pipelining& p);
// The waves from a row's first step to its last for program g of `schedule` (its wave offsets,
// or steps x spacing).
std::int64_t row_span(const Schedule& schedule, std::int64_t g, const Pipelining& p);
// The most rows whose values a program holds at once with buffer=hbm when a row spans `span`
// waves: those in flight, rows starting in the wave another ends, and those whose loads are
// issued.
std::int64_t rows_held(const Pipelining& p, std::int64_t span);

// What a schedule moves through memory per byte of its messages, with the data in HBM: the
// bytes a program loads (segments first read from its input) and stores (segments written and
// in its output), each over the most it sends or receives, the most of any program. What the
// loads ahead and the stores in flight must keep up with: an all-gather stores what it
// receives and loads little, a reduce-scatter the other way round, an all-reduce half of each.
struct MemoryTraffic {
  double loads = 1.0, stores = 1.0;
};
MemoryTraffic memory_traffic(const Schedule& schedule);

// Ranges 0 .. n-1 (range i at at(i) in memory, elems(i) long), each at most `piece`, that
// lie one after another, go as one transfer of at most `most` elements (a load of a step's
// several small segments, the stores of several final values): the end of the run from
// range i on (i + 1: alone).
template <class At, class Elems>
std::size_t contiguous_run(std::size_t i, std::size_t n, std::int64_t piece, std::int64_t most,
                           At at, Elems elems) {
  std::size_t e = i + 1;
  if (elems(i) > piece) return e;
  for (std::int64_t total = elems(i); e < n; ++e) {
    const std::int64_t next = elems(e);
    if (next <= 0 || next > piece || total + next > most || at(e) != at(e - 1) + elems(e - 1))
      break;
    total += next;
  }
  return e;
}

// One program's part of a schedule as a pipeline of rows.
class Pipeline {
 public:
  struct Pair {
    std::int64_t row = 0, step = 0;
  };

  Pipeline(const Schedule& schedule, std::int64_t program, const Pipelining& p, Buffer buffer);

  const std::vector<Segment>& segments() const { return *segments_; }  // the whole segments
  std::int64_t rows() const { return rows_; }
  std::int64_t steps() const { return steps_; }
  // The rows whose values are kept at once: every row with buffer=sram, else those in flight.
  std::int64_t row_slots() const { return row_slots_; }
  std::int64_t pieces_per_row() const { return ppr_; }

  // The next pair in the program's order; false after the last.
  bool next(Pair& pair);
  // Whether `done`, a pair the program has performed, comes at or after the pair of row r and
  // step k in its order (past the row's last step: `tail` waves after it, or true with no
  // tail): what a value final after a step of a row waits for before it is stored, so that its
  // store never waits for a receive the row's next step does not need yet.
  bool reached(const Pair& done, std::int64_t r, std::int64_t k) const {
    if (k >= steps_ && tail_ == 0) return true;
    const std::int64_t at = done.row * stagger_ + offset(done.step),
                       w = r * stagger_ + (k >= steps_ ? offset(steps_ - 1) + tail_ : offset(k));
    return at > w || (at == w && done.row >= r);
  }

  // Row r of segment s: its elements and where they are in the input and output.
  Segment row_segment(std::int64_t r, std::size_t s) const;
  // Row r of every segment (the segments step_actions cuts into pieces).
  void row_segments(std::int64_t r, std::vector<Segment>& out) const;
  // The same, as segments() itself when there is one row (then `scratch` is left as it is), so
  // that a program of thousands of segments does not hold a copy of them.
  const std::vector<Segment>& row(std::int64_t r, std::vector<Segment>& scratch) const {
    if (rows_ == 1) return *segments_;
    row_segments(r, scratch);
    return scratch;
  }
  // Piece j of row r of segment s: where the value is kept.
  std::size_t value_index(std::int64_t r, std::size_t s, std::int64_t j) const {
    return (static_cast<std::size_t>(r % row_slots_) * segments_->size() + s) *
               static_cast<std::size_t>(ppr_) +
           static_cast<std::size_t>(j);
  }
  std::size_t values() const {
    return static_cast<std::size_t>(row_slots_) * segments_->size() *
           static_cast<std::size_t>(ppr_);
  }

  // The segments whose value step k first reads from the input (buffer=hbm loads them).
  std::span<const std::int32_t> loads(std::int64_t k) const { return loads_.of(k); }
  // The segments step k touches whose value no later step reads: never touched again, or next
  // replaced by a receive (a ring all-reduce's partial sum, passed on, until its all-gather).
  std::span<const std::int32_t> dead_after(std::int64_t k) const { return dead_.of(k); }
  const LastUses& last() const { return last_; }

  // A list of segments per step, the lists one after another: every program holds its own for
  // each of thousands of steps, and a vector per step would be an allocation each. Where every
  // list is short (a ring's step loads and drops one segment or a few), each step keeps its
  // length in a byte and every kBlock-th step where its list starts, instead of 4 bytes a step:
  // a 2048-program ring's programs hold 2 x 4095 lists each.
  class PerStep {
   public:
    PerStep() = default;
    // From (step, segment) entries: each step's list in the order its entries come.
    PerStep(std::int64_t steps, const std::vector<std::pair<std::int64_t, std::int32_t>>& entries);
    std::span<const std::int32_t> of(std::int64_t k) const {
      const auto i = static_cast<std::size_t>(k);
      if (!wide_.empty()) return {segments_.data() + wide_[i], segments_.data() + wide_[i + 1]};
      std::size_t at = first_[i / kBlock];
      for (std::size_t j = i - i % kBlock; j < i; ++j) at += count_[j];
      return {segments_.data() + at, count_[i]};
    }

   private:
    static constexpr std::size_t kBlock = 32;
    std::vector<std::int32_t> segments_;
    std::vector<std::uint32_t> first_;  // per block of kBlock steps: where its first list starts
    std::vector<std::uint8_t> count_;   // per step: its list's length
    // Instead, when some list has 256 segments or more: per step, and one past the last, where
    // its list starts.
    std::vector<std::uint32_t> wide_;
  };

 private:
  // Step k's wave after the row's first: the schedule's, or k x spacing.
  std::int64_t offset(std::int64_t k) const {
    return offsets_.empty() ? k * spacing_ : offsets_[static_cast<std::size_t>(k)];
  }
  // The first step from `since` waves after the row's first on (steps_ when none).
  std::int64_t first_step_at(std::int64_t since) const;

  // The schedule's segments of the program, shared with the programs built before it that have
  // the same (every program of an all-reduce has): on a flat ring of 2048 programs each would
  // otherwise hold 2048 of them.
  std::shared_ptr<const std::vector<Segment>> segments_;
  std::int64_t piece_, chunk_, stagger_, spacing_, tail_, steps_, rows_ = 0, ppr_ = 1,
                                                                  row_slots_ = 1;
  // Rows laid across the segments: the segments' length (0: each segment one range).
  std::int64_t across_ = 0;
  // Per step: its wave after the row's first, where the schedule places its steps itself
  // (Schedule::wave_offsets); empty: step k at k x spacing, computed as needed.
  std::vector<std::int64_t> offsets_;
  PerStep loads_, dead_;
  LastUses last_;
  // The order's position: the wave, the row in it and that row's next step to look at (0: not
  // yet looked up).
  std::int64_t wave_ = 0, row_ = 0, step_ = 0;
};

}  // namespace cubesim::components::collectives
