// dtree: the double binary tree (as NCCL's): the vector split over two complementary balanced
// binary trees over the ring, so that all but about one program interior in one tree are
// leaves of the other.
#include "kernels/collectives/algorithms/algorithms.hpp"
#include "kernels/collectives/plan.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& dtree_algorithm() {
  static const Algorithm algorithm{
      .name = "dtree",
      .implements = {{Collective::all_reduce,
                      "half the vector over each of two complementary binary trees"}},
      .channels = 2,
      .max_channels = 2,
      .placed = "its two complementary trees",
      .element_multiple = [](Collective, GridShape) -> std::int64_t { return 1; },
      .schedule =
          [](const PlanInput& in) {
            return tree_plan(in, {binary_tree(in.order, 0), complementary_tree(in.order, 0)},
                             3 * in.channels);
          }};
  return algorithm;
}

}  // namespace cubesim::kernels::collectives
