#pragma once
// composite(Op::gemm) on a PE's GEMM engine. The engine (components/pe/gemm_engine.hpp) queues
// and times the jobs: start-up, then compute at the dtype's peak rate and the epilogue steps
// beside streaming the operands given as refs in and the result out. This glue checks the call,
// records its accesses, reserves an SRAM result, and has the GEMM backend compute the numbers
// (and the epilogue) on a worker thread, started when the engine takes the job up and joined
// when it ends.

#include <cstdint>
#include <memory>

#include "triton_emu/context.hpp"

namespace cubesim::detail {

struct LaunchState;
struct PeState;

// Where a composite GEMM's result goes: memory at `ptr` (rows options.out_row_stride apart), or
// a tile in SRAM, new or accumulating into `acc` or into the result of `acc_job`.
struct GemmOut {
  Ptr ptr{};
  bool to_tile = false;
  const tl::Tile* acc = nullptr;
  std::shared_ptr<tl::HandleState> acc_job{};
};

std::shared_ptr<tl::HandleState> start_gemm(LaunchState& launch, PeState& pe, tl::Context& ctx,
                                            std::uint32_t program, std::uint32_t epoch,
                                            const tl::Context::Operand& a,
                                            const tl::Context::Operand& b, const GemmOut& out,
                                            const tl::CompositeOptions& options);
// Blocks until the operation is done; from then on its accesses are ordered like the
// program's own (AccessLog::waited).
void wait_gemm(LaunchState& launch, tl::HandleState& h, std::uint32_t program, std::uint32_t epoch);
// A fault unless `h` still owns its result tile (it was not passed on as an accumulator).
void check_result_handle(const tl::Context& ctx, const tl::HandleState& h);
// Faults unless the composite behind `h` was issued by the program of `ctx`, in this launch
// (`launch`: the tenant of its PE's SRAM, components::Sram::tenant).
void check_handle_owner(const tl::Context& ctx, std::uint64_t launch, const tl::HandleState& h);
// The result tile of a finished composite to a tile, handed out to the program.
tl::Tile gemm_result(tl::HandleState& h);

}  // namespace cubesim::detail
