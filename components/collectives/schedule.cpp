#include "components/collectives/schedule.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace cubesim::components::collectives {

std::int64_t pieces_of(std::int64_t elems, std::int64_t piece) {
  return (elems + piece - 1) / piece;
}

namespace {

// A ring's step, once per program and step: one message out and one in, of different
// segments, each a single piece. What the general order gives it: the send, then the receive.
bool is_ring_step(const std::vector<Segment>& segments, const Step& step, std::int64_t piece,
                  std::uint32_t window) {
  return step.size() == 2 && window > 0 && step[0].kind == OpKind::send &&
         step[1].kind != OpKind::send && step[0].segment != step[1].segment &&
         pieces_of(segments[static_cast<std::size_t>(step[0].segment)].elems, piece) == 1 &&
         pieces_of(segments[static_cast<std::size_t>(step[1].segment)].elems, piece) == 1;
}

// A send of a segment the step also receives into waits until every such receive of its piece
// is done: the receives still to come into each (segment, piece). Steps have few ops: a plain
// vector, searched.
class Pending {
 public:
  void count(const Step& step, const std::vector<Action>& recvs) {
    pending_.clear();
    for (const Action& r : recvs) {
      if (auto* p = find(step, r))
        ++p->count;
      else
        pending_.push_back({step[r.op].segment, r.piece, 1});
    }
  }
  bool waits(const Step& step, const Action& send) {
    const auto* p = find(step, send);
    return p != nullptr && p->count > 0;
  }
  void received(const Step& step, const Action& recv) { --find(step, recv)->count; }

 private:
  struct Count {
    std::int32_t segment;
    std::int64_t piece;
    int count;
  };
  Count* find(const Step& step, const Action& a) {
    const Op& op = step[a.op];
    const auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Count& p) {
      return p.segment == op.segment && p.piece == a.piece;
    });
    return it == pending_.end() ? nullptr : &*it;
  }
  std::vector<Count> pending_;
};

// Interleaves the step's sends and receives (each in piece-then-op order): sends go while they
// wait for no receive of the step and run at most `ahead` messages before the receives.
void interleave(const Step& step, const std::vector<Action>& sends,
                const std::vector<Action>& recvs, bool forwards, std::size_t ahead,
                std::vector<Action>& out) {
  // Scratch kept between calls (a step never yields, so one per thread serves every fiber).
  thread_local Pending pending;
  if (forwards) pending.count(step, recvs);
  std::size_t si = 0, ri = 0;
  while (si < sends.size() || ri < recvs.size()) {
    for (; si < sends.size(); ++si) {
      if (forwards && pending.waits(step, sends[si])) break;
      if (ri < recvs.size() && si >= ri + ahead) break;
      out.push_back(sends[si]);
    }
    if (ri < recvs.size()) {
      if (forwards) pending.received(step, recvs[ri]);
      out.push_back(recvs[ri++]);
    } else if (si < sends.size()) {
      throw std::logic_error("collective schedule: a send waits for a receive the step lacks");
    }
  }
}

}  // namespace

void step_actions(const std::vector<Segment>& segments, const Step& step, std::int64_t piece,
                  std::uint32_t window, std::vector<Action>& out, std::int64_t message) {
  out.clear();
  if (is_ring_step(segments, step, piece, window)) {
    out.push_back({true, 0, 0});
    out.push_back({false, 1, 0});
    return;
  }
  const auto elems = [&](const Op& op) {
    return segments[static_cast<std::size_t>(op.segment)].elems;
  };
  bool forwards = false;  // some send forwards a segment the step also receives into
  for (const Op& op : step)
    if (op.kind == OpKind::send)
      forwards = forwards || std::any_of(step.begin(), step.end(), [&](const Op& o) {
                   return o.kind != OpKind::send && o.segment == op.segment;
                 });
  // The step's messages before they are cut into pieces: an op, or a run of consecutive
  // single-piece ops of one kind with one peer (count > 1), with its pieces.
  thread_local std::vector<Action> units;
  thread_local std::vector<std::int64_t> pieces;  // per unit
  units.clear();
  pieces.clear();
  std::int64_t most = 0;
  for (std::uint32_t i = 0; i < step.size();) {
    const Op& op = step[i];
    const std::int64_t n = pieces_of(elems(op), piece);
    std::uint32_t count = 1;
    if (!forwards && n == 1 && message > piece)
      for (std::int64_t total = elems(op); i + count < step.size(); ++count) {
        const Op& next = step[i + count];
        const std::int64_t e = elems(next);
        if (next.kind != op.kind || next.peer != op.peer || e <= 0 || e > piece ||
            total + e > message)
          break;
        total += e;
      }
    units.push_back({op.kind == OpKind::send, i, 0, count});
    pieces.push_back(n);
    most = std::max(most, n);
    i += count;
  }
  thread_local std::vector<Action> sends, recvs;
  sends.clear();
  recvs.clear();
  // Piece by piece; within a piece index, the messages to (from) different peers in turn, each
  // peer's in op order: a step with several messages per peer (a ring level's chunk of several
  // blocks, both ways) then sends at most its window to each peer before it receives, as the
  // window below assumes, instead of its whole chunk to the first.
  thread_local std::vector<std::pair<std::int64_t, std::uint32_t>> turn;  // (turn, unit)
  const auto key = [&](std::uint32_t u) {
    return std::make_tuple(units[u].send, step[units[u].op].peer, u);
  };
  for (std::int64_t j = 0; j < most; ++j) {
    turn.clear();
    // Each unit's turn: how many earlier units of this piece index go to its peer, and are
    // sends as it is (units sorted by kind, peer and index, then counted along).
    for (std::uint32_t u = 0; u < units.size(); ++u)
      if (j < pieces[u]) turn.emplace_back(0, u);
    std::sort(turn.begin(), turn.end(),
              [&](const auto& a, const auto& b) { return key(a.second) < key(b.second); });
    for (std::size_t t = 1; t < turn.size(); ++t) {
      const Action& a = units[turn[t - 1].second];
      const Action& b = units[turn[t].second];
      if (step[a.op].peer == step[b.op].peer && a.send == b.send)
        turn[t].first = turn[t - 1].first + 1;
    }
    std::sort(turn.begin(), turn.end());  // by turn, then unit
    for (const auto& [k, u] : turn) {
      Action a = units[u];
      a.piece = j;
      (a.send ? sends : recvs).push_back(a);
    }
  }
  thread_local std::vector<std::int64_t> peers;
  peers.clear();
  for (const Op& op : step)
    if (op.kind == OpKind::send && std::find(peers.begin(), peers.end(), op.peer) == peers.end())
      peers.push_back(op.peer);
  interleave(step, sends, recvs, forwards, static_cast<std::size_t>(window) * peers.size(), out);
}

LastUses::LastUses(const Schedule& schedule, std::int64_t g, std::int64_t steps,
                   std::size_t segments)
    : write(segments, -1) {
  if (steps > std::numeric_limits<std::int32_t>::max())
    throw std::logic_error("collective schedule: more than 2^31 steps");
  Step step;
  for (std::int64_t k = 0; k < steps; ++k) {
    schedule.step(g, k, step);
    for (const Op& op : step)
      if (op.kind != OpKind::send)
        write[static_cast<std::size_t>(op.segment)] = static_cast<std::int32_t>(k);
  }
}

void PieceWrites::count(const Step& step, const std::vector<Action>& actions) {
  counts_.clear();
  for (const Action& a : actions)
    if (!a.send)
      for (std::uint32_t c = 0; c < a.count; ++c) ++at({step[a.op + c].segment, a.piece});
}

int& PieceWrites::at(std::pair<std::int32_t, std::int64_t> piece) {
  for (auto& [key, count] : counts_)
    if (key == piece) return count;
  return counts_.emplace_back(piece, 0).second;
}

}  // namespace cubesim::components::collectives
