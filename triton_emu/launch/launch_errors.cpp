#include "triton_emu/launch/launch_errors.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "triton_emu/ops/channels.hpp"

namespace cubesim::detail {

namespace {

// The blocked programs, each once, with the most precise account of its wait there is (the
// channel it waits on, else what the scheduler knows); their PEs' names go to `blocked`.
std::string blocked_programs(const emu::DeadlockError& e, const Messages& messages,
                             std::vector<std::string>& blocked) {
  constexpr std::size_t kListed = 64;
  const auto on_channels = messages.blocked_by_pe();
  std::string out;
  for (const auto& b : e.blocked()) {
    if (blocked.size() < kListed) {
      const auto it = on_channels.find(b.process);
      out += "\n  " + b.process + " " +
             (it != on_channels.end() ? it->second : "waits on " + b.waits_on);
    }
    blocked.push_back(b.process);
  }
  if (blocked.size() > kListed)
    out += "\n  ... and " + std::to_string(blocked.size() - kListed) + " more";
  const auto cycles = messages.blocked_cycles();
  for (std::size_t k = 0; k < cycles.size() && k < 8; ++k)
    out += "\n  a cycle, each waiting on the next: " + cycles[k];
  if (cycles.size() > 8) out += "\n  ... and " + std::to_string(cycles.size() - 8) + " more cycles";
  return out;
}

// The members of the barrier `key` that never arrived (the program, its PE, and whether it
// finished or waits elsewhere).
std::vector<std::string> missing_members(const LaunchState& L,
                                         const std::tuple<int, std::int64_t, std::uint32_t>& key,
                                         const LaunchState::BarrierArrivals& a,
                                         const std::vector<PeState*>& pe_of_program,
                                         const std::vector<std::string>& blocked) {
  const auto& [scope, group, generation] = key;
  std::vector<bool> arrived(L.coords.size(), false);
  for (const auto p : a.programs) arrived[p] = true;
  std::vector<std::string> missing;
  for (std::size_t p = 0; p < L.coords.size(); ++p) {
    const auto& id = L.coords[p].id;
    if (L.barrier_group(scope, L.coords[p]) != group || arrived[p]) continue;
    const std::string& pe = pe_of_program[p]->name;
    const bool waits = std::find(blocked.begin(), blocked.end(), pe) != blocked.end();
    missing.push_back(fmt::format("program ({}, {}, {}) on {} ({})", id[0], id[1], id[2], pe,
                                  waits ? "waits elsewhere, above" : "finished without it"));
  }
  return missing;
}

// Each barrier that some of its members never reached, and those members.
std::string barriers_not_reached(const LaunchState& L, const std::vector<PeState*>& pe_of_program,
                                 const std::vector<std::string>& blocked) {
  std::string out;
  for (const auto& [key, a] : L.barrier_arrivals) {
    if (a.programs.size() >= a.members) continue;
    const auto missing = missing_members(L, key, a, pe_of_program, blocked);
    out += fmt::format("\n  {}: {} of {} members arrived; not arrived:", a.name, a.programs.size(),
                       a.members);
    for (std::size_t k = 0; k < missing.size() && k < 16; ++k) out += "\n    " + missing[k];
    if (missing.size() > 16) out += fmt::format("\n    ... and {} more", missing.size() - 16);
  }
  return out;
}

}  // namespace

KernelError composite_failure(emu::Tick when, const std::string& cause) {
  return KernelError("a composite operation failed at " + emu::format_time(when) + ": " + cause, "",
                     when);
}

KernelError fault_error(const emu::ProcessError& e, const LaunchState& launch,
                        const std::vector<PeState*>& used) {
  const std::string cause = emu::describe_exception(e.cause());
  const std::string& where = e.process();
  std::string program;
  for (const auto* pe : used)
    if (pe->name == where) {
      const auto& pc = launch.coords[pe->program];
      program = " (program_id " + std::to_string(pc.id[0]) + ", " + std::to_string(pc.id[1]) +
                ", " + std::to_string(pc.id[2]) + ")";
    }
  return KernelError(
      "kernel fault on " + where + program + " at " + emu::format_time(e.time()) + ": " + cause,
      where, e.time());
}

DeadlockError deadlock_error(const emu::DeadlockError& e, const LaunchState& launch,
                             const std::vector<PeState*>& pe_of_program) {
  std::vector<std::string> blocked;
  std::string msg = "deadlock at " + emu::format_time(e.time()) + ": " +
                    std::to_string(e.blocked().size()) +
                    " program(s) wait on something that can never happen:";
  msg += blocked_programs(e, *launch.messages, blocked);
  msg += barriers_not_reached(launch, pe_of_program, blocked);
  msg +=
      "\nEvery program must reach every barrier(), wait() only on handles its own "
      "composite() returned, and recv only what its peer sends (a send blocks while the "
      "channel's slots are full).";
  return DeadlockError(msg, std::move(blocked), e.time());
}

KernelError callback_error(const emu::CallbackError& e) {
  try {
    std::rethrow_exception(e.cause());
  } catch (const emu::TimeOverflow& overflow) {
    // A transfer's or GEMM's end would lie past the end of simulated time: not the
    // composite's doing, whatever event found it.
    return KernelError("the run reached the end of simulated time at " +
                           emu::format_time(e.time()) + " (in '" + e.label() +
                           "'): " + overflow.what(),
                       "", e.time());
  } catch (...) {
  }
  return composite_failure(e.time(), emu::describe_exception(e.cause()));
}

}  // namespace cubesim::detail
