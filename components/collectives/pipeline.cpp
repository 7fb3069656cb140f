#include "components/collectives/pipeline.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace cubesim::components::collectives {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

using Entries = std::vector<std::pair<std::int64_t, std::int32_t>>;

// What step k of `schedule` first reads from program g's input: a segment sent (not forwarded
// from a receive of the same step) or added to before anything was received into it.
Entries first_loads(const Schedule& schedule, std::int64_t g, std::int64_t steps,
                    const std::vector<Segment>& segments) {
  Entries loads;
  std::vector<char> valued(segments.size(), 0);
  Step step;
  std::vector<std::int32_t> into;  // the segments the step receives into, sorted
  for (std::int64_t k = 0; k < steps; ++k) {
    schedule.step(g, k, step);
    into.clear();
    for (const Op& op : step)
      if (op.kind != OpKind::send) into.push_back(op.segment);
    std::sort(into.begin(), into.end());
    const auto received = [&](std::int32_t s) {
      return std::binary_search(into.begin(), into.end(), s);
    };
    for (const Op& op : step) {
      const auto s = static_cast<std::size_t>(op.segment);
      const bool reads = op.kind == OpKind::recv_add || op.kind == OpKind::switch_reduce ||
                         (op.kind == OpKind::send && !received(op.segment));
      if (reads && !valued[s] && segments[s].in_at >= 0) {
        loads.emplace_back(k, op.segment);
        valued[s] = 1;
      }
    }
    for (const Op& op : step)
      if (op.kind != OpKind::send) valued[static_cast<std::size_t>(op.segment)] = 1;
  }
  return loads;
}

// What dead_after gives, for every step of program g: each step's segments in ascending order.
Entries dead_values(const Schedule& schedule, std::int64_t g, std::int64_t steps,
                    std::size_t segments) {
  // A segment's value dies after a step that touches it when the next step touching it does
  // not read it (a send not forwarded from a receive of that step, or an add) but only
  // replaces it, or when no step touches it again: each segment's last touch so far, and
  // whether the step being looked at reads it.
  std::vector<std::int64_t> last(segments, -1);
  std::vector<char> reads(segments, 0);
  Entries dead;
  Step step;
  for (std::int64_t k = 0; k < steps; ++k) {
    schedule.step(g, k, step);
    for (const Op& op : step) reads[static_cast<std::size_t>(op.segment)] = 0;
    for (const Op& op : step) {
      const bool received = std::any_of(step.begin(), step.end(), [&](const Op& o) {
        return o.kind == OpKind::recv && o.segment == op.segment;
      });
      if (op.kind == OpKind::recv_add || op.kind == OpKind::switch_reduce ||
          (op.kind == OpKind::send && !received))
        reads[static_cast<std::size_t>(op.segment)] = 1;
    }
    for (const Op& op : step) {
      const auto s = static_cast<std::size_t>(op.segment);
      if (last[s] == k) continue;  // a later op of the step on the same segment
      if (last[s] >= 0 && !reads[s]) dead.emplace_back(last[s], op.segment);
      last[s] = k;
    }
  }
  for (std::size_t s = 0; s < segments; ++s)
    if (last[s] >= 0) dead.emplace_back(last[s], static_cast<std::int32_t>(s));
  std::sort(dead.begin(), dead.end());
  return dead;
}

}  // namespace

MemoryTraffic memory_traffic(const Schedule& schedule) {
  MemoryTraffic most{0.0, 0.0};
  Step step;
  for (std::int64_t g = 0; g < schedule.programs(); ++g) {
    const std::vector<Segment> segments = schedule.segments(g);
    const std::int64_t steps = schedule.steps(g);
    std::int64_t sent = 0, received = 0, loaded = 0, stored = 0;
    for (std::int64_t k = 0; k < steps; ++k) {
      schedule.step(g, k, step);
      for (const Op& op : step) {
        const std::int64_t elems = segments[static_cast<std::size_t>(op.segment)].elems;
        if (op.kind != OpKind::recv && op.kind != OpKind::recv_add) sent += elems;
        if (op.kind != OpKind::send) received += elems;
      }
    }
    for (const auto& [k, s] : first_loads(schedule, g, steps, segments))
      loaded += segments[static_cast<std::size_t>(s)].elems;
    const LastUses last(schedule, g, steps, segments.size());
    for (std::size_t s = 0; s < segments.size(); ++s)
      if (last.write[s] >= 0 && segments[s].out_at >= 0) stored += segments[s].elems;
    const auto messages = static_cast<double>(std::max(sent, received));
    if (messages <= 0) continue;
    most.loads = std::max(most.loads, std::min(1.0, static_cast<double>(loaded) / messages));
    most.stores = std::max(most.stores, std::min(1.0, static_cast<double>(stored) / messages));
  }
  return most;
}

void keep_in_flight(Pipelining& p, std::int64_t steps, std::int64_t depth) {
  steps = std::max<std::int64_t>(steps, 1);
  depth = std::max<std::int64_t>(depth, 1);
  // A row is in flight for (steps - 1) * spacing + 1 waves, and a row starts every stagger.
  p.stagger = steps >= depth ? ceil_div(steps, depth) : 1;
  p.spacing =
      steps >= depth || steps == 1 ? 1 : std::max<std::int64_t>(1, (depth - 1) / (steps - 1));
  // A value final after a row's last step is stored when the row would reach its next step,
  // as a value sent on is: waited for sooner, a reduce-scatter's last receive held up every row
  // by a crossing. A row of one step (an in-network reduction across SIPs: up to the switch and
  // the sum back) has no step of another row waiting for a message to pace it, so its results
  // are stored `depth` rows later, which keeps that many in flight.
  p.tail = steps == 1 ? depth - 1 : p.spacing;
}

std::int64_t channel_rows(const Pipelining& p) {
  return static_cast<std::int64_t>(p.window) /
         ceil_div(std::max<std::int64_t>(p.chunk, 1), std::max<std::int64_t>(p.piece, 1));
}

std::int64_t row_span(const Schedule& schedule, std::int64_t g, const Pipelining& p) {
  const std::vector<std::int64_t> offsets = schedule.wave_offsets(g, channel_rows(p));
  if (!offsets.empty()) return offsets.back();
  return (std::max<std::int64_t>(schedule.steps(g), 1) - 1) * std::max<std::int64_t>(p.spacing, 1);
}

std::int64_t rows_held(const Pipelining& p, std::int64_t span) {
  const std::int64_t stagger = std::max<std::int64_t>(p.stagger, 1);
  return ceil_div(span + 1 + std::max<std::int64_t>(p.tail, 0), stagger) + 3 +
         ceil_div(std::max<std::int64_t>(p.lookahead, 1), stagger);
}

Pipeline::PerStep::PerStep(std::int64_t steps, const Entries& entries) : segments_(entries.size()) {
  const auto n = static_cast<std::size_t>(steps);
  std::vector<std::uint32_t> start(n + 1, 0);
  for (const auto& [k, s] : entries) ++start[static_cast<std::size_t>(k) + 1];
  bool short_lists = true;
  for (std::size_t k = 1; k <= n; ++k) {
    short_lists = short_lists && start[k] <= std::numeric_limits<std::uint8_t>::max();
    start[k] += start[k - 1];
  }
  std::vector<std::uint32_t> at(start.begin(), start.end() - 1);
  for (const auto& [k, s] : entries) segments_[at[static_cast<std::size_t>(k)]++] = s;
  if (!short_lists) {
    wide_ = std::move(start);
    return;
  }
  count_.resize(n);
  for (std::size_t k = 0; k < n; ++k)
    count_[k] = static_cast<std::uint8_t>(start[k + 1] - start[k]);
  for (std::size_t k = 0; k < n; k += kBlock) first_.push_back(start[k]);
}

namespace {

// schedule.segments(g), shared with the last program asked for when equal (pipelines are built
// program after program, on one thread per simulation).
std::shared_ptr<const std::vector<Segment>> shared_segments(const Schedule& schedule,
                                                            std::int64_t g) {
  thread_local std::shared_ptr<const std::vector<Segment>> last;
  std::vector<Segment> mine = schedule.segments(g);
  const auto same = [](const Segment& a, const Segment& b) {
    return a.elems == b.elems && a.in_at == b.in_at && a.out_at == b.out_at;
  };
  if (last && last->size() == mine.size() &&
      std::equal(mine.begin(), mine.end(), last->begin(), same))
    return last;
  last = std::make_shared<const std::vector<Segment>>(std::move(mine));
  return last;
}

}  // namespace

Pipeline::Pipeline(const Schedule& schedule, std::int64_t g, const Pipelining& p, Buffer buffer)
    : segments_(shared_segments(schedule, g)),
      piece_(std::max<std::int64_t>(p.piece, 1)),
      chunk_(p.chunk),
      stagger_(std::max<std::int64_t>(p.stagger, 1)),
      spacing_(std::max<std::int64_t>(p.spacing, 1)),
      tail_(std::max<std::int64_t>(p.tail, 0)),
      steps_(schedule.steps(g)),
      last_(schedule, g, steps_, segments_->size()) {
  std::int64_t longest = 0;
  for (const Segment& s : *segments_) longest = std::max(longest, s.elems);
  const auto placed = [&](std::int64_t at) { return at < 0 || at % longest == 0; };
  if (schedule.rows_across_segments() && longest > 0 &&
      std::all_of(segments_->begin(), segments_->end(), [&](const Segment& s) {
        return s.elems == longest && placed(s.in_at) && placed(s.out_at) &&
               (s.in_at < 0 || s.out_at < 0 || s.in_at == s.out_at);
      }))
    across_ = longest;
  if (chunk_ <= 0 || chunk_ > longest) chunk_ = std::max<std::int64_t>(longest, 1);
  rows_ = longest > 0 ? ceil_div(longest, chunk_) : 0;
  ppr_ = ceil_div(chunk_, piece_);
  offsets_ = schedule.wave_offsets(g, channel_rows(p));
  if (!offsets_.empty() && static_cast<std::int64_t>(offsets_.size()) != steps_)
    throw std::logic_error("collective pipeline: program " + std::to_string(g) + " has " +
                           std::to_string(steps_) + " steps but " +
                           std::to_string(offsets_.size()) + " wave offsets");
  const std::int64_t span = offset(std::max<std::int64_t>(steps_, 1) - 1);
  if (buffer == Buffer::sram) {
    row_slots_ = std::max<std::int64_t>(rows_, 1);
    loads_ = PerStep(steps_, {});
  } else {
    // The rows a pair can touch: those in flight, a row starting in the same wave as another
    // ends, and the rows the loads issued `lookahead` pairs ahead start; and the rows whose
    // final values wait `lookahead` pairs for their stores, which rows_held's SRAM counts as
    // its own bytes (plan_sram_bytes's `deferred`) but whose slots a row's loads issued ahead
    // must not take: with as many slots only, a one-step row loaded into the slot of a row
    // whose store still waited (its receive added to the newer row's input).
    row_slots_ =
        std::min(std::max<std::int64_t>(rows_, 1),
                 rows_held(p, span) + ceil_div(std::max<std::int64_t>(p.lookahead, 1), stagger_));
    loads_ = PerStep(steps_, first_loads(schedule, g, steps_, *segments_));
  }
  dead_ = PerStep(steps_, dead_values(schedule, g, steps_, segments_->size()));
}

std::int64_t Pipeline::first_step_at(std::int64_t since) const {
  if (!offsets_.empty())
    return std::lower_bound(offsets_.begin(), offsets_.end(), since) - offsets_.begin();
  return std::min(steps_, since <= 0 ? 0 : ceil_div(since, spacing_));
}

bool Pipeline::next(Pair& pair) {
  if (rows_ == 0 || steps_ == 0) return false;
  const std::int64_t span = offset(steps_ - 1);  // a row's first wave to its last
  const std::int64_t last_wave = (rows_ - 1) * stagger_ + span;
  for (; wave_ <= last_wave; ++wave_, row_ = 0, step_ = 0) {
    // Rows started by this wave and not yet finished, older first; each row's steps that lie
    // in this wave.
    const std::int64_t hi = std::min(rows_ - 1, wave_ / stagger_);
    const std::int64_t lo = wave_ <= span ? 0 : ceil_div(wave_ - span, stagger_);
    for (row_ = std::max(row_, lo); row_ <= hi; ++row_, step_ = 0) {
      const std::int64_t since = wave_ - row_ * stagger_;
      if (step_ == 0) step_ = first_step_at(since);
      if (step_ < steps_ && offset(step_) == since) {
        pair = {row_, step_++};
        return true;
      }
    }
  }
  return false;
}

Segment Pipeline::row_segment(std::int64_t r, std::size_t s) const {
  const Segment& whole = (*segments_)[s];
  const std::int64_t at = r * chunk_;
  Segment row{.elems = std::clamp<std::int64_t>(whole.elems - at, 0, chunk_)};
  if (across_ > 0) {
    // Rows before r are whole: r x chunk of every segment; then segment p's part of row r.
    const auto n = static_cast<std::int64_t>(segments_->size());
    row.in_at = whole.in_at >= 0 ? at * n + whole.in_at / across_ * row.elems : -1;
    row.out_at = whole.out_at >= 0 ? at * n + whole.out_at / across_ * row.elems : -1;
    return row;
  }
  row.in_at = whole.in_at >= 0 ? whole.in_at + at : -1;
  row.out_at = whole.out_at >= 0 ? whole.out_at + at : -1;
  return row;
}

void Pipeline::row_segments(std::int64_t r, std::vector<Segment>& out) const {
  out.resize(segments_->size());
  for (std::size_t s = 0; s < segments_->size(); ++s) out[s] = row_segment(r, s);
}

}  // namespace cubesim::components::collectives
