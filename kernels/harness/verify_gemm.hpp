#pragma once
// The check every GEMM kernel's harness shares: C = A . B against an fp64 reference.

#include <cstdint>
#include <functional>

#include "components/dtype.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// Verifies C = A . B (a: M x K, b: K x N, logical row-major) as computed in the simulation:
// element (i, j) of C is at flat element index index_of(i, j) from `c`. Every element is
// checked when the fp64 reference is affordable (elements_to_check), else a sample drawn from
// `seed`; the tolerance is one rounding of an f32-accumulated dot product of length K
// (dot_tolerance). Fills the outcome as set_verification does.
void verify_gemm(Outcome& out, const Simulation& sim, Ptr c, DType dtype, const HostArray& a,
                 const HostArray& b, std::int64_t M, std::int64_t K, std::int64_t N,
                 std::uint64_t seed,
                 const std::function<std::int64_t(std::int64_t, std::int64_t)>& index_of);

}  // namespace cubesim::kernels
