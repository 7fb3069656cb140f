#pragma once
// tl.composite and its waits: a composite GEMM issued to the PE's engine (ops/composite_gemm.hpp
// checks and submits it) returns at once; waiting blocks until the engine has finished it.

#include <memory>

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/composite_gemm.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::ops {

// The composite's state, for its handle.
std::shared_ptr<tl::HandleState> composite(detail::Program& program, tl::Op op,
                                           const tl::Operand& a, const tl::Operand& b,
                                           const detail::GemmOut& out,
                                           const tl::CompositeOptions& options);
// Into the result of `acc_job`, a composite to a tile (a TileHandle's; nullptr: a fault).
std::shared_ptr<tl::HandleState> composite_onto(detail::Program& program, tl::Op op,
                                                const tl::Operand& a, const tl::Operand& b,
                                                std::shared_ptr<tl::HandleState> acc_job,
                                                const tl::CompositeOptions& options);
// Blocks until the composite of `h` (a Handle's; nullptr: a fault) is done.
void wait(detail::Program& program, tl::HandleState* h);
// The same for a composite to a tile: its result, handed to the program.
tl::Tile wait_tile(detail::Program& program, tl::HandleState* h);

}  // namespace cubesim::ops
