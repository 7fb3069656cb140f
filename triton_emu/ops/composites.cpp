#include "triton_emu/ops/composites.hpp"

#include <string>

#include "emu/log.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::ops {

using components::hex_address;
using detail::GemmOut;
using detail::Program;

std::shared_ptr<tl::HandleState> composite(Program& program, tl::Op op, const tl::Operand& a,
                                           const tl::Operand& b, const GemmOut& out,
                                           const tl::CompositeOptions& options) {
  program.sync();
  if (op != tl::Op::gemm) program.fault("composite: unknown operation");
  auto state = detail::start_gemm(program, a, b, out, options);
  if (program.launch().trace_calls)
    emu::log().trace(
        "{}: composite gemm issued, output {}", program.pe_name(),
        out.to_tile ? std::string("to an SRAM tile") : "at " + hex_address(out.ptr.addr));
  return state;
}

std::shared_ptr<tl::HandleState> composite_onto(Program& program, tl::Op op, const tl::Operand& a,
                                                const tl::Operand& b,
                                                std::shared_ptr<tl::HandleState> acc_job,
                                                const tl::CompositeOptions& options) {
  if (!acc_job)
    program.fault("composite: the accumulator handle was not returned by a composite to a tile");
  return composite(program, op, a, b, GemmOut{.to_tile = true, .acc_job = std::move(acc_job)},
                   options);
}

void wait(Program& program, tl::HandleState* h) {
  program.sync();
  if (h == nullptr) program.fault("wait: the handle was not returned by composite()");
  detail::check_handle_owner(program, *h);
  detail::LaunchState& launch = program.launch();
  const emu::Tick start = launch.sched.now();
  detail::wait_gemm(program, *h);
  program.pe().hw.counters().gemm_wait_ps += launch.sched.now() - start;
  if (launch.trace_calls)
    emu::log().trace("{}: waited {} for a composite", program.pe_name(),
                     emu::format_time(launch.sched.now() - start));
}

tl::Tile wait_tile(Program& program, tl::HandleState* h) {
  if (h != nullptr) {
    detail::check_handle_owner(program, *h);
    detail::check_result_handle(program, *h);
  }
  wait(program, h);
  return detail::gemm_result(*h);
}

}  // namespace cubesim::ops
