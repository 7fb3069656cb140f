#pragma once
// What messages and barriers order between programs (sync_log.hpp), for the race check.
//
// A graph of (program, segment) nodes and barrier instances. Each segment leads to the next of
// its program (program order, left implicit); a segment that ends with a send leads to the
// receiver's segment after the recv of that message completed; a segment that ends at a
// barrier leads to the barrier's node, and that node to every member's segment after it.
// Everything a program did in segment s happens before everything another does in segment t
// when (p, s) reaches (q, t): the send ends s, so what p did before it is in s or earlier, and
// t starts when the recv has returned.
//
// Reaching is monotone in program order ((p, s) reaches all that (p, s + 1) does), so a
// search needs, per program, only the first segment it reaches; it expands each program's
// segments at most once. A query for one pair searches only among the segments that began
// between the two (SyncOp::after grows along every edge) and stops at the target, which is
// cheap for the usual pair, close in time. A source asked about often gets everything it
// reaches computed once and kept (a few sources serve many pairs of accesses), within a
// budget proportional to the graph, which is proportional to the launch's synchronisation
// operations, never to programs squared.

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "triton_emu/checks/sync_log.hpp"

namespace cubesim {

class HappensBefore {
 public:
  static constexpr std::uint32_t kNever = UINT32_MAX;

  explicit HappensBefore(const SyncLog& log);

  // The first segment of program `to` that everything program `from` did up to the end of its
  // segment `segment` happens before; kNever if none.
  std::uint32_t first_after(std::uint32_t from, std::uint32_t segment, std::uint32_t to);
  // Whether `from`'s segment `segment` happens before `to`'s segment `later`.
  bool ordered(std::uint32_t from, std::uint32_t segment, std::uint32_t to, std::uint32_t later);

 private:
  using Reach = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (program, first), sorted
  // Searches of one pair from a source before all it reaches is computed and kept.
  static constexpr std::uint32_t kSearchesBeforeKeeping = 4;

  const Reach& reach(std::uint32_t node);
  bool search(std::uint32_t source, std::uint32_t target);
  // Node `n`'s targets (segments, or barriers from nodes() on), then a barrier's members.
  template <typename Visit>
  void for_each_next(std::uint32_t n, Visit&& visit);
  std::uint32_t nodes() const { return static_cast<std::uint32_t>(program_of_.size()); }

  std::vector<std::uint32_t> base_;        // per program: its segment 0's node; then the total
  std::vector<std::uint32_t> program_of_;  // per node
  std::vector<std::uint32_t> begins_;      // per node: when the segment began (SyncOp::after)
  // Edges in compressed rows: node n's targets are out_[out_begin_[n] .. out_begin_[n + 1]),
  // each a node or, from nodes() on, a barrier instance; barrier b leads to
  // members_[members_begin_[b] .. members_begin_[b + 1]).
  std::vector<std::uint32_t> out_begin_, out_;
  std::vector<std::uint32_t> members_begin_, members_;

  std::unordered_map<std::uint32_t, Reach> cache_;
  std::unordered_map<std::uint32_t, std::uint32_t> searches_;  // per source not in cache_
  std::size_t cached_ = 0, budget_ = 0;  // pairs held in cache_, and how many it may hold
  // Scratch for a search.
  std::vector<std::uint32_t> first_, touched_, stack_, barrier_seen_;
  std::uint32_t search_ = 0;
};

}  // namespace cubesim
