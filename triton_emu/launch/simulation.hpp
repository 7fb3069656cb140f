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

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "components/host/host_path.hpp"
#include "components/spec/spec.hpp"
#include "emu/trace.hpp"
#include "triton_emu/checks/message_hazards.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/launch/grid.hpp"
#include "triton_emu/launch/run_result.hpp"
#include "triton_emu/launch/sim_options.hpp"
#include "triton_emu/memory/placement.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim {

using Spec = components::Spec;
using SpecError = components::SpecError;
using HostDirection = components::HostDirection;
// What a timed host transfer took (components/host/host_path.hpp): its bytes, its simulated
// time and the resource that bounded it.
using HostTransfer = components::HostTransferTime;

// Asks a host write or read to take simulated time over the host link (system.host):
// sim.write<float>(a, values, cubesim::timed).
struct Timed {};
inline constexpr Timed timed{};

// A buffer (or part of one) the host moves: what a harness declares as a kernel's inputs and
// outputs, and what Simulation::host_time takes.
struct HostBuffer {
  Ptr ptr;
  std::uint64_t bytes = 0;
};

namespace components {
class System;
}
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

  // Timed: the same, and the transfer takes simulated time on the host's way to HBM
  // (system.host; docs/hardware-model.md, "Host transfers"): it is returned and added to
  // host_transfers(). Transfers run between launches, one after another, with the links to
  // themselves. Bytes of a first-touch buffer that no program has touched yet stay with the
  // host (they have no home): they take no time.
  HostTransfer write_bytes(Ptr p, const void* src, std::uint64_t bytes, Timed);
  HostTransfer read_bytes(Ptr p, void* dst, std::uint64_t bytes, Timed) const;
  template <typename T>
  HostTransfer write(Ptr p, std::span<const T> values, Timed) {
    static_assert(std::is_trivially_copyable_v<T>);
    return write_bytes(p, values.data(), values.size_bytes(), timed);
  }
  template <typename T>
  HostTransfer write(Ptr p, const std::vector<T>& values, Timed) {
    return write<T>(p, std::span<const T>(values), timed);
  }
  template <typename T>
  std::vector<T> read(Ptr p, std::size_t count, Timed) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> out(count);
    read_bytes(p, out.data(), count * sizeof(T), timed);
    return out;
  }
  // The time moving `buffers` all at once would take, without moving data (a timing-only
  // simulation too); not added to host_transfers().
  HostTransfer host_time(HostDirection direction, std::span<const HostBuffer> buffers) const;
  // The timed transfers so far, in order; clear_host_transfers() forgets them.
  const std::vector<HostTransfer>& host_transfers() const;
  void clear_host_transfers();

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

  // Channels made by later launches take at most `most` slots each (0, the start: their
  // class's window, system.messages). A kernel whose programs receive from many peers sizes
  // each peer's slots down this way, as a collective library sizes its per-peer buffers by how
  // many peers it connects (an all-to-all's, in the collectives harness).
  void limit_message_slots(std::uint32_t most);

  // A label for reports and traces (the CLI sets the kernel name).
  void set_kernel_name(std::string name);

  // The trace being written (nullptr without one): what it wrote and whether a cap stopped it.
  const emu::TraceWriter* trace() const;
  // Writes the link slices still open and renames the trace into place; std::runtime_error when
  // the file cannot be written. Otherwise the destructor does it, logging failures.
  void close_trace();

 private:
  RunResult run(Grid grid, const std::function<void(tl::Context&)>& body);
  void check_host_access(Ptr p, std::uint64_t bytes, const char* what) const;
  std::unique_ptr<detail::SimulationImpl> impl_;
};

}  // namespace cubesim
