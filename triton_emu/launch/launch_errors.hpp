#pragma once
// What stopped a launch early, as the error a user reads: a kernel fault names the PE, its
// program and the simulated time; a deadlock lists every blocked program with the most precise
// account of its wait (a channel, a barrier's missing members, a cycle of programs each
// waiting on the next); a failed event callback is a composite operation that failed, or the
// end of simulated time.

#include <string>
#include <vector>

#include "emu/errors.hpp"
#include "emu/time.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::detail {

KernelError composite_failure(emu::Tick when, const std::string& cause);

// `used`: the PEs that ran programs (the process names are their names).
KernelError fault_error(const emu::ProcessError& e, const LaunchState& launch,
                        const std::vector<PeState*>& used);

// `pe_of_program`: each program's PE.
DeadlockError deadlock_error(const emu::DeadlockError& e, const LaunchState& launch,
                             const std::vector<PeState*>& pe_of_program);

KernelError callback_error(const emu::CallbackError& e);

}  // namespace cubesim::detail
