#include "triton_emu/checks/happens_before.hpp"

#include <algorithm>

namespace cubesim {

namespace {

// Edges (source, target) in compressed rows over `rows` sources.
void compress(std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges, std::size_t rows,
              std::vector<std::uint32_t>& begin, std::vector<std::uint32_t>& targets) {
  std::sort(edges.begin(), edges.end());
  begin.assign(rows + 1, 0);
  targets.resize(edges.size());
  for (const auto& e : edges) ++begin[e.first + 1];
  for (std::size_t r = 0; r < rows; ++r) begin[r + 1] += begin[r];
  for (std::size_t i = 0; i < edges.size(); ++i) targets[i] = edges[i].second;
}

std::uint64_t channel_key(std::uint32_t from, std::uint32_t to) {
  return std::uint64_t{from} << 32 | to;
}

}  // namespace

HappensBefore::HappensBefore(const SyncLog& log) {
  const auto programs = static_cast<std::uint32_t>(log.programs());
  base_.resize(programs + 1);
  std::uint32_t nodes = 0;
  for (std::uint32_t p = 0; p < programs; ++p) {
    base_[p] = nodes;
    nodes += 1;
    for (const SyncOp& op : log.ops(p)) nodes += op.ends_segment();
  }
  base_[programs] = nodes;
  program_of_.resize(nodes);
  begins_.resize(nodes);
  for (std::uint32_t p = 0; p < programs; ++p) {
    std::fill(program_of_.begin() + base_[p], program_of_.begin() + base_[p + 1], p);
    std::uint32_t node = base_[p];
    begins_[node] = 0;
    for (const SyncOp& op : log.ops(p))
      if (op.ends_segment()) begins_[++node] = op.after;
  }

  // Message k of a channel is the k-th send on it (channels are in order): the node whose
  // segment ends with that send, per channel.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> sent;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges, members;
  for (std::uint32_t p = 0; p < programs; ++p) {
    std::uint32_t node = base_[p];
    for (const SyncOp& op : log.ops(p)) {
      if (op.kind == SyncOp::Kind::send) sent[channel_key(p, op.peer)].push_back(node);
      if (op.kind == SyncOp::Kind::barrier) {
        edges.emplace_back(node, nodes + op.peer);
        members.emplace_back(op.peer, node + 1);
      }
      node += op.ends_segment();
    }
  }
  for (std::uint32_t p = 0; p < programs; ++p) {
    std::uint32_t node = base_[p];
    for (const SyncOp& op : log.ops(p)) {
      if (op.kind == SyncOp::Kind::recv_done) {
        const auto it = sent.find(channel_key(op.peer, p));
        if (it != sent.end() && op.seq < it->second.size())  // else never sent (a deadlock)
          edges.emplace_back(it->second[op.seq], node + 1);
      }
      node += op.ends_segment();
    }
  }
  compress(edges, nodes, out_begin_, out_);
  compress(members, log.barriers().size(), members_begin_, members_);
  budget_ = 4 * (std::size_t{nodes} + out_.size() + members_.size()) + 4096;
  first_.assign(programs, kNever);
  barrier_seen_.assign(log.barriers().size(), 0);
}

template <typename Visit>
void HappensBefore::for_each_next(std::uint32_t n, Visit&& visit) {
  for (std::uint32_t e = out_begin_[n]; e < out_begin_[n + 1]; ++e) {
    const std::uint32_t t = out_[e];
    if (t < nodes()) {
      visit(t);
      continue;
    }
    const std::uint32_t b = t - nodes();
    if (barrier_seen_[b] == search_) continue;
    barrier_seen_[b] = search_;
    for (std::uint32_t m = members_begin_[b]; m < members_begin_[b + 1]; ++m) visit(members_[m]);
  }
}

const HappensBefore::Reach& HappensBefore::reach(std::uint32_t node) {
  if (const auto it = cache_.find(node); it != cache_.end()) return it->second;
  ++search_;
  const auto push = [&](std::uint32_t n) {
    if (n - base_[program_of_[n]] < first_[program_of_[n]]) stack_.push_back(n);
  };
  stack_.assign(1, node);
  while (!stack_.empty()) {
    const std::uint32_t n = stack_.back();
    stack_.pop_back();
    const std::uint32_t p = program_of_[n], segment = n - base_[p], before = first_[p];
    if (segment >= before) continue;
    if (before == kNever) touched_.push_back(p);
    first_[p] = segment;
    // The segments from here to the first reached before: none of their edges was followed.
    const std::uint32_t end = before == kNever ? base_[p + 1] : base_[p] + before;
    for (std::uint32_t k = n; k < end; ++k) for_each_next(k, push);
  }
  std::sort(touched_.begin(), touched_.end());
  Reach r;
  r.reserve(touched_.size());
  for (const std::uint32_t p : touched_) {
    r.emplace_back(p, first_[p]);
    first_[p] = kNever;
  }
  touched_.clear();
  if (cached_ + r.size() > budget_) {
    cache_.clear();
    cached_ = 0;
  }
  cached_ += r.size();
  searches_.erase(node);
  return cache_.emplace(node, std::move(r)).first->second;
}

bool HappensBefore::search(std::uint32_t source, std::uint32_t target) {
  const std::uint32_t to = program_of_[target], later = target - base_[to];
  const std::uint32_t limit = begins_[target];  // what begins later cannot lead to the target
  ++search_;
  const auto push = [&](std::uint32_t n) {
    if (begins_[n] <= limit && n - base_[program_of_[n]] < first_[program_of_[n]])
      stack_.push_back(n);
  };
  bool found = false;
  stack_.assign(1, source);
  while (!stack_.empty()) {
    const std::uint32_t n = stack_.back();
    stack_.pop_back();
    const std::uint32_t p = program_of_[n], segment = n - base_[p], before = first_[p];
    if (segment >= before) continue;
    if (p == to && segment <= later) {
      found = true;
      break;
    }
    if (before == kNever) touched_.push_back(p);
    first_[p] = segment;
    const std::uint32_t end = before == kNever ? base_[p + 1] : base_[p] + before;
    for (std::uint32_t k = n; k < end && begins_[k] <= limit; ++k) for_each_next(k, push);
  }
  for (const std::uint32_t p : touched_) first_[p] = kNever;
  touched_.clear();
  stack_.clear();
  return found;
}

bool HappensBefore::ordered(std::uint32_t from, std::uint32_t segment, std::uint32_t to,
                            std::uint32_t later) {
  const std::uint32_t source = base_[from] + segment, target = base_[to] + later;
  if (begins_[source] > begins_[target]) return false;
  if (!cache_.contains(source) && ++searches_[source] <= kSearchesBeforeKeeping)
    return search(source, target);
  return first_after(from, segment, to) <= later;
}

std::uint32_t HappensBefore::first_after(std::uint32_t from, std::uint32_t segment,
                                         std::uint32_t to) {
  const Reach& r = reach(base_[from] + segment);
  const auto it = std::lower_bound(r.begin(), r.end(), std::make_pair(to, std::uint32_t{0}));
  return it != r.end() && it->first == to ? it->second : kNever;
}

}  // namespace cubesim
