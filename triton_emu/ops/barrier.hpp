#pragma once
// tl.barrier: every program of the scope (the caller's cube, its SIP, or the whole launch)
// waits until all of them have arrived. A program that finishes without arriving leaves the
// others waiting: a deadlock, reported with every blocked PE. Barriers order the access log's
// epochs (Program::epoch).

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::ops {

void barrier(detail::Program& program, tl::Scope scope);

}  // namespace cubesim::ops
