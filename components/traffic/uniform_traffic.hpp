#pragma once
// A synthetic-traffic generator for the NOC of one cube: every PE sends single-packet
// messages to destinations drawn uniformly from the other PEs of the cube.
//
//  - open loop: each PE generates messages as a Poisson process at `offered_load` x the link
//    bandwidth (messages queue at the PE's injection port; latency counts that wait);
//  - closed loop (offered_load == 0): each PE keeps `window` messages outstanding, which drives
//    the network to saturation; accepted throughput is then the network's capacity.
//
// Throughput and latency are measured over messages generated in [warmup, warmup + measure).
// Deterministic: a 64-bit LCG seeded from `seed` draws destinations and gaps.

#include <cstdint>

#include "components/network/fabric.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components {

struct UniformTrafficOptions {
  std::uint32_t cube = 0;     // global cube index
  double offered_load = 0.0;  // fraction of link bandwidth per PE; 0 = closed loop
  std::uint32_t window = 16;  // closed loop: messages outstanding per PE
  Tick warmup = 0;
  Tick measure = 0;
  std::uint64_t seed = 1;
};

struct UniformTrafficResult {
  double accepted_fraction = 0;  // delivered bytes per PE per second / link bandwidth
  double mean_latency_ps = 0;    // generation to delivery, messages generated in the window
  std::uint64_t messages = 0;    // messages measured
};

UniformTrafficResult run_uniform_traffic(emu::Scheduler& scheduler, Fabric& fabric,
                                         const UniformTrafficOptions& options);

}  // namespace cubesim::components
