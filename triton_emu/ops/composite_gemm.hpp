#pragma once
// composite(Op::gemm) on a PE's GEMM engine. The engine (components/pe/gemm_engine.hpp) queues
// and times the jobs: start-up, then compute at the dtype's peak rate and the epilogue steps
// beside streaming the operands given as refs in and the result out. This glue checks the call,
// records its accesses, reserves an SRAM result, and has the GEMM backend compute the numbers
// (and the epilogue) on a worker thread, started when the engine takes the job up and joined
// when it ends.

#include <cstdint>
#include <memory>

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/memory/ptr.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::detail {

// Where a composite GEMM's result goes: memory at `ptr` (rows options.out_row_stride apart), or
// a tile in SRAM, new or accumulating into `acc` or into the result of `acc_job`.
struct GemmOut {
  Ptr ptr{};
  bool to_tile = false;
  const tl::Tile* acc = nullptr;
  std::shared_ptr<tl::HandleState> acc_job{};
};

// Checks the call (a fault naming what is wrong), records its accesses, reserves an SRAM result
// and submits the job to the PE's engine: the composite's state, for its handle.
std::shared_ptr<tl::HandleState> start_gemm(Program& caller, const tl::Operand& a,
                                            const tl::Operand& b, const GemmOut& out,
                                            const tl::CompositeOptions& options);
// Blocks until the operation is done; from then on its accesses are ordered like the
// program's own (AccessLog::waited).
void wait_gemm(const Program& caller, tl::HandleState& h);
// A fault unless `h` still owns its result tile (it was not passed on as an accumulator).
void check_result_handle(const Program& caller, const tl::HandleState& h);
// Faults unless the composite behind `h` was issued by `caller`, in this launch.
void check_handle_owner(const Program& caller, const tl::HandleState& h);
// The result tile of a finished composite to a tile, handed out to the program.
tl::Tile gemm_result(tl::HandleState& h);

}  // namespace cubesim::detail
