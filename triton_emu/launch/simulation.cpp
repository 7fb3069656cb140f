#include "triton_emu/launch/simulation.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "emu/log.hpp"
#include "triton_emu/backends/gemm_backend.hpp"
#include "triton_emu/launch/kernel_runner.hpp"
#include "triton_emu/memory/host_memory.hpp"
#include "triton_emu/memory/placement.hpp"
#include "triton_emu/ops/atomic_unit.hpp"
#include "triton_emu/ops/channels.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/ops/switch_reduce.hpp"

namespace cubesim {

namespace detail {

// Placement::pe's slices: each PE's channels are those whose controller is on its router; a
// PE whose router has none (fewer channels than PEs, or controllers on a few nodes) takes
// channel pe % channels.
std::vector<std::vector<std::uint32_t>> pe_slices(const components::System& sys) {
  const components::Topology& t = sys.topology();
  const std::uint32_t pes = sys.config().cube.pes, channels = sys.config().cube.hbm.channels;
  std::vector<std::vector<std::uint32_t>> slices(pes);
  std::unordered_map<std::uint32_t, std::uint32_t> pe_at;  // node -> PE
  for (std::uint32_t p = 0; p < pes; ++p) pe_at[t.node_of_pe(p)] = p;
  for (std::uint32_t c = 0; c < channels; ++c)
    if (const auto it = pe_at.find(t.hbm_node(c)); it != pe_at.end())
      slices[it->second].push_back(c);
  for (std::uint32_t p = 0; p < pes; ++p)
    if (slices[p].empty()) slices[p].push_back(p % channels);
  return slices;
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
                          spec.config().pe.sram_bytes, i, spec.config().pe.issue);
      pes.emplace_back(sys, hw_pes.back());
    }
    if (!options.timing_only) {
      const std::string refusal = backends::gemm_backend_refusal(options.backend);
      if (!refusal.empty()) throw UsageError("--backend " + options.backend + ": " + refusal);
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
    const std::uint32_t cubes_per_sip = spec.config().cubes_per_sip;
    messages = std::make_unique<Messages>(
        sys, [this, cubes_per_sip](std::uint32_t cube, std::uint64_t bytes) {
          return placement
              .place(bytes, Placement::on_cube(cube / cubes_per_sip, cube % cubes_per_sip), 4096)
              .addr;
        });
    atomics = std::make_unique<Atomics>(sys);
    reductions = std::make_unique<SwitchReductions>(sys);
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
  HbmPlacement placement{sys.address_map(), sys.config().cube.pes, pe_slices(sys)};
  components::HostPath host_path{sys.topology(), sys.address_map()};
  std::vector<HostTransfer> host_transfers;  // the timed ones, in order
  std::unique_ptr<Messages> messages;        // tl.send / tl.recv channels, across launches
  std::unique_ptr<Atomics> atomics;
  std::unique_ptr<SwitchReductions> reductions;
  std::shared_ptr<const AccessLog> last_log;  // the last launch's, if it kept one
  std::string kernel_name = "kernel";
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
  // A 0-byte buffer still takes a byte: an address no other buffer shares.
  const Ptr p = impl_->placement.place(bytes == 0 ? 1 : bytes, placement, align);
  impl_->allocations.add(p.addr, bytes);
  return p;
}

void Simulation::write_bytes(Ptr p, const void* src, std::uint64_t bytes) {
  auto* mem = impl_->memory.get();
  check_host_access(p, bytes, "write");
  try {
    if (!mem) return impl_->sys.address_map().check_range(p.addr, bytes, "write");
    // A first-touch buffer's frames no program has touched hold what is written to them until
    // they are placed.
    const auto* in = static_cast<const std::byte*>(src);
    impl_->placement.host_runs(
        p.addr, bytes, true,
        [&](std::uint64_t at, std::uint64_t len, bool placed, std::byte* held) {
          if (placed)
            mem->write(at, in + (at - p.addr), len);
          else
            std::memcpy(held, in + (at - p.addr), len);
        });
  } catch (const components::AddressError& e) {
    throw UsageError(e.what());
  }
}

void Simulation::read_bytes(Ptr p, void* dst, std::uint64_t bytes) const {
  auto* mem = impl_->memory.get();
  if (!mem) throw UsageError("read: a timing-only simulation holds no data");
  check_host_access(p, bytes, "read");
  try {
    auto* out = static_cast<std::byte*>(dst);
    impl_->placement.host_runs(
        p.addr, bytes, false,
        [&](std::uint64_t at, std::uint64_t len, bool placed, std::byte* held) {
          if (placed)
            mem->read(at, out + (at - p.addr), len);
          else if (held != nullptr)
            std::memcpy(out + (at - p.addr), held, len);
          else
            std::memset(out + (at - p.addr), 0, len);
        });
  } catch (const components::AddressError& e) {
    throw UsageError(e.what());
  }
}

HostTransfer Simulation::write_bytes(Ptr p, const void* src, std::uint64_t bytes, Timed) {
  write_bytes(p, src, bytes);
  const HostBuffer whole{p, bytes};
  return impl_->host_transfers.emplace_back(host_time(HostDirection::to_device, {&whole, 1}));
}

HostTransfer Simulation::read_bytes(Ptr p, void* dst, std::uint64_t bytes, Timed) const {
  read_bytes(p, dst, bytes);
  const HostBuffer whole{p, bytes};
  return impl_->host_transfers.emplace_back(host_time(HostDirection::to_host, {&whole, 1}));
}

HostTransfer Simulation::host_time(HostDirection direction,
                                   std::span<const HostBuffer> buffers) const {
  std::vector<components::HostRange> ranges;
  for (const HostBuffer& b : buffers) {
    check_host_access(b.ptr, b.bytes, direction == HostDirection::to_device ? "write" : "read");
    // Only placed bytes are on the device.
    impl_->placement.host_runs(b.ptr.addr, b.bytes, false,
                               [&](std::uint64_t at, std::uint64_t len, bool placed, std::byte*) {
                                 if (placed) ranges.push_back({at, len});
                               });
  }
  try {
    return impl_->host_path.time(direction, ranges);
  } catch (const components::AddressError& e) {
    throw UsageError(e.what());
  }
}

const std::vector<HostTransfer>& Simulation::host_transfers() const {
  return impl_->host_transfers;
}

void Simulation::clear_host_transfers() {
  impl_->host_transfers.clear();
}

void Simulation::check_host_access(Ptr p, std::uint64_t bytes, const char* what) const {
  if (!impl_->allocations.contains(p.addr, bytes))
    throw UsageError(impl_->allocations.describe_miss(p.addr, bytes, what));
}

RunResult Simulation::run(Grid grid, const std::function<void(tl::Context&)>& body) {
  auto& I = *impl_;
  const detail::LaunchResources parts{
      .spec = I.spec,
      .options = I.options,
      .sched = I.sched,
      .sys = I.sys,
      .hw_pes = I.hw_pes,
      .pes = I.pes,
      .memory = I.memory.get(),
      .gemm = I.gemm,
      .deferred = I.deferred.get(),
      .trace = I.trace.get(),
      .allocations = I.allocations,
      .placement = I.placement,
      .messages = *I.messages,
      .atomics = *I.atomics,
      .reductions = *I.reductions,
      .kernel_name = I.kernel_name,
  };
  detail::KernelRunner runner(parts, grid, body, I.launch_ids + 1);
  ++I.launch_ids;  // tiles of a launch that fails are refused as well
  I.last_log = runner.access_log();
  return runner.run();
}

std::optional<std::uint64_t> Simulation::message_slots(std::uint32_t from_pe,
                                                       std::uint32_t to_pe) const {
  return impl_->messages->hbm_slots(from_pe, to_pe);
}

void Simulation::limit_message_slots(std::uint32_t most) {
  impl_->messages->limit_slots(most);
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
