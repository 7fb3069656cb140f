#include "kernels/harness/grid.hpp"

#include <algorithm>

#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

std::int64_t global_program_id(const tl::Context& tl) {
  return (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) +
         tl.program_id(0);
}

std::int64_t total_programs(const tl::Context& tl) {
  return tl.num_programs(0) * tl.num_programs(1) * tl.num_programs(2);
}

Range split_range(std::int64_t n, std::int64_t parts, std::int64_t index) {
  // The first n % parts parts get one element more.
  const std::int64_t q = n / parts, r = n % parts;
  const auto at = [&](std::int64_t i) { return i * q + std::min(i, r); };
  return {at(index), at(index + 1)};
}

std::string GridShape::str() const {
  std::string s = std::to_string(total()) + (total() == 1 ? " program (" : " programs (");
  if (logical)
    return s + "logical grid " + std::to_string(pes) + " x " + std::to_string(cubes) + " x " +
           std::to_string(sips) + ")";
  if (sips > 1) s += std::to_string(sips) + " SIPs x ";
  s += std::to_string(cubes) + (cubes == 1 ? " cube x " : " cubes x ");
  s += std::to_string(pes) + (pes == 1 ? " PE)" : " PEs)");
  return s;
}

GridShape hardware_grid(const components::SystemConfig& c) {
  return {c.cube.pes, c.cubes_per_sip, c.sips};
}

GridShape launch_grid(const Simulation& sim) {
  const Grid& g = sim.options().grid;
  const GridShape hw = hardware_grid(sim.config());
  const GridShape shape{g.pes ? g.pes : hw.pes, g.cubes ? g.cubes : hw.cubes,
                        g.sips ? g.sips : hw.sips};
  const bool fits = shape.pes <= hw.pes && shape.cubes <= hw.cubes && shape.sips <= hw.sips;
  return {shape.pes, shape.cubes, shape.sips, g.dispatched || !fits};
}

void require_hardware_grid(const Simulation& sim, const std::string& kernel,
                           const std::string& why) {
  const Grid& g = sim.options().grid;
  if (!g.dispatched && g.pes == 0 && g.cubes == 0 && g.sips == 0) return;
  throw UsageError(kernel + " runs on the hardware grid only (" + why + "), not on the grid " +
                   g.str() + "; leave out --grid");
}

void require_one_wave(const Simulation& sim, const std::string& kernel, const std::string& why) {
  const GridShape grid = launch_grid(sim);
  const auto pes = static_cast<std::int64_t>(sim.config().total_pes());
  if (grid.total() <= pes) return;
  throw UsageError(kernel + " needs every program running at once (" + why + "), but the grid " +
                   sim.options().grid.str() + " has " + std::to_string(grid.total()) +
                   " programs for " + std::to_string(pes) + " PEs, so they would run in " +
                   std::to_string((grid.total() + pes - 1) / pes) + " waves; launch at most " +
                   std::to_string(pes) + " programs, or leave out --grid");
}

}  // namespace cubesim::kernels
