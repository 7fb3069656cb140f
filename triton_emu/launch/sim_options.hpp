#pragma once
// How a Simulation runs (DESIGN.md "Library"): numerics or timing only, the GEMM backend,
// fiber stacks, the trace, the access log, the network model, host memory, the default grid
// and progress reports.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "components/network/link_trace.hpp"
#include "components/network/network.hpp"
#include "emu/progress.hpp"
#include "emu/trace.hpp"
#include "triton_emu/launch/grid.hpp"

namespace cubesim {

// A program's fiber stack unless the options say otherwise. An address-sanitizer build puts
// redzones around every stack object, so its frames are several times a release build's: its
// default is 4x, so that what runs in a release build's 64 KiB runs there too (a collective's
// executor, a callback run on a waiting program's stack below it).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kDefaultProgramStack = 256 * 1024;
#else
inline constexpr std::size_t kDefaultProgramStack = 64 * 1024;
#endif

struct SimOptions {
  bool timing_only = false;     // no values stored or computed; timing is identical
  std::string backend = "cpu";  // GEMM numerics: cpu (always), cuda, metal when built
  std::uint64_t seed = 1;       // for harnesses that draw inputs
  std::size_t stack_size = kDefaultProgramStack;  // bytes per program's fiber stack
  std::string trace_path{};                       // Perfetto trace of every launch ("" = none)
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

}  // namespace cubesim
