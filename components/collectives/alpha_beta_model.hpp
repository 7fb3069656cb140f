#pragma once
// The alpha-beta time of a collective's schedule (schedule.hpp) on an idle system, from the
// spec: a discrete-event model of its own, program by program in time order, over the routes,
// ports and links of the system's network, its HBM and the PEs' vector units. It lives beside
// the hardware it reads (not with the kernels that run schedules) so that a kernel's measured
// time can be set against what the hardware alone predicts.
//
// A message of b bytes leaves its sender once its credit is back and the sender's injection
// port is free (the port carries its messages and the credits it returns, one after another);
// its head crosses the route's hops (alpha: the hop latencies) and it queues for the
// receiver's ejection port behind what else arrives there; it takes b / the slowest link of
// its route (beta) and, behind the messages before it on the same route, arrives; then the
// slot's write latency. The receiver reads it out (slot latency + b / slot bandwidth) once it
// is there and the recv is posted, returns the slot's credit, and adds (recv_add) on the
// vector unit. Each program goes through its (row, step) pairs in the pipeline's order. With
// buffer=hbm it also loads and stores as the executor does (a row of a value `lookahead` pairs
// before it is first needed, waited for when it is; a row of a result once final, in flight
// up to the store budget, and waited for at the end): each packet of an access over its own path,
// the HBM channel's link serialising reads from it and writes to it. Exact when messages are single
// packets in SRAM slots, routes of different pairs share no link but their end ports, no PE
// has more packets in flight than its DMA window, and buffer=sram; with buffer=hbm the
// accesses' packets interleave with messages on the links they share, which the model serves
// whole (within 5 % on an idle cube for one-packet pieces; tests/kernels/test_collectives).
// With message slots in HBM (system.messages.memory=hbm) a message is a write of b bytes into
// its slot's HBM address and its read-out a read of them back to the receiver, each timed as
// the accesses above (the write's landing is the message's arrival).

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "components/collectives/pipeline.hpp"
#include "components/collectives/schedule.hpp"
#include "components/system/system.hpp"
#include "emu/time.hpp"

namespace cubesim::components::collectives {

struct ModelArgs {
  const Schedule* schedule = nullptr;
  Buffer buffer = Buffer::sram;
  std::vector<std::uint32_t> pe;       // per global program id: the global PE it runs on
  std::vector<std::uint64_t> in, out;  // per program: the HBM byte address of its input, output
  Pipelining pipelining;               // how the schedule runs as rows (pipeline.hpp)
  // With message slots in HBM: the address of the slots of the channel from one global PE to
  // another (none: the run made none for it).
  std::function<std::optional<std::uint64_t>(std::uint32_t, std::uint32_t)> hbm_slots;
  std::uint32_t slot_limit = 0;  // slots per channel at most (0: the class's window)
};

// When the last program finishes the schedule, every program starting at 0; std::logic_error
// when a program never finishes (the schedule deadlocks).
emu::Tick alpha_beta_time(const System& system, const ModelArgs& args);

}  // namespace cubesim::components::collectives
