#pragma once
// vector_add: Triton's first tutorial on the cube grid. out[i] = x[i] + y[i] for i < n, in
// BLOCK-sized chunks: chunk c covers offs = c * BLOCK + arange(0, BLOCK), masked with offs < n.
// The chunks are dealt to all programs in a grid-stride loop (program g of P takes chunks
// g, g + P, g + 2P, ...), with g the global program id over all three grid axes (DESIGN.md).

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

// x, y and out hold n elements of dtype (f16, bf16, f32 or i32), contiguous. Any n >= 0 and
// block >= 1 work; a program needs about block * (3 * element size + 8) bytes of SRAM.
void vector_add(tl::Context& tl, Ptr x_ptr, Ptr y_ptr, Ptr out_ptr, std::int64_t n,
                std::int64_t block, DType dtype);

// The same, double-buffered: a program's next chunk is loaded (tl.load_async) while this one is
// added, and each sum is stored asynchronously while the next chunk is added. Needs about
// block * (6 * element size + 8) bytes of SRAM (two chunks of x and y, two sums in flight).
void vector_add_pipelined(tl::Context& tl, Ptr x_ptr, Ptr y_ptr, Ptr out_ptr, std::int64_t n,
                          std::int64_t block, DType dtype);

KernelInfo vector_add_info();

}  // namespace cubesim::kernels
