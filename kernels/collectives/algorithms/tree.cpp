// tree: a balanced binary tree over the ring (shapes.hpp binary_tree), rooted at program 0.
// All-reduce is a pipelined reduce up the tree and a broadcast down it; broadcast the latter.
// With channels=2 the vector is split over two trees: for all-reduce the complementary tree of
// the double binary tree (dtree), for broadcast the tree of the ring the other way round.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& tree_algorithm() {
  static const Algorithm algorithm{
      .name = "tree",
      .implements = {{Collective::all_reduce,
                      "a pipelined reduce up a binary tree and broadcast down it"},
                     {Collective::broadcast, "a pipelined binary tree"}},
      .channels = 1,
      .max_channels = 2,
      .placed =
          "two trees: the double binary tree for all-reduce, the ring either way round "
          "for broadcast",
      .element_multiple = [](Collective, GridShape) -> std::int64_t { return 1; },
      .schedule =
          [](const PlanInput& in) {
            std::vector<std::vector<std::int64_t>> parents{binary_tree(in.order, 0)};
            if (in.channels == 2)
              parents.push_back(in.collective == Collective::all_reduce
                                    ? complementary_tree(in.order, 0)
                                    : binary_tree(reversed_ring(in.order), 0));
            // Two children and a parent in each tree.
            return tree_plan(in, std::move(parents), 3 * in.channels);
          }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
