#pragma once
// A PE's GEMM engine running composite(Op::gemm) operations: a FIFO of jobs, one at a time.
// A job's time is components::GemmTimingModel's: start-up, then compute at the dtype's peak
// rate in parallel with streaming its in-memory operands (refs) in and its result out over the
// network; it ends when the longer of the two does. The numbers are computed by the GEMM
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
// Blocks until the operation is done; from then on its accesses are ordered like the
// program's own (AccessLog::waited).
void wait_gemm(LaunchState& launch, tl::HandleState& h, std::uint32_t program, std::uint32_t epoch);
// Drops the PE's queued and running GEMMs after a run stopped early (their events are gone):
// waits for numerics still on a worker thread, then frees the jobs and their operand tiles.
void drop_gemm_queue(PeState& pe);

}  // namespace cubesim::detail
