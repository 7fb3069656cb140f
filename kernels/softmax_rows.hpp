#pragma once
// softmax_rows: out[r, :] = softmax(x[r, :]) for a rows x cols row-major matrix, one program
// per block of rows (multi-dimensional-grid-patterns.md, "one threadgroup per row"): a program
// loads a block of block_rows whole rows into SRAM, subtracts each row's maximum, exponentiates,
// sums and divides, and stores the block. The blocks are dealt to all programs in a
// grid-stride loop over the global program id (all three grid axes). The last block, when
// rows % block_rows != 0, is loaded and stored with a row mask, as in Triton.
//
// Numerics: f16/bf16 inputs are converted to f32 once, everything is computed in f32 and
// rounded to the dtype once at the end. Subtracting the row maximum first keeps exp() <= 1, so
// rows with large values (the harness shifts rows by up to +-100, where exp overflows f32)
// do not overflow.

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

// block_rows = 0 picks softmax_block_rows(free SRAM, ...).
void softmax_rows(tl::Context& tl, Ptr x_ptr, Ptr out_ptr, std::int64_t rows, std::int64_t cols,
                  std::int64_t block_rows, DType dtype);

// SRAM a program needs per element of a block: the input, its f32 copy, the shifted values,
// their exponentials, the quotients, the result in the dtype and the tail's i32 mask.
constexpr std::uint64_t softmax_sram_per_element(DType dtype) {
  return 2 * dtype_size(dtype) + 20;
}

// The automatic block: as many rows as fit in `sram_bytes`, but no more than an even share of
// the rows among `programs` (so that every program has work), and at least 1.
std::int64_t softmax_block_rows(std::uint64_t sram_bytes, std::int64_t rows, std::int64_t cols,
                                DType dtype, std::int64_t programs);

KernelInfo softmax_rows_info();

}  // namespace cubesim::kernels
