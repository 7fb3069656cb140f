#include "triton_emu/simulation.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "emu/errors.hpp"
#include "emu/log.hpp"
#include "emu/progress.hpp"
#include "triton_emu/atomics.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/composite_gemm.hpp"
#include "triton_emu/host_memory.hpp"
#include "triton_emu/launch_plan.hpp"
#include "triton_emu/launch_state.hpp"
#include "triton_emu/messages.hpp"
#include "triton_emu/operand_cache.hpp"

namespace cubesim {

namespace detail {

void LaunchState::trace_slice(PeState& pe, bool on_gemm_engine, const char* name,
                              emu::Tick start_at, emu::Tick end_at, std::string_view args_json,
                              std::uint64_t flow) {
  if (!tracing(pe) || end_at <= start_at) return;
  if (!pe.traced) {
    pe.track = trace->track("PEs", pe.name);
    pe.gemm_track = trace->track("GEMM engines", pe.name + ".gemm");
    pe.traced = true;
  }
  const auto track = on_gemm_engine ? pe.gemm_track : pe.track;
  trace->complete_json_args(track, name, start_at, end_at - start_at, "sim", args_json);
  // After the slice, at its start: the viewer binds the flow to it, before the link steps; it
  // ends inside the slice's last picosecond, when the transfer is done.
  if (flow != 0) {
    trace->flow_start(track, flow, start_at);
    trace->flow_end(track, flow, end_at - 1);
  }
}

int LaunchState::take_copy_lane(PeState& pe) {
  auto& busy = pe.copy_lane_busy;
  auto free = std::find(busy.begin(), busy.end(), false);
  if (free == busy.end()) {
    pe.copy_tracks.push_back(
        trace->track("DMA (async copies)", pe.name + ".dma" + std::to_string(busy.size())));
    free = busy.insert(busy.end(), false);
  }
  *free = true;
  return static_cast<int>(free - busy.begin());
}

void LaunchState::trace_copy(PeState& pe, int lane, const char* name, emu::Tick start_at,
                             emu::Tick end_at, std::string_view args_json, std::uint64_t flow) {
  if (!tracing(pe) || end_at <= start_at) return;
  const auto track = pe.copy_tracks[static_cast<std::size_t>(lane)];
  trace->complete_json_args(track, name, start_at, end_at - start_at, "sim", args_json);
  if (flow != 0) {
    trace->flow_start(track, flow, start_at);
    trace->flow_end(track, flow, end_at - 1);
  }
}

std::uint64_t LaunchState::begin_trace_flow(const PeState& pe) {
  if (!trace_flows || !tracing(pe)) return 0;
  const std::uint64_t flow = trace->new_flow_id();
  sys.network().set_trace_flow(flow);
  return flow;
}

void LaunchState::end_trace_flow(std::uint64_t flow) {
  if (flow != 0) sys.network().set_trace_flow(0);
}

void GemmResources::ensure() {
  if (backend) return;
  backend = backends::make_gemm_backend(backend_name);
  pool = std::make_unique<GemmWorkerPool>(std::max(1, backend->preferred_concurrency()));
  cache = std::make_unique<OperandCache>(std::uint64_t{1} << 30);
  if (memory) held = std::make_unique<HeldGemms>(*memory, *backend, *pool);
}

struct SimulationImpl {
  SimulationImpl(const Spec& s, SimOptions o)
      : spec(s),
        options(std::move(o)),
        sched(emu::SchedulerOptions{options.stack_size}),
        sys(spec.config(), sched, components::SystemOptions{options.timing_only, options.network}) {
    hw_pes.reserve(sys.total_pes());
    pes.reserve(sys.total_pes());
    for (std::uint32_t i = 0; i < sys.total_pes(); ++i) {
      hw_pes.emplace_back(sched, sys.network(), sys.gemm_timing(), sys.vector_unit(),
                          spec.config().pe.sram_bytes, i);
      pes.emplace_back(sys, hw_pes.back());
    }
    direct_next.assign(sys.address_map().cubes(), 0);
    interleaved_low = sys.address_map().interleaved_size();
    if (!options.timing_only) {
      const auto names = backends::available_gemm_backends();
      if (std::find(names.begin(), names.end(), options.backend) == names.end()) {
        try {
          (void)backends::make_gemm_backend(options.backend);  // throws, saying why
        } catch (const std::invalid_argument& e) {
          throw UsageError(std::string("--backend ") + options.backend + ": " + e.what());
        }
      }
      gemm.backend_name = options.backend;
      memory = std::make_unique<FunctionalMemory>(*sys.memory());
      gemm.memory = memory.get();
      deferred = std::make_unique<DeferredLoads>(*memory);
    }
    if (!options.trace_path.empty()) {
      select_traced_pes();
      trace = std::make_unique<emu::TraceWriter>(options.trace_path, options.trace_limits);
      sys.network().set_trace(trace.get(), options.trace_links, options.trace_link_gap_ps);
    }
  }
  ~SimulationImpl() {
    try {
      close_trace();
    } catch (const std::exception& e) {
      emu::log().error("{}", e.what());
    }
  }

  void close_trace() {
    if (!trace) return;
    sys.network().flush_trace();
    trace->close();
  }

  // SimOptions::trace_pes: a pattern that matches no PE is a typo, not an empty selection.
  void select_traced_pes() {
    if (options.trace_pes.empty()) return;
    for (auto& p : pes) p.trace_selected = false;
    for (const auto& pattern : options.trace_pes) {
      bool matched = false;
      for (auto& p : pes)
        if (::fnmatch(pattern.c_str(), p.name.c_str(), 0) == 0) matched = p.trace_selected = true;
      if (!matched)
        throw UsageError("--trace-pes " + pattern + ": matches no PE of this system (" +
                         pes.front().name + " to " + pes.back().name +
                         "); * matches any text, ? one character, [0-3] one digit of a range, "
                         "e.g. sip0.cube1.* or sip0.cube0.pe[0-3]");
    }
  }

  Spec spec;
  SimOptions options;
  emu::Scheduler sched;
  components::System sys;
  std::vector<components::Pe> hw_pes;
  std::vector<PeState> pes;                  // each views the PE of hw_pes at its index
  std::unique_ptr<FunctionalMemory> memory;  // before its holders; nullptr when timing-only
  GemmResources gemm;
  std::unique_ptr<DeferredLoads> deferred;  // after gemm: copying may settle held GEMMs
  std::unique_ptr<emu::TraceWriter> trace;
  detail::Allocations allocations;
  std::vector<std::uint64_t> direct_next;     // per cube: next free offset from the bottom
  std::uint64_t interleaved_low;              // window offset: interleaved buffers grow down
  std::unique_ptr<Messages> messages;         // made on the first launch
  std::unique_ptr<Atomics> atomics;           // made on the first launch
  std::shared_ptr<const AccessLog> last_log;  // the last launch's, if it kept one
  std::string kernel_name = "kernel";
  std::uint64_t launches = 0;
  std::uint64_t launch_ids = 0;  // stamps tiles (components::Sram::tenant), failed launches too
};

}  // namespace detail

namespace {
std::unique_ptr<detail::SimulationImpl> make_impl(const Spec& spec, SimOptions options) {
  check_host_memory(spec.config(), options.stack_size, options.host_memory_limit);
  return std::make_unique<detail::SimulationImpl>(spec, std::move(options));
}
}  // namespace

Simulation::Simulation(const Spec& spec, SimOptions options)
    : impl_(make_impl(spec, std::move(options))) {}
Simulation::~Simulation() = default;

const Spec& Simulation::spec() const {
  return impl_->spec;
}
const components::SystemConfig& Simulation::config() const {
  return impl_->spec.config();
}
const SimOptions& Simulation::options() const {
  return impl_->options;
}
components::System& Simulation::system() {
  return impl_->sys;
}
void Simulation::set_kernel_name(std::string name) {
  impl_->kernel_name = std::move(name);
}
const emu::TraceWriter* Simulation::trace() const {
  return impl_->trace.get();
}
void Simulation::close_trace() {
  impl_->close_trace();
}

Ptr Simulation::alloc(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  const Ptr p = place(bytes == 0 ? 1 : bytes, placement, align);  // a 0-byte buffer: own address
  impl_->allocations.add(p.addr, bytes);
  return p;
}

Ptr Simulation::place(std::uint64_t bytes, Placement placement, std::uint64_t align) {
  auto& I = *impl_;
  const auto& map = I.sys.address_map();
  if (align == 0 || (align & (align - 1)) != 0)
    throw UsageError("alloc: alignment " + std::to_string(align) + " is not a power of two");
  const std::uint64_t cap = map.capacity_per_cube();
  const std::uint64_t g = map.interleave_bytes(), n = map.cubes();
  // Interleaved buffers take whole rows of granules from the top of every cube; direct
  // buffers grow from the bottom of their cube. The two must not meet.
  auto interleaved_floor = [&](std::uint64_t low) { return (low / (g * n)) * g; };
  if (placement.interleaved) {
    const std::uint64_t a = std::max(align, g);
    if (bytes > I.interleaved_low)
      throw UsageError("alloc: " + std::to_string(bytes) + " bytes do not fit in HBM");
    const std::uint64_t low = (I.interleaved_low - bytes) / a * a;
    const std::uint64_t floor = interleaved_floor(low);
    for (std::uint64_t c = 0; c < n; ++c)
      if (I.direct_next[c] > floor)
        throw UsageError("alloc: " + std::to_string(bytes) +
                         " bytes interleaved do not fit: HBM is full (cube " + std::to_string(c) +
                         " has " + std::to_string(I.direct_next[c]) + " bytes of direct buffers)");
    I.interleaved_low = low;
    return Ptr{components::AddressMap::kInterleavedBase + low};
  }
  if (placement.sip >= I.spec.config().sips || placement.cube >= I.spec.config().cubes_per_sip)
    throw UsageError("alloc: no cube (sip " + std::to_string(placement.sip) + ", cube " +
                     std::to_string(placement.cube) + ") in this system of " +
                     std::to_string(I.spec.config().sips) + " SIP(s) x " +
                     std::to_string(I.spec.config().cubes_per_sip) + " cubes");
  const std::uint32_t cube = map.global_cube({placement.sip, placement.cube});
  const std::uint64_t start = (I.direct_next[cube] + align - 1) / align * align;
  if (start + bytes > std::min(cap, interleaved_floor(I.interleaved_low)))
    throw UsageError("alloc: " + std::to_string(bytes) + " bytes do not fit on cube (sip " +
                     std::to_string(placement.sip) + ", cube " + std::to_string(placement.cube) +
                     ")");
  I.direct_next[cube] = start + bytes;
  return Ptr{map.direct_address({cube, start})};
}

void Simulation::write_bytes(Ptr p, const void* src, std::uint64_t bytes) {
  auto* mem = impl_->memory.get();
  check_host_access(p, bytes, "write");
  try {
    if (mem)
      mem->write(p.addr, src, bytes);
    else
      impl_->sys.address_map().check_range(p.addr, bytes, "write");
  } catch (const components::AddressError& e) {
    throw UsageError(e.what());
  }
}

void Simulation::read_bytes(Ptr p, void* dst, std::uint64_t bytes) const {
  auto* mem = impl_->memory.get();
  if (!mem) throw UsageError("read: a timing-only simulation holds no data");
  check_host_access(p, bytes, "read");
  try {
    mem->read(p.addr, dst, bytes);
  } catch (const components::AddressError& e) {
    throw UsageError(e.what());
  }
}

void Simulation::check_host_access(Ptr p, std::uint64_t bytes, const char* what) const {
  if (!impl_->allocations.contains(p.addr, bytes))
    throw UsageError(impl_->allocations.describe_miss(p.addr, bytes, what));
}

namespace {

KernelError composite_failure(emu::Tick when, const std::string& cause) {
  return KernelError("a composite operation failed at " + emu::format_time(when) + ": " + cause, "",
                     when);
}

// After a run stopped early (a fault, a deadlock, a failed callback), memory shows the GEMMs
// whose engine finished, as it would have had they been computed at once; the others never
// finish. Then the hardware is made idle, as in a new Simulation: the scheduler has dropped
// every event, so queued GEMMs and transfers in flight would wait forever (their callbacks point
// into the stopped programs' stacks). A failure here is not reported: the error that stopped
// the run is the one to see.
// For a deadlock: each barrier that some of its members never reached, and those members (the
// program, its PE, and whether it finished or waits elsewhere).
std::string barriers_not_reached(const detail::LaunchState& L,
                                 const std::vector<detail::PeState*>& pe_of_program,
                                 const std::vector<std::string>& blocked) {
  std::string out;
  for (const auto& [key, a] : L.barrier_arrivals) {
    if (a.programs.size() >= a.members) continue;
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
    out += fmt::format("\n  {}: {} of {} members arrived; not arrived:", a.name, a.programs.size(),
                       a.members);
    for (std::size_t k = 0; k < missing.size() && k < 16; ++k) out += "\n    " + missing[k];
    if (missing.size() > 16) out += fmt::format("\n    ... and {} more", missing.size() - 16);
  }
  return out;
}

void recover_after_abort(detail::SimulationImpl& I) {
  if (I.gemm.held) {
    I.gemm.held->drop_incomplete();
    try {
      I.gemm.held->settle();
    } catch (const std::exception&) {
      I.gemm.held->drop_incomplete();
    }
  }
  // Programs that stopped keep their tiles until their fibers go, perhaps after this launch.
  if (I.deferred) I.deferred->settle();
  for (auto& pe : I.hw_pes) pe.gemm().abandon();  // waits for numerics still on a worker thread
  I.sys.network().abandon_in_flight();
  I.sys.network().set_trace_flow(0);  // a load that stopped midway never ended its flow
}

}  // namespace

std::string Grid::str() const {
  if (!dispatched && pes == 0 && cubes == 0 && sips == 0) return "hardware";
  const auto dim = [](std::int64_t d) { return d == 0 ? std::string("all") : std::to_string(d); };
  return dim(pes) + " x " + dim(cubes) + " x " + dim(sips) + (dispatched ? " (logical)" : "");
}

RunResult Simulation::run(Grid grid, const std::function<void(tl::Context&)>& body) {
  auto& I = *impl_;
  if (I.sched.abandoned_processes() > 0)
    throw UsageError(
        "this Simulation cannot launch again: a program's stack overflowed in an earlier launch, "
        "and its fiber was abandoned with what it held (tiles and their SRAM); make a new "
        "Simulation, with a larger SimOptions::stack_size (--stack-size)");
  const auto& cfg = I.spec.config();
  const HostMemoryLimit memory_limit = host_memory_limit(I.options.host_memory_limit);
  detail::LaunchPlan plan = detail::plan_launch(cfg, grid, memory_limit.bytes, memory_limit.source);
  const std::int64_t* g = plan.grid;

  auto log = std::make_shared<AccessLog>();
  log->set_limit(I.options.max_logged_accesses);
  detail::LaunchState L{I.sched,          I.sys,
                        I.memory.get(),   I.options.timing_only ? nullptr : &I.gemm,
                        I.trace.get(),    I.options.record_accesses ? log.get() : nullptr,
                        I.deferred.get(), I.allocations};
  for (int i = 0; i < 3; ++i) L.grid[i] = g[i];
  L.coords = std::move(plan.coords);
  L.waves = plan.waves;
  L.pes_used = plan.queues.size();
  L.trace_flows = I.options.trace_flows;
  L.start = I.sched.now();
  L.dispatcher_free = L.start;
  L.trace_calls = emu::log().should_log(spdlog::level::trace);
  I.sys.network().reset_stats();
  for (auto& p : I.hw_pes) p.reset_statistics();

  // The PEs that run programs, in the order of their first program; and each program's PE.
  std::vector<detail::PeState*> used, pe_of_program(plan.programs);
  used.reserve(plan.queues.size());
  for (const auto& q : plan.queues) {
    used.push_back(&I.pes[q.pe]);
    for (std::uint32_t p : q.programs) pe_of_program[p] = used.back();
  }
  // A program's Context is made when it starts and kept until the launch ends: its tiles may
  // outlive it (they are refused once the launch ends, not before).
  std::vector<std::unique_ptr<tl::Context>> contexts(plan.programs);
  if (!I.messages) {
    const std::uint32_t cubes_per_sip = cfg.cubes_per_sip;
    I.messages = std::make_unique<detail::Messages>(
        I.sys, [this, cubes_per_sip](std::uint32_t cube, std::uint64_t bytes) {
          return place(bytes, Placement::on_cube(cube / cubes_per_sip, cube % cubes_per_sip), 4096)
              .addr;
        });
  }
  I.messages->begin(g, pe_of_program);
  L.messages = I.messages.get();
  if (!I.atomics) I.atomics = std::make_unique<detail::Atomics>(I.sys);
  I.atomics->begin_launch();
  L.atomics = I.atomics.get();
  if (L.log) L.log->set_programs(L.coords, cfg.messages.slots);
  I.last_log = L.log ? log : nullptr;
  struct EndMessages {
    detail::Messages& m;
    ~EndMessages() { m.end(); }
  } end_messages{*I.messages};
  // Tiles are stamped with the launch; once it ends they are refused (Tile::context()).
  const std::uint64_t launch_id = ++I.launch_ids;
  for (auto* pe : used) pe->hw.sram().tenant = launch_id;
  struct EndLaunch {
    const std::vector<detail::PeState*>& used;
    ~EndLaunch() {
      for (auto* pe : used) pe->hw.sram().tenant = 0;
    }
  } end_launch{used};
  auto& logger = emu::log();
  if (plan.dispatched)
    logger.info(
        "launch {} of '{}': logical grid [{}, {}, {}], {} program(s) in {} wave(s) on {} of {} "
        "PE(s) of '{}' ({} dispatch)",
        launch_id, I.kernel_name, g[0], g[1], g[2], plan.programs, plan.waves, used.size(),
        I.pes.size(), I.spec.origin(), components::dispatch_policy_name(plan.policy));
  else
    logger.info("launch {} of '{}': grid [{}, {}, {}], {} program(s) on {} PE(s) of '{}'",
                launch_id, I.kernel_name, g[0], g[1], g[2], used.size(), I.pes.size(),
                I.spec.origin());
  const bool dispatched = plan.dispatched;
  const emu::Tick dispatch_cost = cfg.dispatch.cost;
  for (std::size_t q = 0; q < plan.queues.size(); ++q) {
    detail::PeState* pe = used[q];
    I.sched.spawn(pe->name, [pe, programs = std::move(plan.queues[q].programs), dispatched,
                             dispatch_cost, &contexts, &L, &body, &I, &logger] {
      for (const std::uint32_t program : programs) {
        pe->program = program;
        const ProgramCoord& coord = L.coords[program];
        if (dispatched) {
          // The dispatcher starts one program at a time.
          const emu::Tick now = I.sched.now();
          const emu::Tick start = std::max(now, L.dispatcher_free) + dispatch_cost;
          L.dispatcher_free = start;
          if (start > now) {
            I.sched.wait_for(start - now);
            pe->hw.counters().dispatch_wait_ps += start - now;
            L.trace_slice(*pe, false, "dispatch", now, start);
          }
        }
        contexts[program].reset(new tl::Context(L, *pe, program));
        tl::Context& ctx = *contexts[program];
        const emu::Tick begin = I.sched.now();
        const bool debug = logger.should_log(spdlog::level::debug);
        if (debug) logger.debug("{} starts on {}", coord.str(), pe->name);
        std::exception_ptr error;
        try {
          body(ctx);
        } catch (...) {
          error = std::current_exception();
        }
        // Pay the vector time not yet paid, so a fault is reported at the time it happened.
        // (Outside the handler: switching fibers with an exception being handled is unsafe.)
        ctx.sync();
        if (error) {
          if (logger.should_log(spdlog::level::debug))
            logger.debug("{} on {} stops: {}", coord.str(), pe->name,
                         emu::describe_exception(error));
          std::rethrow_exception(error);
        }
        ctx.finish_copies();  // a program ends when its copies have landed
        ++pe->hw.counters().programs;
        if (dispatched && L.tracing(*pe))
          L.trace_slice(*pe, false, coord.str().c_str(), begin, I.sched.now());
        if (debug)
          logger.debug(
              "{} ends on {} (the PE so far: vector {}, memory wait {}, GEMM wait {}, send wait "
              "{}, recv wait {}, dispatch wait {})",
              coord.str(), pe->name, emu::format_time(pe->hw.counters().vector_busy_ps),
              emu::format_time(pe->hw.counters().memory_wait_ps),
              emu::format_time(pe->hw.counters().gemm_wait_ps),
              emu::format_time(pe->hw.counters().send_wait_ps),
              emu::format_time(pe->hw.counters().recv_wait_ps),
              emu::format_time(pe->hw.counters().dispatch_wait_ps));
      }
      pe->hw.counters().finish_ps = I.sched.now() - L.start;
    });
  }

  const auto wall0 = std::chrono::steady_clock::now();
  const std::uint64_t events0 = I.sched.events_executed();
  try {
    emu::run_reporting(I.sched, {.report = &I.options.progress,
                                 .what = I.kernel_name,
                                 .unit = "programs",
                                 .total = plan.programs,
                                 .done =
                                     [&used] {
                                       std::uint64_t done = 0;
                                       for (const auto* pe : used)
                                         done += pe->hw.counters().programs;
                                       return done;
                                     },
                                 .interval = I.options.progress_interval});
    // The products still held: memory shows every result once the launch returns.
    if (I.gemm.held) {
      try {
        I.gemm.held->settle();
      } catch (const std::exception& e) {
        throw composite_failure(I.sched.now(), e.what());
      }
    }
    if (I.deferred) I.deferred->settle();  // tiles kept past the launch keep their values
    if (L.log) L.log->finished();
  } catch (const emu::ProcessError& e) {
    recover_after_abort(I);
    std::string cause = emu::describe_exception(e.cause());
    std::string where = e.process();
    std::string program;
    for (const auto* pe : used)
      if (pe->name == where) {
        const auto& pc = L.coords[pe->program];
        program = " (program_id " + std::to_string(pc.id[0]) + ", " + std::to_string(pc.id[1]) +
                  ", " + std::to_string(pc.id[2]) + ")";
      }
    throw KernelError(
        "kernel fault on " + where + program + " at " + emu::format_time(e.time()) + ": " + cause,
        where, e.time());
  } catch (const emu::DeadlockError& e) {
    recover_after_abort(I);
    std::vector<std::string> blocked;
    const auto on_channels = I.messages->blocked_by_pe();
    std::string msg = "deadlock at " + emu::format_time(e.time()) + ": " +
                      std::to_string(e.blocked().size()) +
                      " program(s) wait on something that can never happen:";
    // Each blocked program once, with the most precise account of its wait there is.
    constexpr std::size_t kListed = 64;
    for (const auto& b : e.blocked()) {
      if (blocked.size() < kListed) {
        const auto it = on_channels.find(b.process);
        msg += "\n  " + b.process + " " +
               (it != on_channels.end() ? it->second : "waits on " + b.waits_on);
      }
      blocked.push_back(b.process);
    }
    if (blocked.size() > kListed)
      msg += "\n  ... and " + std::to_string(blocked.size() - kListed) + " more";
    const auto cycles = I.messages->blocked_cycles();
    for (std::size_t k = 0; k < cycles.size() && k < 8; ++k)
      msg += "\n  a cycle, each waiting on the next: " + cycles[k];
    if (cycles.size() > 8)
      msg += "\n  ... and " + std::to_string(cycles.size() - 8) + " more cycles";
    msg += barriers_not_reached(L, pe_of_program, blocked);
    msg +=
        "\nEvery program must reach every barrier(), wait() only on handles its own "
        "composite() returned, and recv only what its peer sends (a send blocks while the "
        "channel's slots are full).";
    throw DeadlockError(msg, std::move(blocked), e.time());
  } catch (const emu::CallbackError& e) {
    recover_after_abort(I);
    try {
      std::rethrow_exception(e.cause());
    } catch (const emu::TimeOverflow& overflow) {
      // A transfer's or GEMM's end would lie past the end of simulated time: not the
      // composite's doing, whatever event found it.
      throw KernelError("the run reached the end of simulated time at " +
                            emu::format_time(e.time()) + " (in '" + e.label() +
                            "'): " + overflow.what(),
                        "", e.time());
    } catch (...) {
    }
    throw composite_failure(e.time(), emu::describe_exception(e.cause()));
  }
  if (std::string left = I.messages->leftovers(); !left.empty()) {
    recover_after_abort(I);
    throw KernelError("kernel fault at " + emu::format_time(I.sched.now()) + ": " + left, "",
                      I.sched.now());
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const std::uint64_t events = I.sched.events_executed() - events0;
  ++I.launches;
  logger.info("launch {} done: {} simulated, {} events, {:.3f} s", launch_id,
              emu::format_time(I.sched.now() - L.start), events, wall);

  RunResult r;
  r.sim_time_ps = I.sched.now() - L.start;
  r.accesses = I.last_log;
  r.programs = L.coords;
  RunStats& s = r.stats;
  s.sips = cfg.sips;
  s.cubes_per_sip = cfg.cubes_per_sip;
  s.pes_per_cube = cfg.cube.pes;
  s.grid = {g[0], g[1], g[2]};
  s.dispatch = plan.dispatched ? components::dispatch_policy_name(plan.policy) : "hardware";
  s.programs = plan.programs;
  s.waves = plan.waves;
  s.timing_only = I.options.timing_only;
  s.network_model = I.options.network;
  s.backend = I.options.timing_only ? "none" : I.options.backend;
  s.sim_time_ps = r.sim_time_ps;
  s.events = events;
  s.wall_seconds = wall;
  for (auto* pe : used) s.add_pe(pe->name, pe->hw.statistics());
  s.network = I.sys.network().link_stats(r.sim_time_ps);
  r.report = run_report(s);
  return r;
}

Coverage RunResult::coverage(Ptr region, std::uint64_t bytes) const {
  if (!accesses) throw UsageError("coverage: no access log (SimOptions::record_accesses is off)");
  return cubesim::coverage(*accesses, region, bytes);
}
std::vector<Race> RunResult::races() const {
  if (!accesses) throw UsageError("races: no access log (SimOptions::record_accesses is off)");
  return cubesim::races(*accesses);
}
std::optional<std::uint64_t> Simulation::message_slots(std::uint32_t from_pe,
                                                       std::uint32_t to_pe) const {
  if (!impl_->messages) return std::nullopt;
  return impl_->messages->hbm_slots(from_pe, to_pe);
}

MessageHazards RunResult::message_hazards() const {
  if (!accesses)
    throw UsageError("message_hazards: no access log (SimOptions::record_accesses is off)");
  return cubesim::message_hazards(accesses->sync(), programs);
}
std::string RunResult::describe(const Coverage& c, Ptr region) const {
  return cubesim::describe(c, region, programs);
}
std::string RunResult::describe(const std::vector<Race>& r) const {
  return cubesim::describe(r, programs);
}
std::string RunResult::describe(const MessageHazards& h) const {
  return cubesim::describe(h, programs);
}

MessageHazards Simulation::message_hazards() const {
  if (!impl_->last_log)
    throw UsageError(
        "message_hazards: no launch has recorded its messages (none ran yet, or "
        "SimOptions::record_accesses is off)");
  return cubesim::message_hazards(impl_->last_log->sync(), impl_->last_log->programs());
}
std::string Simulation::describe(const MessageHazards& h) const {
  return cubesim::describe(
      h, impl_->last_log ? impl_->last_log->programs() : std::vector<ProgramCoord>{});
}

}  // namespace cubesim
