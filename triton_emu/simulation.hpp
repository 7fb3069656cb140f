#pragma once
// The host side of cubesim (DESIGN.md "Library"): build a simulation from a spec, allocate
// and fill buffers, launch kernels on the hardware grid (or a sub-grid), read results and the
// report, and check sharding.
//
//   cubesim::Simulation sim(cubesim::Spec::load("tiny"));  // a shipped spec by name, or a path
//   cubesim::Ptr a = sim.alloc(bytes);                        // interleaved across cubes
//   sim.write<float>(a, host_values);
//   cubesim::RunResult r = sim.launch(kernel, a, n);          // runs to completion
//   auto c = sim.read<float>(a, n);
//
// A kernel is any callable void(cubesim::tl::Context&, Args...); the arguments are stored once
// and passed to every program as the kernel's parameters declare them: a by-value parameter is
// each program's own copy, a by-reference one is shared by all programs.
// launch_on(Grid::logical(cdiv(n, BLOCK)), kernel, ...) runs Triton's grid. A failing kernel makes
// launch() throw KernelError (exit 3) or DeadlockError (exit 4) naming the PE and the simulated
// time.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "components/spec/spec.hpp"
#include "components/system/system.hpp"
#include "emu/progress.hpp"
#include "emu/trace.hpp"
#include "triton_emu/access_log.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/message_hazards.hpp"
#include "triton_emu/ptr.hpp"
#include "triton_emu/run_stats.hpp"

namespace cubesim {

using Spec = components::Spec;
using SpecError = components::SpecError;

// The programs of a launch, per axis (program_id(0), (1), (2)); 0 in a dimension means the
// hardware's size (PEs per cube, cubes per SIP, SIPs). A grid that fits the hardware in every
// dimension runs one program per PE at its own coordinates, all at once (ADR-0022's launch; the
// default is the hardware grid). Any other grid, or one made by Grid::logical, is a logical
// grid: Triton's grid of any size in 1-3 dimensions, whose programs the dispatcher places on
// PEs (system.dispatch: policy and cost per program) and runs in waves, each program starting on
// its PE when the PE's previous one ends. tl.pe() says where a program runs.
struct Grid {
  std::int64_t pes = 0, cubes = 0, sips = 0;
  bool dispatched = false;  // placed by the dispatcher even when it fits the hardware

  // Triton's grid (x, y, z): `cdiv(n, BLOCK)` programs along axis 0 is
  // Grid::logical(cdiv(n, BLOCK)).
  static Grid logical(std::int64_t x, std::int64_t y = 1, std::int64_t z = 1) {
    return {x, y, z, true};
  }
  // "hardware", or "16384 x 1 x 1 (logical)".
  std::string str() const;
};

// The largest number of programs along one axis of a grid (Triton's limit on axis 0).
inline constexpr std::int64_t kMaxGridDim = (std::int64_t{1} << 31) - 1;

struct SimOptions {
  bool timing_only = false;            // no values stored or computed; timing is identical
  std::string backend = "cpu";         // GEMM numerics: cpu (always), cuda, metal when built
  std::uint64_t seed = 1;              // for harnesses that draw inputs
  std::size_t stack_size = 64 * 1024;  // bytes per program's fiber stack
  std::string trace_path{};            // Perfetto trace of every launch ("" = none)
  // What the trace holds (docs/cli.md "Output files and traces"): a window of simulated time
  // from the start of the simulation and a size cap (1 GiB unless set; 0 = none), the links
  // (under busy, idle gaps up to trace_link_gap_ps stay inside a busy period), the PEs (name
  // patterns as fnmatch(3) takes them, e.g. "sip0.cube1.*"; empty = all), and whether loads and
  // stores get flow arrows to the link slices they occupy.
  emu::TraceLimits trace_limits{.max_bytes = std::uint64_t{1} << 30};
  components::LinkTrace trace_links = components::LinkTrace::busy;
  std::uint64_t trace_link_gap_ps = 10'000'000;
  std::vector<std::string> trace_pes{};
  bool trace_flows = false;
  bool record_accesses = true;  // keep the access log for sharding checks
  // The most records the access log keeps (about 48 bytes each; 0: no limit). A launch that
  // would log more faults (exit code 3): a kernel that loads or stores without end would
  // otherwise fill the host's memory.
  std::uint64_t max_logged_accesses = 16'000'000;
  // packet (default): every packet and hop; flow: one reservation per transfer and link, far
  // fewer events for large what-if runs, approximate under contention
  // (components/network/network.hpp).
  components::NetworkModel network = components::NetworkModel::packet;
  // Host memory the simulation may take (bytes; 0 = what the host has available): a system
  // whose estimate exceeds it is refused with a UsageError before it is built (host_memory.hpp).
  std::uint64_t host_memory_limit = 0;
  // The grid launch() uses (launch_on names its own): the hardware grid unless set (the CLI's
  // --grid sets it for the kernels that take a logical grid).
  Grid grid{};
  // Called a few times a second while a launch runs long enough, and once when it ends
  // (emu/progress.hpp): simulated time, events, events/s, programs finished. The CLI draws it
  // on a terminal; empty: no reports.
  emu::ProgressFn progress{};
  std::chrono::milliseconds progress_interval{200};  // the least time between two reports
};

// Where alloc() puts a buffer.
struct Placement {
  bool interleaved = true;
  std::uint32_t sip = 0, cube = 0;
  static Placement interleaved_across_cubes() { return {}; }
  static Placement on_cube(std::uint32_t sip, std::uint32_t cube) { return {false, sip, cube}; }
};

struct RunResult {
  std::uint64_t sim_time_ps = 0;  // launch to the end of its last program and operation
  RunStats stats;                 // what it measured (run_stats.hpp)
  nlohmann::json report;          // run_report(stats): as `cubesim run --json` (simulation fields)
  std::shared_ptr<const AccessLog> accesses;
  std::vector<ProgramCoord> programs;

  // Sharding checks (need SimOptions::record_accesses).
  Coverage coverage(Ptr region, std::uint64_t bytes) const;
  std::vector<Race> races() const;
  MessageHazards message_hazards() const;
  std::string describe(const Coverage& c, Ptr region) const;
  std::string describe(const std::vector<Race>& r) const;
  std::string describe(const MessageHazards& h) const;
};

namespace detail {
struct SimulationImpl;
}

class Simulation {
 public:
  explicit Simulation(const Spec& spec, SimOptions options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const Spec& spec() const;
  const components::SystemConfig& config() const;
  const SimOptions& options() const;
  components::System& system();

  // Allocation: aligned to `align` bytes (a power of two); UsageError when HBM is full. Kernel
  // accesses and host reads/writes must each lie inside one allocated buffer. A buffer of 0
  // bytes has an address no other buffer shares.
  Ptr alloc(std::uint64_t bytes, Placement placement = {}, std::uint64_t align = 4096);

  void write_bytes(Ptr p, const void* src, std::uint64_t bytes);
  void read_bytes(Ptr p, void* dst, std::uint64_t bytes) const;
  template <typename T>
  void write(Ptr p, std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    write_bytes(p, values.data(), values.size_bytes());
  }
  template <typename T>
  void write(Ptr p, const std::vector<T>& values) {
    write<T>(p, std::span<const T>(values));
  }
  template <typename T>
  std::vector<T> read(Ptr p, std::size_t count) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> out(count);
    read_bytes(p, out.data(), count * sizeof(T));
    return out;
  }

  // On SimOptions::grid: the hardware grid unless set.
  template <typename Kernel, typename... Args>
  RunResult launch(Kernel&& kernel, Args&&... args) {
    return launch_on(options().grid, std::forward<Kernel>(kernel), std::forward<Args>(args)...);
  }
  template <typename Kernel, typename... Args>
  RunResult launch_on(Grid grid, Kernel&& kernel, Args&&... args) {
    return run(grid, [&kernel, &args...](tl::Context& tl) { kernel(tl, args...); });
  }

  // The message check of the last launch, also of one that threw (a deadlock, or messages
  // nobody received), where no RunResult holds it; needs SimOptions::record_accesses.
  MessageHazards message_hazards() const;
  std::string describe(const MessageHazards& h) const;

  // With message slots in HBM (system.messages.memory=hbm): the address of the slots of the
  // channel from global PE `from_pe` to `to_pe` (slot k at + k * slot_bytes), once a launch has
  // used that channel; nullopt otherwise.
  std::optional<std::uint64_t> message_slots(std::uint32_t from_pe, std::uint32_t to_pe) const;

  // A label for reports and traces (the CLI sets the kernel name).
  void set_kernel_name(std::string name);

  // The trace being written (nullptr without one): what it wrote and whether a cap stopped it.
  const emu::TraceWriter* trace() const;
  // Writes the link slices still open and renames the trace into place; std::runtime_error when
  // the file cannot be written. Otherwise the destructor does it, logging failures.
  void close_trace();

 private:
  RunResult run(Grid grid, const std::function<void(tl::Context&)>& body);
  Ptr place(std::uint64_t bytes, Placement placement, std::uint64_t align);
  void check_host_access(Ptr p, std::uint64_t bytes, const char* what) const;
  std::unique_ptr<detail::SimulationImpl> impl_;
};

}  // namespace cubesim
