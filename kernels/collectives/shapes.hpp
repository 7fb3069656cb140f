#pragma once
// The shapes of the algorithms' schedules (components/collectives/schedule.hpp), which the
// entries of algorithms/ build on.
//
// Rings, level by level: the programs are split into groups at each level (one group of every
// program for a plain ring; a cube's PEs, then the cubes of a SIP, then the SIPs for the
// hierarchical algorithm; a cube's mesh rows, then its columns, then the cubes for the 2D
// one). The data is cut into one block per program. Reduce-scatter runs a ring reduce-scatter
// in every group of level 0 over the whole vector, leaving each member the sum over its group
// of one chunk (1/m of it); then a ring reduce-scatter of that chunk in every group of level
// 1, and so on; after the last level each program holds the full sum of one block, which the
// block numbering makes its own. All-gather runs the levels in reverse, ring all-gathers of
// the growing chunk; all-reduce is the two in turn. In a ring of m members, member q in step
// i = 0 .. m-2 (s = +1: to the next member; -1: the previous)
//   reduce-scatter  sends chunk q - s(i+1) (its own input at i = 0, else the partial sum it
//                   received the step before) and receives chunk q - s(i+2), adding its own;
//   all-gather      sends chunk q - s i and receives chunk q - s(i+1).
// With two directions each block's halves go opposite ways ("bidirectional ring"). An
// all-reduce owns no block at the end, so its blocks are numbered in memory order (a chunk of
// a level is one range of memory, whose blocks go as few messages, loads and stores) and its
// directions take the two halves of the whole vector.
//
// Trees (all-reduce, broadcast): each program has a parent in each tree (its root none), and
// the vector is cut into one part per tree. All-reduce is a
// reduce up the tree then a broadcast down it, each one step in which a program forwards a
// piece as soon as it has it (and, reducing, has added every child's), so the pieces of a large
// vector pipeline through the tree. A chain (every program the parent of the next) is a
// pipelined ring broadcast.
//
// All-to-all: block j of program g's input goes to program j, which keeps it as block g of its
// output. Pairwise: n-1 steps, in step i every program sends to the program i+1 ahead of it
// on the ring and receives from the one i+1 behind; direct: all of it in one step.

#include <cstdint>
#include <memory>
#include <vector>

#include "components/collectives/schedule.hpp"
#include "kernels/collectives/algorithm.hpp"

namespace cubesim::kernels::collectives {

// A partition of the programs into groups of one size, each group in ring order.
using Groups = std::vector<std::vector<std::int64_t>>;

// all_reduce, reduce_scatter or all_gather over `levels` (their group sizes multiply to the
// number of programs); `block` elements per block, a multiple of `directions` (1 or 2).
// switched[l] (when given and not -1): level l is an all-reduce's in-network reduction in the
// switch of that components::SwitchLevel instead of a ring: one step in which every member
// sends its whole range of the level up (switch_reduce) and gets the sum back, so the range is
// not cut there and the all-gather has no step at that level; its groups must be the programs
// at one place of every cube (UCIe) or SIP (inter-SIP), as the switch forms them.
std::unique_ptr<components::collectives::Schedule> rings(Collective collective,
                                                         std::vector<Groups> levels,
                                                         std::int64_t block, int directions,
                                                         std::vector<int> switched = {});

// all_reduce or broadcast of `elems` elements over trees, each given by parent[g] (-1: its
// root): the vector cut into one contiguous part per tree, each part over its own tree.
std::unique_ptr<components::collectives::Schedule> trees(
    Collective collective, std::vector<std::vector<std::int64_t>> parents, std::int64_t elems);

// All-to-all of `block` elements per pair, over the ring `order` (position -> program).
std::unique_ptr<components::collectives::Schedule> all_to_all(std::vector<std::int64_t> order,
                                                              std::int64_t block, bool direct);

// A balanced binary tree over the ring `order`, rooted at program `root`: on the ring turned
// so that the root is in the middle, the middle position of a range is the parent of the
// middles of its two halves, so most parent-child pairs are near on the ring.
std::vector<std::int64_t> binary_tree(const std::vector<std::int64_t>& order, std::int64_t root);
// The balanced binary tree of the ring `order` turned by `turn` positions: position p of
// the turned ring holds order[p + turn]; the middle position of a range is the parent of the
// middles of its two halves. Its leaves are near every other position, so the trees of turns
// t and t + 1 are near complementary: all but about one program interior in one are leaves
// of the other (the double binary tree).
std::vector<std::int64_t> in_order_tree(const std::vector<std::int64_t>& order, std::int64_t turn);
// The tree complementary to binary_tree(order, root): the same tree turned one position more,
// so that the leaves of one are the interior of the other (its root is another program).
std::vector<std::int64_t> complementary_tree(const std::vector<std::int64_t>& order,
                                             std::int64_t root);
// The ring `order` the other way round, from the same first program.
std::vector<std::int64_t> reversed_ring(const std::vector<std::int64_t>& order);
// A chain along `order`: order[p-1] is the parent of order[p].
std::vector<std::int64_t> chain(const std::vector<std::int64_t>& order);

// `inner`, a schedule over `ranks` programs, run once per channel: program g of the launch
// (positions programs per rank, consecutive) is rank g / positions at position g % positions;
// the first `channels` positions of every rank each run `inner` with the same position of the
// other ranks (as NCCL's channels each run a ring on their own SM), the others do nothing.
std::unique_ptr<components::collectives::Schedule> per_channel(
    std::unique_ptr<components::collectives::Schedule> inner, std::int64_t positions,
    std::int64_t channels);

// `inner` with each output stored once instead of by every program: a segment stays an output
// only for the program that owns it, program out_at / `block`. Every program of an all-reduce
// or all-gather ends holding every block; with the output a buffer that all of them share
// (ScheduleArgs::out the same for every program), its owners then write it exactly once:
// the rings' block g by program g, a tree's whole vector (block = the vector) by program 0.
std::unique_ptr<components::collectives::Schedule> stored_by_owners(
    std::unique_ptr<components::collectives::Schedule> inner, std::int64_t block);

}  // namespace cubesim::kernels::collectives
