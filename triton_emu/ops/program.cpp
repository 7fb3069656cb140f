#include "triton_emu/ops/program.hpp"

#include <fmt/format.h>

#include "triton_emu/ops/copy.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::detail {

using tl::Shape;
using tl::Tile;

Program::Program(LaunchState& launch, PeState& pe, std::uint32_t index)
    : tl::TileOwner(pe.hw, pe.name, launch.sys.timing_only()),
      launch_(launch),
      pe_(pe),
      index_(index) {}

Program::~Program() = default;

emu::Tick Program::now() const {
  return launch_.sched.now() + pending().issue + pending().time;
}

// ---- Vector unit ------------------------------------------------------------------------------

void Program::sync() {
  if (pending().time == 0 && pending().issue == 0) return;
  const auto [t, elements, ops, issue] = take_pending();
  pe_.hw.counters().issue_busy_ps += issue;
  if (issue > 0) {
    const emu::Tick from = launch_.sched.now();
    launch_.sched.wait_for(issue);
    if (launch_.tracing(pe_)) launch_.trace_slice(pe_, false, "issue", from, from + issue, "{}");
  }
  if (t == 0) return;
  const emu::Tick start = launch_.sched.now();
  pe_.hw.counters().vector_busy_ps += t;
  pe_.hw.counters().vector_elements += elements;
  launch_.sched.wait_for(t);
  if (launch_.tracing(pe_)) {
    // The work paid for since the last sync: its elements and the kinds of op among them.
    std::string names;
    for (const auto op : components::kAllVectorOps)
      if (ops & (1u << static_cast<unsigned>(op)))
        names += (names.empty() ? "" : ", ") + std::string(components::vector_op_name(op));
    launch_.trace_slice(pe_, false, "vector", start, start + t,
                        fmt::format(R"({{"elements":{},"ops":"{}"}})", elements, names));
  }
}

// ---- Checks shared by the operations ----------------------------------------------------------

void Program::require_one_wave(const std::string& what) const {
  if (launch_.waves <= 1) return;
  fault(fmt::format(
      "{} on {}: this launch runs its {} programs in {} waves on {} PEs, so programs of later "
      "waves start only as earlier ones end and cannot be waited for; barriers and messages "
      "need every program running at once: launch at most {} programs (a grid that fits one "
      "wave), or coordinate through memory and atomics",
      what, pe_.name, launch_.coords.size(), launch_.waves, launch_.pes_used, launch_.pes_used));
}

void Program::require_this_launch(const Tile& t, const char* handle, const char* call,
                                  const char* why) const {
  if (tl::TileAccess::launch(t) != pe_.hw.sram().tenant)
    fault(fmt::format("wait on {}: the {} comes from a {} of an earlier launch; {}", pe_.name,
                      handle, call, why));
}

bool Program::owns(const Tile& t) const {
  return &tl::TileAccess::owner(t) == this;
}

}  // namespace cubesim::detail
