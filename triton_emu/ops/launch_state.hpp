#pragma once
// Internal state of one launch, shared by Simulation, KernelRunner and the operations (ops/;
// not installed API).

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "components/pe/pe.hpp"
#include "components/system/system.hpp"
#include "emu/scheduler.hpp"
#include "emu/trace.hpp"
#include "emu/waitable.hpp"
#include "triton_emu/checks/access_log.hpp"
#include "triton_emu/gemm/gemm_worker_pool.hpp"
#include "triton_emu/gemm/held_gemms.hpp"
#include "triton_emu/gemm/operand_cache.hpp"
#include "triton_emu/memory/allocations.hpp"
#include "triton_emu/memory/functional_memory.hpp"
#include "triton_emu/memory/placement.hpp"
#include "triton_emu/tile/deferred_loads.hpp"

namespace cubesim::backends {
class GemmBackend;
}

namespace cubesim::detail {

class OperandCache;
class Messages;
class Atomics;
class SwitchReductions;

// The programming model's view of one PE (components::Pe: its SRAM, GEMM engine, vector unit
// and statistics): where it is, the program running on it, and its trace tracks.
struct PeState {
  PeState(const components::System& sys, components::Pe& pe)
      : hw(pe), coord(sys.pe_coord(pe.global_pe())), name(sys.pe_name(pe.global_pe())) {}

  components::Pe& hw;
  components::PeCoord coord;
  std::string name;            // "sip0.cube1.pe5"
  std::uint32_t program = 0;   // the program running (or last run) on the PE
  bool trace_selected = true;  // by SimOptions::trace_pes
  bool traced = false;         // its tracks exist
  emu::TraceWriter::Track track{}, gemm_track{};
  // Asynchronous copies' trace lanes: copies in flight at once each get a lane of their own.
  std::vector<emu::TraceWriter::Track> copy_tracks;
  std::vector<bool> copy_lane_busy;
};

// The numeric side of composite GEMMs, made on first use: runs without GEMMs never start the
// backend's or the pool's threads.
struct GemmResources {
  std::string backend_name;
  FunctionalMemory* memory = nullptr;
  std::unique_ptr<backends::GemmBackend> backend;
  std::unique_ptr<GemmWorkerPool> pool;
  std::unique_ptr<OperandCache> cache;
  std::unique_ptr<HeldGemms> held;  // last: it uses the others until it goes
  void ensure();
};

struct LaunchState {
  emu::Scheduler& sched;
  components::System& sys;
  FunctionalMemory* memory;  // nullptr in timing-only runs
  GemmResources* gemm;       // nullptr in timing-only runs
  emu::TraceWriter* trace;
  AccessLog* log;                     // nullptr when not recording
  DeferredLoads* deferred;            // nullptr in timing-only runs
  const Allocations& allocations;     // every access must lie inside one buffer
  HbmPlacement* placement = nullptr;  // places first-touch frames
  Messages* messages = nullptr;       // tl.send / tl.recv channels
  std::int64_t grid[3] = {1, 1, 1};   // programs per axis
  std::vector<ProgramCoord> coords{};
  // A logical grid's programs run in waves: those of later waves start only as earlier ones
  // end, so nothing may wait for a program of another wave (barriers and messages).
  std::uint64_t waves = 1;
  std::uint64_t pes_used = 0;
  emu::Tick dispatcher_free = 0;           // when the dispatcher can start the next program
  Atomics* atomics = nullptr;              // tl.atomic_*
  SwitchReductions* reductions = nullptr;  // tl.switch_reduce
  // Barriers by (scope, group, generation): the group is the cube (scope cube), the SIP (sip)
  // or 0 (all), the generation how many barriers of that scope its programs had passed.
  std::map<std::tuple<int, std::int64_t, std::uint32_t>, std::unique_ptr<emu::Completion>>
      barriers{};
  emu::Tick start = 0;
  bool trace_calls = false;  // log every TL call (--log-level trace), read once per launch

  // The group a program belongs to at a barrier of `scope` (0: its cube, 1: its SIP, 2: all,
  // as tl::Scope): the key ops::barrier meets its members under, and by which a deadlock's
  // report finds the members that never arrived.
  std::int64_t barrier_group(int scope, const ProgramCoord& program) const {
    return scope == 0 ? program.id[2] * grid[1] + program.id[1] : scope == 1 ? program.id[2] : 0;
  }
  // The programs that arrived at each barrier, for a deadlock's report of those that did not.
  struct BarrierArrivals {
    std::string name;
    std::size_t members = 0;
    std::vector<std::uint32_t> programs;
  };
  std::map<std::tuple<int, std::int64_t, std::uint32_t>, BarrierArrivals> barrier_arrivals{};
  // How long a barrier of a scope takes to release after its last arrival, by (scope, the
  // scope's first PE): computed once (ops/barrier.cpp).
  std::map<std::pair<int, std::uint32_t>, emu::Tick> barrier_release{};

  emu::Completion& barrier(int scope, std::int64_t group, std::uint32_t generation,
                           std::size_t members, const std::string& name, std::uint32_t program) {
    auto& c = barriers[{scope, group, generation}];
    if (!c) c = std::make_unique<emu::Completion>(sched, name, members);
    auto& a = barrier_arrivals[{scope, group, generation}];
    a.name = name;
    a.members = members;
    a.programs.push_back(program);
    return *c;
  }
  bool trace_flows = false;

  // Whether `pe`'s slices go to the trace: callers skip building their arguments otherwise.
  bool tracing(const PeState& pe) const { return trace && pe.trace_selected && !trace->full(); }
  // A slice on the PE's track or its GEMM engine's; `args_json` is a JSON object's text or
  // empty; a `flow` from begin_trace_flow starts at the slice.
  void trace_slice(PeState& pe, bool on_gemm_engine, const char* name, emu::Tick start_at,
                   emu::Tick end_at, std::string_view args_json = {}, std::uint64_t flow = 0);
  // Asynchronous copies on the PE's DMA lanes: a free lane (made when none is), a slice on it,
  // and the lane given back.
  int take_copy_lane(PeState& pe);
  void trace_copy(PeState& pe, int lane, const char* name, emu::Tick start_at, emu::Tick end_at,
                  std::string_view args_json, std::uint64_t flow);
  void release_copy_lane(PeState& pe, int lane) {
    pe.copy_lane_busy[static_cast<std::size_t>(lane)] = false;
  }
  // A new flow for the transfers `pe` issues until end_trace_flow(); 0 when flows are off.
  std::uint64_t begin_trace_flow(const PeState& pe);
  void end_trace_flow(std::uint64_t flow);
};

}  // namespace cubesim::detail
