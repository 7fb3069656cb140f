// A kernel of your own in the cubesim command line (docs/writing-kernels.md, "Your kernels in
// the CLI"): scaled_add, out = alpha * x + y, with its harness (parameters, seeded inputs, an fp64
// reference check) and its registration. Built as a plugin (cubesim --load libmine.so) and into a
// cubesim of its own (cubesim_add_cli) by CMakeLists.txt beside it.
#include <algorithm>
#include <cmath>
#include <cubesim/cubesim.hpp>
#include <kernels/harness/grid.hpp>
#include <kernels/harness/host_array.hpp>
#include <kernels/harness/params.hpp>
#include <kernels/harness/random_inputs.hpp>
#include <kernels/harness/requirements.hpp>
#include <kernels/harness/tolerances.hpp>
#include <kernels/harness/verification.hpp>
#include <kernels/plugin.hpp>
#include <string>

namespace mine {

using namespace cubesim;
using namespace cubesim::kernels;

// Each program takes one contiguous share of the n elements and walks it in blocks; the last
// block of a share is masked.
void scaled_add(tl::Context& tl, Ptr x, Ptr y, Ptr out, std::int64_t n, double alpha,
                std::int64_t block) {
  const Range mine = split_range(n, total_programs(tl), global_program_id(tl));
  for (std::int64_t start = mine.begin; start < mine.end; start += block) {
    const std::int64_t at = start * 4;  // f32
    const tl::Tile mask = tl.arange(0, block) < static_cast<double>(mine.end - start);
    const tl::Tile xs = tl.load(x + at, {block}, DType::f32, {.mask = &mask});
    const tl::Tile ys = tl.load(y + at, {block}, DType::f32, {.mask = &mask});
    tl.store(out + at, xs * alpha + ys, {.mask = &mask});
  }
}

Outcome run_scaled_add(Simulation& sim, const Params& p) {
  const std::int64_t n = get_int(p, "n"), block = get_int(p, "block");
  const double alpha = get_real(p, "alpha");
  // x, y, the result and the mask (a byte each) in f32, plus the i32 offsets of arange.
  require_sram(sim.config(), static_cast<std::uint64_t>(block) * 21,
               "block = " + std::to_string(block),
               "use block <= " + std::to_string(sim.config().pe.sram_bytes / 21));
  const std::int64_t padded = n + block;  // a masked block may reach past n
  const Ptr x = alloc_array(sim, DType::f32, padded), y = alloc_array(sim, DType::f32, padded),
            out = alloc_array(sim, DType::f32, padded);
  const HostArray xs = random_array(DType::f32, n, sim.options().seed, 1);
  const HostArray ys = random_array(DType::f32, n, sim.options().seed, 2);
  write_array(sim, x, xs);
  write_array(sim, y, ys);

  Outcome o;
  o.run = sim.launch(scaled_add, x, y, out, n, alpha, block);
  o.useful_flops = static_cast<std::uint64_t>(2 * n);
  o.useful_bytes = static_cast<std::uint64_t>(12 * n);
  o.details = {{"alpha", alpha}, {"block", block}};
  if (sim.options().timing_only) return o;

  // alpha * x and the sum are each rounded to f32 (alpha too, as the vector unit holds it): at
  // most 3 roundings of terms no larger than |alpha x| + |y|, so the error is measured against
  // that magnitude and may reach 3 u (u = 2^-24); 1% on top for the fp64 arithmetic here.
  const double alpha32 = round_to(DType::f32, alpha);
  const HostArray got = read_array(sim, out, DType::f32, n);
  ErrorCheck check(0);
  for (std::int64_t i = 0; i < n; ++i) {
    const double ax = alpha32 * xs.at(i), ref = ax + ys.at(i);
    check.add(i, got.at(i), ref, std::abs(ax) + std::abs(ys.at(i)));
  }
  set_verification(o, check, 3 * unit_roundoff(DType::f32) * 1.01,
                   "all " + std::to_string(n) + " elements against alpha * x + y in fp64");
  return o;
}

void register_kernels(Registry& registry) {
  registry.add({
      .name = "scaled_add",
      .description = "out = alpha * x + y in f32, each program a contiguous share in blocks",
      .params = {int_param("n", 4096, 1, std::int64_t{1} << 30, "elements of x, y and out"),
                 real_param("alpha", 1.5, -1e6, 1e6, "the scale of x"),
                 int_param("block", 256, 1, 1 << 16, "elements per masked block")},
      .run = run_scaled_add,
  });
}

}  // namespace mine

// The plugin's entry points, for cubesim --load (a cubesim_add_cli build ignores them).
CUBESIM_PLUGIN(mine::register_kernels)
