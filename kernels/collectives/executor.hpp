#pragma once
// The executor: one program's part of a collective's schedule (components/collectives/
// schedule.hpp), run over tl.load / tl.send / tl.recv / tl.store, and the alpha-beta time
// the hardware model gives the same schedule (components/collectives/alpha_beta_model.hpp).

#include <cstdint>
#include <vector>

#include "components/collectives/pipeline.hpp"
#include "components/collectives/schedule.hpp"
#include "emu/time.hpp"
#include "kernels/harness/grid.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels::collectives {

// When each program began and ended the collective proper (its timed part).
struct Clock {
  std::vector<emu::Tick> begin, end;  // per global program id
  emu::Tick elapsed() const;          // max(end) - min(begin)
};

struct ScheduleArgs {
  const components::collectives::Schedule* schedule = nullptr;
  components::collectives::Buffer buffer = components::collectives::Buffer::sram;
  std::vector<Ptr> in, out;  // per global program id
  // Messages, rows, stagger, loads ahead and stores in flight (pipeline.hpp).
  components::collectives::Pipelining pipelining;
  // The slots per channel the launch limits its channels to (Simulation::limit_message_slots;
  // 0: their class's windows), which the model must know.
  std::uint32_t slot_limit = 0;
  Clock* clock = nullptr;
};

// One program's part, as a pipeline of rows (components/collectives/pipeline.hpp): with
// buffer=sram it loads its inputs, meets the others at a barrier, runs its (row, step) pairs
// between the clock's begin and end, meets them again and stores its outputs; with buffer=hbm
// it loads each row of a value ahead of the pair that first needs it and stores each row of a
// result once final, inside the clock, which ends once its stores have landed.
void run_schedule(tl::Context& tl, const ScheduleArgs& args);

// The alpha-beta model's time of `args` on the launch's `grid` of sim's system, from the spec.
emu::Tick model_time(Simulation& sim, GridShape grid, const ScheduleArgs& args);

}  // namespace cubesim::kernels::collectives
