// tree: a balanced binary tree over the ring (shapes.hpp binary_tree), rooted at program 0.
// All-reduce is a pipelined reduce up the tree and a broadcast down it; broadcast the latter.
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
      .element_multiple = [](Collective, GridShape) -> std::int64_t { return 1; },
      .schedule =
          [](const PlanInput& in) {
            return tree_plan(in, binary_tree(in.order, 0), 3);  // two children and a parent
          }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
