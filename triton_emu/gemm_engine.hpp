#pragma once
// composite(Op::gemm) on a PE's GEMM engine. The engine (components/pe/gemm_engine.hpp) queues
// and times the jobs: start-up, then compute at the dtype's peak rate beside streaming the
// operands given as refs in and the result out. This glue checks the call, records its accesses,
// and has the GEMM backend compute the numbers on a worker thread, started when the engine takes
// the job up and joined when it ends.

#include <cstdint>
#include <memory>

#include "triton_emu/context.hpp"

namespace cubesim::detail {

struct LaunchState;
struct PeState;

std::shared_ptr<tl::HandleState> start_gemm(LaunchState& launch, PeState& pe, tl::Context& ctx,
                                            std::uint32_t program, std::uint32_t epoch,
                                            const tl::Context::Operand& a,
                                            const tl::Context::Operand& b, Ptr out,
                                            const tl::CompositeOptions& options);
// Blocks until the operation is done; from then on its accesses are ordered like the
// program's own (AccessLog::waited).
void wait_gemm(LaunchState& launch, tl::HandleState& h, std::uint32_t program, std::uint32_t epoch);

}  // namespace cubesim::detail
