// A plugin whose kernels die of signals: a program that writes through a bad pointer, one that
// calls std::abort() and one that divides by zero, each on PE 1 of cube 0 (program (1, 0, 0) of
// the hardware grid) once a load has cost it simulated time; and a harness that faults on the
// host before it launches anything.
#include <cstdlib>
#include <cubesim/cubesim.hpp>
#include <kernels/harness/host_array.hpp>
#include <kernels/harness/random_inputs.hpp>
#include <kernels/plugin.hpp>

#include "crash.hpp"

namespace {

using namespace cubesim;
using namespace cubesim::kernels;

constexpr std::int64_t kElements = 64;

void segfault() {
  crash::write_through_bad_pointer();
}
void abort_program() {
  std::abort();
}
void divide_by_zero() {
  crash::zero = crash::seven / crash::zero;
}

template <void (*Die)()>
void dies_on_pe1(tl::Context& tl, Ptr x) {
  const tl::Tile xs = tl.load(x, {kElements}, DType::f32);
  if (tl.program_id(0) == 1 && tl.program_id(1) == 0 && tl.program_id(2) == 0) Die();
  tl.store(x, xs);
}

template <void (*Die)()>
Outcome run_dies_on_pe1(Simulation& sim, const Params&) {
  const Ptr x = alloc_array(sim, DType::f32, kElements);
  write_array(sim, x, random_array(DType::f32, kElements, sim.options().seed, 1));
  Outcome o;
  o.run = sim.launch(dies_on_pe1<Die>, x);
  return o;
}

Outcome run_dies_in_harness(Simulation&, const Params&) {
  segfault();
  return {};
}

KernelInfo kernel(std::string name, std::string description,
                  std::function<Outcome(Simulation&, const Params&)> run) {
  return {.name = std::move(name),
          .description = std::move(description),
          .params = {},
          .run = std::move(run)};
}

void register_kernels(Registry& registry) {
  registry.add(kernel("segfault_on_pe1", "program (1, 0, 0) writes through a bad pointer",
                      run_dies_on_pe1<segfault>));
  registry.add(kernel("abort_on_pe1", "program (1, 0, 0) calls std::abort()",
                      run_dies_on_pe1<abort_program>));
  registry.add(kernel("divide_by_zero_on_pe1", "program (1, 0, 0) divides an integer by zero",
                      run_dies_on_pe1<divide_by_zero>));
  registry.add(kernel("segfault_in_harness",
                      "the harness writes through a bad pointer before any launch",
                      run_dies_in_harness));
}

}  // namespace

CUBESIM_PLUGIN(register_kernels)
