#include "triton_emu/ops/launch_state.hpp"

#include <algorithm>

#include "triton_emu/backends/gemm_backend.hpp"

namespace cubesim::detail {

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

}  // namespace cubesim::detail
