#pragma once
// The collective kernels of the CLI (allreduce, reduce_scatter, allgather, broadcast,
// alltoall): harnesses that plan a collective with the algorithm the `algorithm` parameter
// names (algorithm.hpp), run it with the executor (executor.hpp), verify it and report
// NCCL-style bandwidths beside the alpha-beta model's time.
//
// Bandwidths (NCCL's definitions, docs/performance.md of nccl-tests): for S bytes per program
// and a collective time t, algbw = S / t and busbw = algbw * 2(n-1)/n for all-reduce,
// algbw * (n-1)/n for all-gather, reduce-scatter and all-to-all (S: the all-gathered output,
// the reduce-scatter input, the all-to-all input), algbw for broadcast; busbw is then
// comparable to a link's bandwidth whatever n.

#include "kernels/registry.hpp"

namespace cubesim::kernels::collectives {

KernelInfo allreduce_info();
KernelInfo reduce_scatter_info();
KernelInfo allgather_info();
KernelInfo broadcast_info();
KernelInfo alltoall_info();

}  // namespace cubesim::kernels::collectives
