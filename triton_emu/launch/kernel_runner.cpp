#include "triton_emu/launch/kernel_runner.hpp"

#include <algorithm>
#include <chrono>

#include "components/network/message_window.hpp"
#include "emu/log.hpp"
#include "emu/progress.hpp"
#include "triton_emu/launch/launch_errors.hpp"
#include "triton_emu/memory/host_memory.hpp"
#include "triton_emu/ops/atomic_unit.hpp"
#include "triton_emu/ops/channels.hpp"
#include "triton_emu/ops/copies.hpp"
#include "triton_emu/ops/switch_reduce.hpp"

namespace cubesim::detail {

namespace {

LaunchPlan plan(const LaunchResources& parts, const Grid& grid) {
  if (parts.sched.abandoned_processes() > 0)
    throw UsageError(
        "this Simulation cannot launch again: a program's stack overflowed in an earlier launch, "
        "and its fiber was abandoned with what it held (tiles and their SRAM); make a new "
        "Simulation, with a larger SimOptions::stack_size (--stack-size)");
  const HostMemoryLimit limit = host_memory_limit(parts.options.host_memory_limit);
  return plan_launch(parts.spec.config(), grid, limit.bytes, limit.source);
}

std::shared_ptr<AccessLog> make_log(const SimOptions& options) {
  auto log = std::make_shared<AccessLog>();
  log->set_limit(options.max_logged_accesses);
  return log;
}

}  // namespace

KernelRunner::KernelRunner(const LaunchResources& parts, const Grid& grid, const Body& body,
                           std::uint64_t launch_id)
    : parts_(parts),
      body_(body),
      launch_id_(launch_id),
      plan_(plan(parts, grid)),
      log_(make_log(parts.options)),
      state_{parts.sched,    parts.sys,
             parts.memory,   parts.options.timing_only ? nullptr : &parts.gemm,
             parts.trace,    parts.options.record_accesses ? log_.get() : nullptr,
             parts.deferred, parts.allocations},
      pe_of_program_(plan_.programs),
      contexts_(plan_.programs) {
  std::copy(plan_.grid, plan_.grid + 3, state_.grid);
  state_.coords = std::move(plan_.coords);
  state_.waves = plan_.waves;
  state_.pes_used = plan_.queues.size();
  state_.placement = &parts.placement;
  state_.trace_flows = parts.options.trace_flows;
  state_.start = parts.sched.now();
  // The launch's own time (system.dispatch.launch) passes before the dispatcher starts any.
  state_.dispatcher_free = state_.start + parts.spec.config().dispatch.launch;
  state_.trace_calls = emu::log().should_log(spdlog::level::trace);
  used_.reserve(plan_.queues.size());
  for (const auto& q : plan_.queues) {
    used_.push_back(&parts.pes[q.pe]);
    for (std::uint32_t p : q.programs) pe_of_program_[p] = used_.back();
  }
}

std::shared_ptr<const AccessLog> KernelRunner::access_log() const {
  return state_.log ? log_ : nullptr;
}

RunResult KernelRunner::run() {
  begin();
  struct End {
    KernelRunner& runner;
    ~End() { runner.end(); }
  } end{*this};
  log_launch();
  spawn();
  const auto wall0 = std::chrono::steady_clock::now();
  const std::uint64_t events0 = parts_.sched.events_executed();
  run_to_end();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const std::uint64_t events = parts_.sched.events_executed() - events0;
  emu::log().info("launch {} done: {} simulated, {} events, {:.3f} s", launch_id_,
                  emu::format_time(parts_.sched.now() - state_.start), events, wall);
  return result(wall, events);
}

// The launch's statistics zeroed, its channels, atomics and access log readied, and its PEs'
// SRAM stamped with the launch: tiles are refused once it ends (Tile::context()).
void KernelRunner::begin() {
  parts_.sys.network().reset_stats();
  for (auto& p : parts_.hw_pes) p.reset_statistics();
  parts_.messages.begin(state_.grid, pe_of_program_);
  state_.messages = &parts_.messages;
  parts_.atomics.begin_launch();
  state_.atomics = &parts_.atomics;
  parts_.reductions.begin();
  state_.reductions = &parts_.reductions;
  if (state_.log)
    state_.log->set_programs(state_.coords, components::fewest_slots(parts_.spec.config()));
  for (auto* pe : used_) pe->hw.sram().tenant = launch_id_;
}

void KernelRunner::end() {
  for (auto* pe : used_) pe->hw.sram().tenant = 0;
  parts_.messages.end();
  parts_.reductions.end();
}

void KernelRunner::log_launch() const {
  const std::int64_t* g = state_.grid;
  if (plan_.dispatched)
    emu::log().info(
        "launch {} of '{}': logical grid [{}, {}, {}], {} program(s) in {} wave(s) on {} of {} "
        "PE(s) of '{}' ({} dispatch)",
        launch_id_, parts_.kernel_name, g[0], g[1], g[2], plan_.programs, plan_.waves, used_.size(),
        parts_.pes.size(), parts_.spec.origin(), components::dispatch_policy_name(plan_.policy));
  else
    emu::log().info("launch {} of '{}': grid [{}, {}, {}], {} program(s) on {} PE(s) of '{}'",
                    launch_id_, parts_.kernel_name, g[0], g[1], g[2], used_.size(),
                    parts_.pes.size(), parts_.spec.origin());
}

// One fiber per PE that runs programs: its programs one after another, then the PE's finish.
void KernelRunner::spawn() {
  for (std::size_t q = 0; q < plan_.queues.size(); ++q) {
    PeState* pe = used_[q];
    parts_.sched.spawn(pe->name, [this, pe, programs = std::move(plan_.queues[q].programs)] {
      if (!plan_.dispatched) wait_for_launch(*pe);
      for (const std::uint32_t program : programs) run_program(*pe, program);
      pe->hw.counters().finish_ps = parts_.sched.now() - state_.start;
    });
  }
}

// On the hardware grid every program starts once the launch's own time has passed.
void KernelRunner::wait_for_launch(PeState& pe) {
  const emu::Tick launch = parts_.spec.config().dispatch.launch;
  if (launch == 0) return;
  const emu::Tick now = parts_.sched.now();
  parts_.sched.wait_for(launch);
  pe.hw.counters().dispatch_wait_ps += launch;
  state_.trace_slice(pe, false, "launch", now, now + launch);
}

// On a logical grid the dispatcher starts one program at a time, each `dispatch.cost` after
// the one before (the first after the launch's own time).
void KernelRunner::wait_for_dispatcher(PeState& pe) {
  const emu::Tick now = parts_.sched.now();
  const emu::Tick start =
      std::max(now, state_.dispatcher_free) + parts_.spec.config().dispatch.cost;
  state_.dispatcher_free = start;
  if (start > now) {
    parts_.sched.wait_for(start - now);
    pe.hw.counters().dispatch_wait_ps += start - now;
    state_.trace_slice(pe, false, "dispatch", now, start);
  }
}

void KernelRunner::run_program(PeState& pe, std::uint32_t program) {
  auto& logger = emu::log();
  pe.program = program;
  const ProgramCoord& coord = state_.coords[program];
  if (plan_.dispatched) wait_for_dispatcher(pe);
  contexts_[program].reset(new tl::Context(state_, pe, program));
  tl::Context& ctx = *contexts_[program];
  const emu::Tick begin = parts_.sched.now();
  const bool debug = logger.should_log(spdlog::level::debug);
  if (debug) logger.debug("{} starts on {}", coord.str(), pe.name);
  std::exception_ptr error;
  try {
    body_(ctx);
  } catch (...) {
    error = std::current_exception();
  }
  // Pay the vector time not yet paid, so a fault is reported at the time it happened.
  // (Outside the handler: switching fibers with an exception being handled is unsafe.)
  ctx.program_.sync();
  if (error) {
    if (logger.should_log(spdlog::level::debug))
      logger.debug("{} on {} stops: {}", coord.str(), pe.name, emu::describe_exception(error));
    std::rethrow_exception(error);
  }
  ops::finish_copies(ctx.program_);  // a program ends when its copies have landed
  ++pe.hw.counters().programs;
  if (plan_.dispatched && state_.tracing(pe))
    state_.trace_slice(pe, false, coord.str().c_str(), begin, parts_.sched.now());
  const auto& c = pe.hw.counters();
  if (debug)
    logger.debug(
        "{} ends on {} (the PE so far: vector {}, memory wait {}, GEMM wait {}, send wait {}, "
        "recv wait {}, dispatch wait {})",
        coord.str(), pe.name, emu::format_time(c.vector_busy_ps),
        emu::format_time(c.memory_wait_ps), emu::format_time(c.gemm_wait_ps),
        emu::format_time(c.send_wait_ps), emu::format_time(c.recv_wait_ps),
        emu::format_time(c.dispatch_wait_ps));
}

// Runs the scheduler until every program has ended, with progress reports; what stops it
// early is thrown as the error a user reads, once the hardware is idle again.
void KernelRunner::run_to_end() {
  const auto programs_done = [this] {
    std::uint64_t done = 0;
    for (const auto* pe : used_) done += pe->hw.counters().programs;
    return done;
  };
  try {
    emu::run_reporting(parts_.sched, {.report = &parts_.options.progress,
                                      .what = parts_.kernel_name,
                                      .unit = "programs",
                                      .total = plan_.programs,
                                      .done = programs_done,
                                      .interval = parts_.options.progress_interval});
    settle();
  } catch (const emu::ProcessError& e) {
    recover();
    throw fault_error(e, state_, used_);
  } catch (const emu::DeadlockError& e) {
    recover();
    throw deadlock_error(e, state_, pe_of_program_);
  } catch (const emu::CallbackError& e) {
    recover();
    throw callback_error(e);
  }
  std::string left = parts_.messages.leftovers();
  if (std::string unjoined = parts_.reductions.leftovers(); !unjoined.empty())
    left += (left.empty() ? "" : "; ") + unjoined;
  if (!left.empty()) {
    recover();
    const emu::Tick now = parts_.sched.now();
    throw KernelError("kernel fault at " + emu::format_time(now) + ": " + left, "", now);
  }
}

// Memory shows every result once the launch returns: the products still held, and the values
// of tiles kept past the launch.
void KernelRunner::settle() {
  if (parts_.gemm.held) {
    try {
      parts_.gemm.held->settle();
    } catch (const std::exception& e) {
      throw composite_failure(parts_.sched.now(), e.what());
    }
  }
  if (parts_.deferred) parts_.deferred->settle();
  if (state_.log) state_.log->finished();
}

// After a run stopped early (a fault, a deadlock, a failed callback), memory shows the GEMMs
// whose engine finished, as it would have had they been computed at once; the others never
// finish. Then the hardware is made idle, as in a new Simulation: the scheduler has dropped
// every event, so queued GEMMs and transfers in flight would wait forever (their callbacks point
// into the stopped programs' stacks). A failure here is not reported: the error that stopped
// the run is the one to see.
void KernelRunner::recover() {
  if (auto& held = parts_.gemm.held) {
    held->drop_incomplete();
    try {
      held->settle();
    } catch (const std::exception&) {
      held->drop_incomplete();
    }
  }
  // Programs that stopped keep their tiles until their fibers go, perhaps after this launch.
  if (parts_.deferred) parts_.deferred->settle();
  for (auto& pe : parts_.hw_pes)
    pe.gemm().abandon();  // waits for numerics still on a worker thread
  parts_.sys.network().abandon_in_flight();
  parts_.sys.network().set_trace_flow(0);  // a load that stopped midway never ended its flow
}

RunResult KernelRunner::result(double wall_seconds, std::uint64_t events) const {
  const auto& cfg = parts_.spec.config();
  RunResult r;
  r.sim_time_ps = parts_.sched.now() - state_.start;
  r.accesses = access_log();
  r.programs = state_.coords;
  RunStats& s = r.stats;
  s.sips = cfg.sips;
  s.cubes_per_sip = cfg.cubes_per_sip;
  s.pes_per_cube = cfg.cube.pes;
  s.grid = {state_.grid[0], state_.grid[1], state_.grid[2]};
  s.dispatch = plan_.dispatched ? components::dispatch_policy_name(plan_.policy) : "hardware";
  s.programs = plan_.programs;
  s.waves = plan_.waves;
  s.timing_only = parts_.options.timing_only;
  s.network_model = parts_.options.network;
  s.backend = parts_.options.timing_only ? "none" : parts_.options.backend;
  s.sim_time_ps = r.sim_time_ps;
  s.events = events;
  s.wall_seconds = wall_seconds;
  for (const auto* pe : used_) s.add_pe(pe->name, pe->hw.statistics());
  s.network = parts_.sys.network().link_stats(r.sim_time_ps);
  if (cfg.energy.on) s.energy = components::energy_of(cfg.energy, activity(s));
  r.report = run_report(s);
  return r;
}

components::EnergyActivity KernelRunner::activity(const RunStats& s) const {
  components::EnergyActivity a;
  a.link_bytes = s.network.bytes_by_kind;
  if (s.network.cache)
    a.cache_fill_bytes = s.network.cache->read_misses * parts_.spec.config().cube.cache.line_bytes;
  for (const auto* pe : used_) {
    const components::PeStatistics p = pe->hw.statistics();
    a.sram_bytes += p.bytes_loaded + p.bytes_stored + p.bytes_sent + p.bytes_received;
    a.vector_elements += p.vector_elements;
    const auto& flops = pe->hw.gemm().flops_by_dtype();
    for (std::size_t t = 0; t < flops.size(); ++t) a.gemm_flops[t] += flops[t];
  }
  a.pes = parts_.spec.config().total_pes();
  a.elapsed = s.sim_time_ps;
  return a;
}

}  // namespace cubesim::detail
