#pragma once
// KernelRunner: one launch of a kernel over a grid (DESIGN.md). It plans where each program
// runs (launch_plan.hpp), spawns one fiber per PE that runs the PE's programs one after
// another (on a logical grid each waits for the dispatcher first), runs the scheduler to the
// end while reporting progress (SimOptions::progress), and gathers the launch's statistics.
// When something stops the launch early it makes the hardware idle again and throws the error
// a user reads (launch_errors.hpp), so the Simulation can launch again.

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "components/spec/spec.hpp"
#include "components/system/system.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/launch/grid.hpp"
#include "triton_emu/launch/launch_plan.hpp"
#include "triton_emu/launch/run_result.hpp"
#include "triton_emu/launch/sim_options.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::detail {

// What a launch runs on: the parts of a Simulation that outlive its launches.
struct LaunchResources {
  const components::Spec& spec;
  const SimOptions& options;
  emu::Scheduler& sched;
  components::System& sys;
  std::vector<components::Pe>& hw_pes;
  std::vector<PeState>& pes;  // each views the PE of hw_pes at its index
  FunctionalMemory* memory;   // nullptr when timing-only
  GemmResources& gemm;
  DeferredLoads* deferred;  // nullptr when timing-only
  emu::TraceWriter* trace;  // nullptr without a trace
  const Allocations& allocations;
  HbmPlacement& placement;
  Messages& messages;
  Atomics& atomics;
  SwitchReductions& reductions;
  std::string_view kernel_name;
};

class KernelRunner {
 public:
  using Body = std::function<void(tl::Context&)>;

  // Plans the launch numbered `launch_id`: UsageError for a grid this system cannot run, or
  // when an earlier launch abandoned a fiber.
  KernelRunner(const LaunchResources& parts, const Grid& grid, const Body& body,
               std::uint64_t launch_id);
  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;

  // The access log the launch keeps (nullptr when not recording), also when it fails.
  std::shared_ptr<const AccessLog> access_log() const;

  // Runs every program to its end: the launch's result, or KernelError / DeadlockError after
  // the hardware has been made idle.
  RunResult run();

 private:
  void begin();
  void end();
  void log_launch() const;
  void spawn();
  void run_program(PeState& pe, std::uint32_t program);
  void wait_for_dispatcher(PeState& pe);
  void wait_for_launch(PeState& pe);
  void run_to_end();
  void settle();
  void recover();
  RunResult result(double wall_seconds, std::uint64_t events) const;
  // What the launch did that costs energy (system.energy), for RunStats::energy.
  components::EnergyActivity activity(const RunStats& s) const;

  const LaunchResources& parts_;
  const Body& body_;
  const std::uint64_t launch_id_;
  LaunchPlan plan_;
  std::shared_ptr<AccessLog> log_;
  LaunchState state_;
  // The PEs that run programs, in the order of their first program; and each program's PE.
  std::vector<PeState*> used_, pe_of_program_;
  // A program's Context is made when it starts and kept until the launch ends: its tiles may
  // outlive it (they are refused once the launch ends, not before).
  std::vector<std::unique_ptr<tl::Context>> contexts_;
};

}  // namespace cubesim::detail
