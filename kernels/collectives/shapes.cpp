#include "kernels/collectives/shapes.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim::kernels::collectives {

using components::collectives::OpKind;
using components::collectives::Schedule;
using components::collectives::Segment;
using components::collectives::Step;

namespace {

std::int64_t mod(std::int64_t x, std::int64_t n) {
  // A ring position is at most one lap off (every program, every step): no division then.
  if (x < 0)
    x += n;
  else if (x >= n)
    x -= n;
  if (x >= 0 && x < n) return x;
  const std::int64_t r = x % n;
  return r < 0 ? r + n : r;
}

class Rings final : public Schedule {
 public:
  Rings(Collective c, std::vector<Groups> levels, std::int64_t block, int dirs,
        std::vector<int> switched)
      : c_(c),
        levels_(std::move(levels)),
        switched_(std::move(switched)),
        block_(block),
        dirs_(dirs) {
    switched_.resize(levels_.size(), -1);
    if (c_ != Collective::all_reduce &&
        std::any_of(switched_.begin(), switched_.end(), [](int s) { return s >= 0; }))
      throw std::logic_error("collective rings: only an all-reduce reduces in a switch");
    n_ = 0;
    for (const auto& group : levels_.front()) n_ += static_cast<std::int64_t>(group.size());
    // Each program's range of atoms (blocks, numbered by the order they are cut in) at each
    // level: all of them at level 0, then the chunk its position in its group gets.
    std::vector<std::int64_t> lo(static_cast<std::size_t>(n_), 0);
    std::int64_t len = n_, kept = 1;  // kept: the switched levels' sizes, multiplied
    for (std::size_t l = 0; l < levels_.size(); ++l) {
      const Groups& level = levels_[l];
      const auto m = static_cast<std::int64_t>(level.front().size());
      const bool switch_level = switched_[l] >= 0;
      if (m < 1 || (!switch_level && len % m != 0))
        throw std::logic_error("collective rings: group sizes must multiply to the programs");
      auto& place = place_.emplace_back(static_cast<std::size_t>(n_));
      if (switch_level) {  // every member keeps its range: the switch sums it whole
        for (std::size_t gi = 0; gi < level.size(); ++gi)
          for (std::int64_t q = 0; q < m; ++q) {
            const auto g = static_cast<std::size_t>(level[gi][static_cast<std::size_t>(q)]);
            place[g] = {static_cast<std::int64_t>(gi), q, lo[g]};
          }
        len_.push_back(len);
        kept *= m;
        continue;
      }
      for (std::size_t gi = 0; gi < level.size(); ++gi) {
        if (static_cast<std::int64_t>(level[gi].size()) != m)
          throw std::logic_error("collective rings: groups of one level differ in size");
        for (std::int64_t q = 0; q < m; ++q) {
          const auto g = static_cast<std::size_t>(level[gi][static_cast<std::size_t>(q)]);
          place[g] = {static_cast<std::int64_t>(gi), q, lo[g]};
          lo[g] += q * (len / m);
        }
      }
      len_.push_back(len);
      len /= m;
    }
    if (len != kept) throw std::logic_error("collective rings: group sizes must multiply to n");
    // The atom a program ends reduce-scatter with is the block it owns: its own. An all-reduce
    // owns none at the end (every program holds every block): its atoms are the blocks in
    // memory order, so that the range of atoms a level's step moves lies in one piece of memory
    // and its blocks go as few messages, loads and stores.
    block_of_.resize(static_cast<std::size_t>(n_));
    for (std::int64_t g = 0; g < n_; ++g)
      block_of_[static_cast<std::size_t>(kept == 1 && c_ != Collective::all_reduce ? lo[g] : g)] =
          g;
    if (c_ != Collective::all_gather)
      for (std::size_t l = 0; l < levels_.size(); ++l) phases_.push_back({l, true});
    if (c_ != Collective::reduce_scatter)
      for (std::size_t l = levels_.size(); l-- > 0;)
        if (switched_[l] < 0) phases_.push_back({l, false});
  }

  std::int64_t programs() const override { return n_; }
  bool rows_across_segments() const override { return c_ == Collective::all_reduce; }

  std::vector<Segment> segments(std::int64_t g) const override {
    const std::int64_t half = block_ / dirs_;
    std::vector<Segment> out;
    out.reserve(static_cast<std::size_t>(n_ * dirs_));
    for (std::int64_t a = 0; a < n_; ++a)
      for (int d = 0; d < dirs_; ++d) {
        const std::int64_t b = block_of_[static_cast<std::size_t>(a)];
        // An all-reduce's directions each take a half of the whole vector, so that a step's
        // run of blocks is one piece of memory; a block's halves otherwise.
        const std::int64_t at =
            c_ == Collective::all_reduce ? d * n_ * half + b * half : b * block_ + d * half;
        const std::int64_t own = b == g ? d * half : -1;
        Segment s{.elems = half};
        s.in_at = c_ == Collective::all_gather ? own : at;
        s.out_at = c_ == Collective::reduce_scatter ? own : at;
        out.push_back(s);
      }
    return out;
  }

  std::int64_t steps(std::int64_t) const override {
    std::int64_t k = 0;
    for (const Phase& ph : phases_) k += steps_of(ph.level);
    return k;
  }

  void step(std::int64_t g, std::int64_t k, Step& out) const override {
    out.clear();
    std::size_t ph = 0;
    for (; k >= steps_of(phases_[ph].level); ++ph) k -= steps_of(phases_[ph].level);
    const std::size_t l = phases_[ph].level;
    const bool reduce = phases_[ph].reduce;
    const Place& at = place_[l][static_cast<std::size_t>(g)];
    if (switched_[l] >= 0) {  // the whole range up to the switch, the sum back
      for (std::int64_t a = 0; a < len_[l]; ++a)
        for (int d = 0; d < dirs_; ++d)
          out.push_back({OpKind::switch_reduce, switched_[l],
                         static_cast<std::int32_t>((at.lo + a) * dirs_ + d)});
      return;
    }
    const auto& members = levels_[l][static_cast<std::size_t>(at.group)];
    const std::int64_t m = size(l), chunk = len_[l] / m, q = at.pos;
    auto member = [&](std::int64_t pos) { return members[static_cast<std::size_t>(mod(pos, m))]; };
    for (const bool sending : {true, false})
      for (int d = 0; d < dirs_; ++d) {
        const std::int64_t s = d == 0 ? 1 : -1;
        const std::int64_t c = sending ? mod(q - s * (k + (reduce ? 1 : 0)), m)
                                       : mod(q - s * (k + (reduce ? 2 : 1)), m);
        const OpKind kind = sending ? OpKind::send : reduce ? OpKind::recv_add : OpKind::recv;
        const std::int64_t peer = sending ? member(q + s) : member(q - s);
        for (std::int64_t a = 0; a < chunk; ++a)
          out.push_back(
              {kind, peer, static_cast<std::int32_t>((at.lo + c * chunk + a) * dirs_ + d)});
      }
  }

 private:
  struct Place {
    std::int64_t group = 0, pos = 0, lo = 0;  // lo: the first atom of its range at the level
  };
  struct Phase {
    std::size_t level;
    bool reduce;
  };
  std::int64_t size(std::size_t level) const {
    return static_cast<std::int64_t>(levels_[level].front().size());
  }
  // A ring level's steps in one phase; a switched level's one (only its reduce phase has it).
  std::int64_t steps_of(std::size_t level) const {
    return switched_[level] >= 0 ? 1 : size(level) - 1;
  }

  Collective c_;
  std::vector<Groups> levels_;
  std::vector<int> switched_;  // per level: its components::SwitchLevel, or -1 for a ring
  std::int64_t block_;
  int dirs_;
  std::int64_t n_;
  std::vector<std::vector<Place>> place_;  // [level][program]
  std::vector<std::int64_t> len_;          // atoms in a range at each level
  std::vector<std::int64_t> block_of_;     // atom -> the block it is
  std::vector<Phase> phases_;
};

class Tree final : public Schedule {
 public:
  Tree(Collective c, std::vector<std::vector<std::int64_t>> parents, std::int64_t elems)
      : c_(c), parents_(std::move(parents)), elems_(elems) {
    for (const auto& parent : parents_) {
      auto& children = children_.emplace_back(parent.size());
      for (std::size_t g = 0; g < parent.size(); ++g)
        if (parent[g] >= 0)
          children[static_cast<std::size_t>(parent[g])].push_back(static_cast<std::int64_t>(g));
    }
  }
  std::int64_t programs() const override {
    return static_cast<std::int64_t>(parents_.front().size());
  }
  // One segment per tree: its part of the vector.
  std::vector<Segment> segments(std::int64_t g) const override {
    std::vector<Segment> out;
    const auto trees = static_cast<std::int64_t>(parents_.size());
    for (std::int64_t t = 0; t < trees; ++t) {
      const std::int64_t lo = elems_ * t / trees, hi = elems_ * (t + 1) / trees;
      const bool root = parents_[static_cast<std::size_t>(t)][static_cast<std::size_t>(g)] < 0;
      const bool input = c_ == Collective::all_reduce || root;
      out.push_back(Segment{.elems = hi - lo, .in_at = input ? lo : -1, .out_at = lo});
    }
    return out;
  }
  // A step per tree and phase (all-reduce: the reduces, then the broadcasts): a step of one
  // tree never waits on another's (in one step they could wait on each other in a cycle). A
  // broadcast takes two steps per tree, the receive from the parent and then the sends to the
  // children, so that a row's receive is posted (and read out of its slot as it arrives) the
  // pipeline's spacing of rows before the row is passed on: a chain whose every program received
  // and forwarded a row in one step would wait for each row's read-out before the next.
  std::int64_t steps(std::int64_t) const override {
    return static_cast<std::int64_t>(parents_.size()) * 2;
  }
  // One tree's all-reduce: a program receives a row's broadcast 1 + lag x its depth waves
  // after it sent the row's sum up, so that the sum has reached the root and the result come
  // back down by then; the root passes it on the wave after. The lag is what a level's
  // crossing up and back is worth in rows: half of what the channel's slots hold (a window
  // covers its credit loop, a crossing and back), at least 2 x kHopRows (a mesh hop). A parent
  // sends a row's result `lag` rows before its child takes it, so the lag never exceeds what
  // the slots hold, or a parent would block on a child that blocks on it; with less than a
  // row, the steps' default offsets. (A fixed 2 x kHopRows held a tree across 800 ns links to
  // a few rows per round trip, a tenth of the links' rate.) Every channel carries one step's
  // messages (sums up, results down), so the offsets may differ between programs; several
  // trees share channels between their steps, and take the default offsets too.
  std::vector<std::int64_t> wave_offsets(std::int64_t g, std::int64_t channel_rows) const override {
    const std::int64_t lag = std::min(channel_rows, std::max(2 * kHopRows, channel_rows / 2));
    if (c_ != Collective::all_reduce || parents_.size() != 1 || lag < 1) return {};
    std::int64_t depth = 0;
    for (std::int64_t p = parents_.front()[static_cast<std::size_t>(g)]; p >= 0;
         p = parents_.front()[static_cast<std::size_t>(p)])
      ++depth;
    return {0, 1 + lag * depth};
  }
  void step(std::int64_t g, std::int64_t k, Step& out) const override {
    out.clear();
    const auto trees = static_cast<std::int64_t>(parents_.size());
    const bool all_reduce = c_ == Collective::all_reduce;
    const bool reduce = all_reduce && k < trees;
    const auto t = static_cast<std::size_t>(all_reduce ? k % trees : k / 2);
    const std::int64_t up = parents_[t][static_cast<std::size_t>(g)];
    const auto& down = children_[t][static_cast<std::size_t>(g)];
    const auto seg = static_cast<std::int32_t>(t);
    if (reduce) {  // children in, the sum up
      for (const std::int64_t child : down) out.push_back({OpKind::recv_add, child, seg});
      if (up >= 0) out.push_back({OpKind::send, up, seg});
      return;
    }
    // Broadcast: in from the parent, down to the children (a broadcast: in one step, then down
    // in the next).
    const bool in = all_reduce || k % 2 == 0, down_now = all_reduce || k % 2 == 1;
    if (in && up >= 0) out.push_back({OpKind::recv, up, seg});
    if (down_now)
      for (const std::int64_t child : down) out.push_back({OpKind::send, child, seg});
  }

 private:
  static constexpr std::int64_t kHopRows = 2;  // rows a mesh hop's latency is worth, about
  Collective c_;
  std::vector<std::vector<std::int64_t>> parents_;                // per tree
  std::vector<std::vector<std::vector<std::int64_t>>> children_;  // per tree, per program
  std::int64_t elems_;
};

class AllToAll final : public Schedule {
 public:
  AllToAll(std::vector<std::int64_t> order, std::int64_t block, bool direct)
      : order_(std::move(order)), pos_(order_.size()), block_(block), direct_(direct) {
    for (std::size_t p = 0; p < order_.size(); ++p)
      pos_[static_cast<std::size_t>(order_[p])] = static_cast<std::int64_t>(p);
  }
  std::int64_t programs() const override { return static_cast<std::int64_t>(order_.size()); }
  // Segments 0 .. n-1: the input blocks, one for each program; n .. 2n-1: the output blocks,
  // one from each program (its own straight from its input).
  std::vector<Segment> segments(std::int64_t g) const override {
    const std::int64_t n = programs();
    std::vector<Segment> out(static_cast<std::size_t>(2 * n), Segment{.elems = block_});
    for (std::int64_t j = 0; j < n; ++j) {
      if (j != g) out[static_cast<std::size_t>(j)].in_at = j * block_;
      out[static_cast<std::size_t>(n + j)].out_at = j * block_;
    }
    out[static_cast<std::size_t>(n + g)].in_at = g * block_;
    return out;
  }
  std::int64_t steps(std::int64_t) const override { return direct_ ? 1 : programs() - 1; }
  void step(std::int64_t g, std::int64_t k, Step& out) const override {
    out.clear();
    const std::int64_t n = programs(), p = pos_[static_cast<std::size_t>(g)];
    const std::int64_t first = direct_ ? 1 : k + 1, last = direct_ ? n - 1 : k + 1;
    for (std::int64_t t = first; t <= last; ++t) {
      const std::int64_t to = order_[static_cast<std::size_t>(mod(p + t, n))];
      out.push_back({OpKind::send, to, static_cast<std::int32_t>(to)});
    }
    for (std::int64_t t = first; t <= last; ++t) {
      const std::int64_t from = order_[static_cast<std::size_t>(mod(p - t, n))];
      out.push_back({OpKind::recv, from, static_cast<std::int32_t>(n + from)});
    }
  }

 private:
  std::vector<std::int64_t> order_, pos_;
  std::int64_t block_;
  bool direct_;
};

class StoredByOwners final : public Schedule {
 public:
  StoredByOwners(std::unique_ptr<Schedule> inner, std::int64_t block)
      : inner_(std::move(inner)), block_(block) {}
  std::int64_t programs() const override { return inner_->programs(); }
  std::vector<Segment> segments(std::int64_t g) const override {
    std::vector<Segment> out = inner_->segments(g);
    for (Segment& s : out)
      if (s.out_at >= 0 && s.out_at / block_ != g) s.out_at = -1;
    return out;
  }
  std::int64_t steps(std::int64_t g) const override { return inner_->steps(g); }
  void step(std::int64_t g, std::int64_t k, Step& out) const override { inner_->step(g, k, out); }
  std::vector<std::int64_t> wave_offsets(std::int64_t g, std::int64_t channel_rows) const override {
    return inner_->wave_offsets(g, channel_rows);
  }
  bool rows_across_segments() const override { return inner_->rows_across_segments(); }

 private:
  std::unique_ptr<Schedule> inner_;
  std::int64_t block_;
};

class PerChannel final : public Schedule {
 public:
  PerChannel(std::unique_ptr<Schedule> inner, std::int64_t positions, std::int64_t channels)
      : inner_(std::move(inner)), positions_(positions), channels_(channels) {}
  std::int64_t programs() const override { return inner_->programs() * positions_; }
  std::vector<Segment> segments(std::int64_t g) const override {
    return runs(g) ? inner_->segments(g / positions_) : std::vector<Segment>{};
  }
  std::int64_t steps(std::int64_t g) const override {
    return runs(g) ? inner_->steps(g / positions_) : 0;
  }
  void step(std::int64_t g, std::int64_t k, Step& out) const override {
    inner_->step(g / positions_, k, out);  // replaces out
    for (auto& op : out)                   // a switch_reduce's peer is its switch, not a program
      if (op.kind != OpKind::switch_reduce) op.peer = op.peer * positions_ + g % positions_;
  }
  std::vector<std::int64_t> wave_offsets(std::int64_t g, std::int64_t channel_rows) const override {
    return runs(g) ? inner_->wave_offsets(g / positions_, channel_rows)
                   : std::vector<std::int64_t>{};
  }
  bool rows_across_segments() const override { return inner_->rows_across_segments(); }

 private:
  bool runs(std::int64_t g) const { return g % positions_ < channels_; }
  std::unique_ptr<Schedule> inner_;
  std::int64_t positions_, channels_;
};

}  // namespace

std::unique_ptr<Schedule> per_channel(std::unique_ptr<Schedule> inner, std::int64_t positions,
                                      std::int64_t channels) {
  return std::make_unique<PerChannel>(std::move(inner), positions, channels);
}

std::unique_ptr<Schedule> rings(Collective collective, std::vector<Groups> levels,
                                std::int64_t block, int directions, std::vector<int> switched) {
  return std::make_unique<Rings>(collective, std::move(levels), block, directions,
                                 std::move(switched));
}

std::unique_ptr<Schedule> trees(Collective collective,
                                std::vector<std::vector<std::int64_t>> parents,
                                std::int64_t elems) {
  return std::make_unique<Tree>(collective, std::move(parents), elems);
}

std::unique_ptr<Schedule> all_to_all(std::vector<std::int64_t> order, std::int64_t block,
                                     bool direct) {
  return std::make_unique<AllToAll>(std::move(order), block, direct);
}

std::unique_ptr<Schedule> stored_by_owners(std::unique_ptr<Schedule> inner, std::int64_t block) {
  return std::make_unique<StoredByOwners>(std::move(inner), block);
}

std::vector<std::int64_t> binary_tree(const std::vector<std::int64_t>& order, std::int64_t root) {
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t at =
      std::find(order.begin(), order.end(), root) - order.begin();  // the root's position
  // The ring turned so that the root sits at n / 2.
  return in_order_tree(order, at - n / 2);
}

std::vector<std::int64_t> in_order_tree(const std::vector<std::int64_t>& order, std::int64_t turn) {
  const auto n = static_cast<std::int64_t>(order.size());
  auto program = [&](std::int64_t p) { return order[static_cast<std::size_t>(mod(p + turn, n))]; };
  std::vector<std::int64_t> parent(order.size(), -1);
  auto build = [&](auto& self, std::int64_t lo, std::int64_t hi, std::int64_t up) -> void {
    if (lo >= hi) return;
    const std::int64_t mid = lo + (hi - lo) / 2;
    parent[static_cast<std::size_t>(program(mid))] = up;
    self(self, lo, mid, program(mid));
    self(self, mid + 1, hi, program(mid));
  };
  build(build, 0, n, -1);
  return parent;
}

std::vector<std::int64_t> complementary_tree(const std::vector<std::int64_t>& order,
                                             std::int64_t root) {
  const auto n = static_cast<std::int64_t>(order.size());
  const std::int64_t at = std::find(order.begin(), order.end(), root) - order.begin();
  return in_order_tree(order, at - n / 2 + 1);
}

std::vector<std::int64_t> reversed_ring(const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> out{order.front()};
  out.insert(out.end(), order.rbegin(), order.rend() - 1);
  return out;
}

std::vector<std::int64_t> chain(const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> parent(order.size(), -1);
  for (std::size_t p = 1; p < order.size(); ++p)
    parent[static_cast<std::size_t>(order[p])] = order[p - 1];
  return parent;
}

}  // namespace cubesim::kernels::collectives
