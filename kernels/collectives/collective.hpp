#pragma once
// What the collective kernels share: the ring through the programs of a grid, the
// alpha-beta time of a ring collective computed from the spec, and the CLI kernels (allreduce,
// reduce_scatter, allgather) with their harnesses, verification and NCCL-style bandwidths.
//
// Bandwidths (NCCL's definitions, docs/performance.md of nccl-tests): for S bytes per program
// and a collective time t, algbw = S / t and busbw = algbw * 2(n-1)/n for all-reduce,
// algbw * (n-1)/n for all-gather and reduce-scatter (S: the all-gathered output, or the
// reduce-scatter input), which makes busbw comparable to a link's bandwidth whatever n.

#include <cstdint>
#include <vector>

#include "components/system_config.hpp"
#include "emu/time.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/harness.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels::collectives {

// The ring through every program of `grid` (ring position -> global program id): within each
// cube whose whole mesh runs programs, a cycle whose steps are single mesh hops when the mesh
// has an even number of rows or columns (else a snake, whose closing step is longer); the
// cubes one after another in global order (SIP by SIP).
std::vector<std::int64_t> ring_order(const components::SystemConfig& config, GridShape grid);

// The alpha-beta time of a ring collective on an idle system, step by step: a message of b
// bytes leaves its sender's injection port once the port is free (a sender's messages, and
// the credits it returns, go through it one after another), then takes its route's hop
// latencies + b / the slowest link of the route (alpha + b / beta), then the slot's write
// latency; the receiver reads it out (slot latency + b / slot bandwidth) once it is there and
// the recv is posted, sends the slot's credit, and adds its own input on the vector unit
// (reduce steps). Every program's steps are followed, so rings whose edges differ (a
// cube-to-cube step) are covered. Exact when each message is one packet, every piece of a step
// is sent before its receives (pieces <= window) and no two edges share a link beyond the
// sender's port; SRAM slots only (hbm slots and buffer=hbm add HBM traffic it leaves out).
emu::Tick ring_model_time(Simulation& sim, GridShape grid, const RingArgs& args);

KernelInfo allreduce_info();
KernelInfo reduce_scatter_info();
KernelInfo allgather_info();

}  // namespace cubesim::kernels::collectives
