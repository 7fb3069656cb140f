#include "kernels/collectives/plan.hpp"

#include <algorithm>

#include "kernels/collectives/ring_order.hpp"

namespace cubesim::kernels::collectives {

using components::collectives::Buffer;
using components::collectives::Op;
using components::collectives::OpKind;
using components::collectives::Schedule;
using components::collectives::Step;

Plan make_plan(const components::SystemConfig& cfg, GridShape grid, Collective collective,
               const std::string& algorithm, std::int64_t bytes) {
  const Algorithm& a = find_algorithm(algorithm, collective);
  Plan p = a.schedule(PlanInput{.config = cfg,
                                .grid = grid,
                                .collective = collective,
                                .elems = bytes / 4,
                                .order = ring_order(cfg, grid)});
  p.directions = a.channels;
  p.piece =
      std::min<std::int64_t>(static_cast<std::int64_t>(cfg.messages.slot_bytes / 4), p.segment);
  return p;
}

std::int64_t element_multiple(Collective collective, const std::string& algorithm, GridShape grid) {
  return find_algorithm(algorithm, collective).element_multiple(collective, grid);
}

Plan ring_plan(const PlanInput& in, std::vector<Groups> candidates, int channels) {
  std::vector<Groups> levels;
  for (Groups& l : candidates)
    if (l.front().size() > 1) levels.push_back(std::move(l));
  if (levels.empty()) levels.push_back({in.order});  // one program
  Plan p;
  for (const Groups& l : levels) {
    const auto m = static_cast<std::int64_t>(l.front().size());
    p.levels.push_back(m);
    p.channels_in += m > 2 ? channels : 1;  // from the one or two ring neighbours
  }
  p.block = in.elems / in.grid.total();
  p.segment = p.block / channels;
  p.step_bytes = in.elems * 4 / p.levels.front();
  p.schedule = rings(in.collective, std::move(levels), p.block, channels);
  return p;
}

Plan tree_plan(const PlanInput& in, std::vector<std::int64_t> parent, std::int64_t channels_in) {
  Plan p;
  p.block = in.elems;
  p.segment = in.elems;
  p.step_bytes = in.elems * 4;
  p.schedule = tree(in.collective, std::move(parent), in.elems);
  p.channels_in = channels_in;
  return p;
}

Plan all_to_all_plan(const PlanInput& in, bool direct) {
  Plan p;
  p.block = in.elems / in.grid.total();
  p.segment = p.block;
  p.step_bytes = direct ? in.elems * 4 : p.block * 4;
  p.schedule = all_to_all(in.order, p.block, direct);
  p.channels_in = in.grid.total() - 1;
  return p;
}

std::uint64_t plan_sram_bytes(const components::SystemConfig& cfg, const Plan& plan,
                              Collective collective, Buffer buffer, std::int64_t bytes) {
  const auto& m = cfg.messages;
  const std::uint64_t slots_in_sram =
      m.memory == components::SlotMemory::pe_sram
          ? static_cast<std::uint64_t>(plan.channels_in) * m.slots * m.slot_bytes
          : 0;
  const auto working =
      static_cast<std::uint64_t>(2 * plan.step_bytes + 4 * plan.piece * 4 * plan.directions);
  // A ring all-reduce keeps the partial sums it passes on in its reduce-scatter until its
  // all-gather replaces them (run_schedule frees a segment after its last use), so with
  // buffer=hbm too it holds nearly the whole vector.
  const bool whole =
      buffer == Buffer::sram || (collective == Collective::all_reduce && !plan.levels.empty());
  const std::uint64_t resident =
      whole ? static_cast<std::uint64_t>(collective == Collective::all_to_all ? 2 * bytes : bytes)
            : 0;
  return resident + working + slots_in_sram;
}

std::uint64_t most_channels_into_a_cube(const Schedule& schedule, std::int64_t pes_per_cube) {
  std::vector<std::int64_t> peers;
  Step step;
  std::uint64_t most = 0, cube_channels = 0;
  for (std::int64_t g = 0; g < schedule.programs(); ++g) {
    if (g % pes_per_cube == 0) cube_channels = 0;
    peers.clear();
    for (std::int64_t k = 0; k < schedule.steps(g); ++k) {
      schedule.step(g, k, step);
      for (const Op& op : step)
        if (op.kind != OpKind::send) peers.push_back(op.peer);
    }
    std::sort(peers.begin(), peers.end());
    cube_channels +=
        static_cast<std::uint64_t>(std::unique(peers.begin(), peers.end()) - peers.begin());
    most = std::max(most, cube_channels);
  }
  return most;
}

}  // namespace cubesim::kernels::collectives
