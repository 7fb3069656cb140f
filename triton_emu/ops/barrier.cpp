#include "triton_emu/ops/barrier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "emu/log.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::ops {

using detail::LaunchState;
using detail::PeState;
using detail::Program;

namespace {

// A hardware barrier of a scope gathers an arrival from every PE of the scope at its first PE
// and sends the release back: after the last arrival it takes twice the longest latency from a
// PE of the scope to the first (messages of a few bytes: latency only, no link occupied).
emu::Tick release_latency(LaunchState& launch, int level, std::uint32_t pe) {
  const auto& topo = launch.sys.network().topology();
  const std::uint32_t per_cube = topo.pes_per_cube();
  const std::uint32_t per_sip = per_cube * topo.config().cubes_per_sip;
  const std::uint32_t span = level == 0 ? per_cube : level == 1 ? per_sip : topo.total_pes();
  const std::uint32_t first = pe / span * span;
  auto [it, fresh] = launch.barrier_release.try_emplace({level, first}, 0);
  if (!fresh) return it->second;
  emu::Tick worst = 0;
  for (std::uint32_t q = first; q < first + span; ++q)
    worst = std::max(
        worst, topo.router_delay() + topo.route_latency(q / per_cube, topo.node_of_pe(q % per_cube),
                                                        first / per_cube,
                                                        topo.node_of_pe(first % per_cube)));
  it->second = 2 * worst;
  return it->second;
}

}  // namespace

void barrier(Program& program, tl::Scope scope) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  program.sync();
  const int level = static_cast<int>(scope);
  if (level < 0 || level > 2)
    program.fault("barrier: unknown scope " + std::to_string(level) +
                  "; use Scope::cube, Scope::sip or Scope::all");
  program.require_one_wave("barrier");
  const auto& me = launch.coords[program.index()].id;
  const std::int64_t per_cube = launch.grid[0], per_sip = per_cube * launch.grid[1];
  const std::int64_t group = launch.barrier_group(level, launch.coords[program.index()]);
  std::size_t members = launch.coords.size();
  if (scope == tl::Scope::cube)
    members = static_cast<std::size_t>(per_cube);
  else if (scope == tl::Scope::sip)
    members = static_cast<std::size_t>(per_sip);
  const std::uint32_t generation = program.pass_barrier(level);
  const std::string name =
      scope == tl::Scope::all ? "barrier " + std::to_string(generation)
      : scope == tl::Scope::cube
          ? fmt::format("barrier(cube) {} of cube ({}, {})", generation, me[1], me[2])
          : fmt::format("barrier(sip) {} of SIP {}", generation, me[2]);
  emu::Completion& c = launch.barrier(level, group, generation, members, name, program.index());
  if (launch.trace_calls) emu::log().trace("{}: arrives at {}", pe.name, name);
  if (launch.log)
    launch.log->barrier(program.index(), level, group, generation,
                        static_cast<std::uint32_t>(members));
  const emu::Tick arrived = launch.sched.now();
  c.arrive();
  c.wait();
  if (const emu::Tick release = release_latency(launch, level, pe.hw.global_pe()); release > 0)
    launch.sched.wait_for(release);
  if (launch.log) launch.log->returned(program.index());
  pe.hw.counters().barrier_wait_ps += launch.sched.now() - arrived;
  if (launch.sched.now() > arrived && launch.tracing(pe))
    launch.trace_slice(pe, false, "barrier", arrived, launch.sched.now(),
                       fmt::format(R"({{"barrier":"{}","members":{}}})", name, members));
}

}  // namespace cubesim::ops
