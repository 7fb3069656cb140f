#pragma once
// The algorithm entries, one per file of this folder; algorithm.cpp's table lists them.

#include "kernels/collectives/algorithm.hpp"

namespace cubesim::kernels::collectives {

const Algorithm& ring_algorithm();
const Algorithm& bidir_ring_algorithm();
const Algorithm& hierarchical_algorithm();
const Algorithm& switch_algorithm();
const Algorithm& mesh2d_algorithm();
const Algorithm& tree_algorithm();
const Algorithm& dtree_algorithm();
const Algorithm& pairwise_algorithm();
const Algorithm& direct_algorithm();

}  // namespace cubesim::kernels::collectives
