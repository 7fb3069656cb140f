#include "kernels/harness/placement.hpp"

#include "kernels/harness/grid.hpp"
#include "kernels/harness/params.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

ParamSpec placement_param(const std::string& what) {
  return choice_param(
      "placement", "auto", {"auto", "cube", "pe", "first_touch", "system"},
      "where " + what +
          " lie in HBM. cube: block b over the HBM channels of the cube whose program handles "
          "it (program b mod programs), as a tuned kernel keeps its data off the links between "
          "cubes; pe: block b on that program's PE's own channels; first_touch: each frame "
          "(channel granule) on the cube of the first program to touch it; system: interleaved "
          "over "
          "every cube; auto: cube, unless the dispatcher places the programs (a logical grid), "
          "then system");
}

Placement block_placement(const Simulation& sim, const Params& p, std::uint64_t block_bytes,
                          const std::string& kernel, bool logical) {
  const std::string asked = get_string(p, "placement");
  if (asked == "system" || (asked == "auto" && logical)) return Placement{};
  if (asked == "first_touch") return Placement::first_touch();
  if (logical)
    throw UsageError(kernel + ": placement=" + asked +
                     " puts block b where program b runs on a grid of programs at their PEs' "
                     "coordinates, but on a logical grid (grid=triton or a --grid larger than "
                     "the hardware) the dispatcher places the programs; use placement=system (or "
                     "auto) there");
  const GridShape g = launch_grid(sim);
  return Placement::distributed(block_bytes, static_cast<std::uint32_t>(g.pes),
                                static_cast<std::uint32_t>(g.cubes),
                                static_cast<std::uint32_t>(g.sips),
                                asked == "pe" ? Placement::Spread::slice : Placement::Spread::cube);
}

}  // namespace cubesim::kernels
