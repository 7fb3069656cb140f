#pragma once
// A PE's GEMM engine running composite(Op::gemm) operations: a FIFO of jobs, one at a time.
// A job's time is components::GemmTimingModel's: start-up, then compute at the dtype's peak
// rate in parallel with streaming its in-memory operands (refs) in and its result out over the
// fabric; it ends when the longer of the two does. The numbers are computed by the GEMM
// backend on a worker thread, started when the job starts and joined when it ends.

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
void wait_gemm(tl::HandleState& h);

}  // namespace cubesim::detail
