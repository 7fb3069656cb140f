#include "kernels/splitk_gemm.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "components/pe/gemm_timing.hpp"
#include "kernels/collectives/plan.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/message_slots.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/verify_gemm.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

namespace {

using collectives::Collective;
using components::collectives::Buffer;

}  // namespace

void splitk_gemm(tl::Context& tl, const SplitKArgs& a) {
  const std::int64_t me = global_program_id(tl), programs = total_programs(tl);
  if (static_cast<std::int64_t>(a.slices.size()) != programs)
    tl.fault("splitk_gemm: " + std::to_string(a.slices.size()) + " K slices for the " +
             std::to_string(programs) + " programs of the launch; launch it on its setup's grid");
  const KSlice& s = a.slices[static_cast<std::size_t>(me)];
  const emu::Tick start = tl.now();
  // Both operands stream from HBM: the engine's work is the slice, not the SRAM.
  const tl::Ref x = tl.ref(s.a, {a.M, s.k}, a.dtype, s.lda);
  const tl::Ref w = tl.ref(s.b, {s.k, a.N}, a.dtype);
  tl::CompositeOptions options{.out_dtype = DType::f32};
  // Program 0's GEMM adds the bias in its epilogue, so the sum adds it to every element once
  // (an epilogue step costs the engine far less than a pass over the partial through SRAM).
  if (a.bias && me == 0) options.bias = tl.ref(*a.bias, {a.N}, a.dtype);
  tl::Handle h = tl.composite(tl::Op::gemm, x, w, s.partial, options);
  tl.wait(h);
  if (a.gemm) {
    a.gemm->begin[static_cast<std::size_t>(me)] = start;
    a.gemm->end[static_cast<std::size_t>(me)] = tl.now();
  }
  collectives::run_schedule(tl, a.sum);
}

GridShape grid_of(const components::SystemConfig& config, std::int64_t programs,
                  const std::string& param) {
  const GridShape all = hardware_grid(config);
  const std::int64_t cube = all.pes, sip = all.pes * all.cubes;
  if (programs == 0 || programs == all.total()) return all;
  if (programs >= 1 && programs <= cube) return {programs, 1, 1};
  if (programs % cube == 0 && programs <= sip) return {cube, programs / cube, 1};
  if (programs % sip == 0 && programs <= all.total()) return {cube, all.cubes, programs / sip};
  throw UsageError(param + " = " + std::to_string(programs) + " does not fit the " + all.str() +
                   ": the programs take the first PEs of cube 0 (1 to " + std::to_string(cube) +
                   "), whole cubes of SIP 0 (a multiple of " + std::to_string(cube) + " up to " +
                   std::to_string(sip) + ") or whole SIPs (a multiple of " + std::to_string(sip) +
                   " up to " + std::to_string(all.total()) +
                   "); use one of those, or 0 for every PE");
}

namespace {

// UsageError unless a program's SRAM holds the sum's data and slots, and the message slots fit
// where system.messages.memory puts them.
void refuse_sum_memory(const components::SystemConfig& cfg, SplitKSetup& setup,
                       const SplitKShape& shape) {
  const std::int64_t M = shape.M, N = shape.N;
  const GridShape grid = setup.grid;
  auto fit = [&](Buffer buffer) {
    return collectives::fit_pipelining(cfg, setup.plan, shape.collective, buffer, setup.elems * 4,
                                       0);
  };
  // Suggest buffer=hbm only where it would fit.
  const bool hbm_fits =
      shape.buffer == Buffer::sram && fit(Buffer::hbm).sram_bytes <= cfg.pe.sram_bytes;
  const collectives::FittedPipelining fitted = fit(shape.buffer);
  setup.sum_depth = fitted.pipelining.depth;
  require_sram(
      cfg, fitted.sram_bytes,
      "the sum of the " + std::to_string(M) + " x " + std::to_string(N) +
          " f32 partials (algorithm=" + shape.algorithm +
          ", buffer=" + (shape.buffer == Buffer::sram ? "sram" : "hbm") + ")",
      std::string(hbm_fits ? "use buffer=hbm, or a smaller M x N" : "use a smaller M x N") +
          (cfg.messages.memory == components::SlotMemory::pe_sram
               ? ", or message slots outside the PE (--set "
                 "system.messages.memory=cube_sram or hbm)"
               : ""));
  if (cfg.messages.memory != components::SlotMemory::pe_sram)
    require_message_slots(cfg,
                          collectives::most_channels_into_a_cube(*setup.plan.schedule, grid.pes),
                          static_cast<std::uint64_t>(grid.pes * setup.elems) * 4 * 2,
                          "the sum of the partials (algorithm=" + shape.algorithm + ", slots in " +
                              components::slot_memory_name(cfg.messages.memory) + ")");
}

// Each program's partial on its own cube's HBM, next to its GEMM engine's writes, and the
// launch arguments of the GEMMs and of the sum.
void place_partials(Simulation& sim, SplitKSetup& s) {
  const auto& cfg = sim.config();
  const GridShape grid = s.grid;
  const std::int64_t n = grid.total(), M = s.M, N = s.N, K = s.K;
  std::vector<Ptr> partials(static_cast<std::size_t>(n)), out(partials.size());
  const std::vector<std::byte> zeros(static_cast<std::size_t>(s.elems - M * N) * 4);
  for (std::int64_t cube = 0; cube < grid.cubes * grid.sips; ++cube) {
    const Ptr base = sim.alloc(static_cast<std::uint64_t>(grid.pes * s.elems) * 4,
                               Placement::on_cube(static_cast<std::uint32_t>(cube / grid.cubes),
                                                  static_cast<std::uint32_t>(cube % grid.cubes)));
    for (std::int64_t pe = 0; pe < grid.pes; ++pe) {
      const std::int64_t g = cube * grid.pes + pe;
      const Ptr p = base + pe * s.elems * 4;
      partials[static_cast<std::size_t>(g)] = p;
      out[static_cast<std::size_t>(g)] =
          s.collective == Collective::reduce_scatter ? s.c + g * s.plan.block * 4 : s.c;
      if (!zeros.empty() && !sim.options().timing_only)
        sim.write_bytes(p + M * N * 4, zeros.data(), zeros.size());
    }
  }

  s.gemm_clock.begin.assign(static_cast<std::size_t>(n), 0);
  s.gemm_clock.end = s.sum_clock.begin = s.sum_clock.end = s.gemm_clock.begin;
  SplitKArgs& a = s.args;
  a.M = M;
  a.N = N;
  a.dtype = s.dtype;
  for (std::int64_t g = 0; g < n; ++g)
    a.slices.push_back(
        {.partial = partials[static_cast<std::size_t>(g)], .k = split_range(K, n, g).size()});
  a.sum = {.schedule = s.plan.schedule.get(),
           .buffer = s.buffer,
           .in = std::move(partials),
           .out = std::move(out),
           .pipelining = collectives::pipelining(cfg, s.plan, 0, s.buffer, s.sum_depth),
           .slot_limit = s.plan.windows.slot_cap,
           .clock = &s.sum_clock};
  a.gemm = &s.gemm_clock;
}

}  // namespace

std::unique_ptr<SplitKSetup> prepare_split_k(Simulation& sim, GridShape grid,
                                             const SplitKShape& shape) {
  const auto& cfg = sim.config();
  const std::int64_t n = grid.total(), M = shape.M, N = shape.N, K = shape.K;
  if (K < n)
    throw UsageError("K = " + std::to_string(K) + " is smaller than the " + grid.str() +
                     ": every program multiplies a slice of K of at least one; use K >= " +
                     std::to_string(n) + " or fewer programs");
  auto s = std::make_unique<SplitKSetup>();
  s->grid = grid;
  s->M = M;
  s->N = N;
  s->K = K;
  s->dtype = shape.dtype;
  s->collective = shape.collective;
  s->algorithm = shape.algorithm;
  s->buffer = shape.buffer;
  const std::int64_t multiple =
      collectives::element_multiple(shape.collective, shape.algorithm, grid);
  s->elems = (M * N + multiple - 1) / multiple * multiple;
  s->plan = collectives::make_plan(cfg, grid, shape.collective, shape.algorithm, s->elems * 4);
  refuse_sum_memory(cfg, *s, shape);
  if (shape.collective == Collective::all_reduce)
    s->plan.schedule = collectives::stored_by_owners(std::move(s->plan.schedule), s->plan.block);

  s->c = alloc_array(sim, DType::f32, s->elems);
  place_partials(sim, *s);
  return s;
}

namespace {

constexpr std::uint64_t kStreamA = 1, kStreamB = 2;

}  // namespace

std::unique_ptr<SplitKSetup> setup_splitk_gemm(Simulation& sim, GridShape grid,
                                               const SplitKShape& shape) {
  auto s = prepare_split_k(sim, grid, shape);
  const std::int64_t M = s->M, N = s->N, K = s->K, n = grid.total();
  const Ptr a = alloc_array(sim, s->dtype, M * K), b = alloc_array(sim, s->dtype, K * N);
  const std::int64_t size = dtype_size(s->dtype);
  s->inputs = {{a, static_cast<std::uint64_t>(M * K * size)},
               {b, static_cast<std::uint64_t>(K * N * size)}};
  if (!sim.options().timing_only) {
    write_array(sim, a, random_array(s->dtype, M * K, sim.options().seed, kStreamA));
    write_array(sim, b, random_array(s->dtype, K * N, sim.options().seed, kStreamB));
  }
  for (std::int64_t g = 0; g < n; ++g) {
    KSlice& slice = s->args.slices[static_cast<std::size_t>(g)];
    const std::int64_t k0 = split_range(K, n, g).begin;
    slice.a = a + k0 * size;
    slice.lda = K;
    slice.b = b + k0 * N * size;
  }
  return s;
}

Outcome launch_split_k(Simulation& sim, SplitKSetup& s) {
  Outcome o;
  o.inputs = s.inputs;
  o.outputs = {{s.c, static_cast<std::uint64_t>(s.M * s.N) * 4}};
  const MessageSlotLimit limit(sim, s.plan.windows.slot_cap);  // the slots that fitted
  o.run = sim.launch_on(launch_grid(s.grid), splitk_gemm, s.args);
  const std::int64_t n = s.grid.total();
  emu::Tick gemm = 0, gemms_done = 0;
  for (std::size_t g = 0; g < static_cast<std::size_t>(n); ++g) {
    gemm = std::max(gemm, s.gemm_clock.end[g] - s.gemm_clock.begin[g]);
    gemms_done = std::max(gemms_done, s.gemm_clock.end[g]);
  }
  // Every program starts the sum after one barrier, so its earliest start is when the last
  // program had its partial ready (and, buffer=sram, loaded).
  const emu::Tick sum_begin = *std::min_element(s.sum_clock.begin.begin(), s.sum_clock.begin.end());
  const std::int64_t k_min = split_range(s.K, n, n - 1).size(),
                     k_max = split_range(s.K, n, 0).size();
  const components::GemmTimingModel engine(sim.config().pe.gemm);
  const emu::Tick bound =
      engine.startup() + engine.compute_time(static_cast<std::uint64_t>(s.M),
                                             static_cast<std::uint64_t>(s.N),
                                             static_cast<std::uint64_t>(k_max), s.dtype);
  o.details = {
      {"dtype", dtype_name(s.dtype)},
      {"programs", s.grid.str()},
      {"k_per_program", k_min == k_max ? std::to_string(k_max)
                                       : std::to_string(k_min) + " to " + std::to_string(k_max)},
      {"sum", s.collective == Collective::reduce_scatter
                  ? "reduce-scatter: program g stores block g of the output"
                  : "all-reduce: every program ends with the whole output; block g is stored "
                    "by program g (a tree's whole vector by program 0)"},
      {"algorithm", s.algorithm},
      {"buffer", s.buffer == Buffer::sram ? "sram" : "hbm"},
      {"slot_memory", components::slot_memory_name(sim.config().messages.memory)},
      {"block_bytes", s.plan.block * 4},
      {"message_bytes", s.args.sum.pipelining.message * 4},
      {"piece_bytes", s.args.sum.pipelining.piece * 4},
      {"slots_per_channel_limit", s.plan.windows.slot_cap},
      {"padding_elems", s.elems - s.M * s.N},
      {"gemm_time_ps", gemm},
      {"gemm_engine_bound_ps", bound},
      {"gemm_to_sum_ps", sum_begin - gemms_done},
      {"sum_time_ps", s.sum_clock.elapsed()},
      {"sum_model_ps", collectives::model_time(sim, s.grid, s.args.sum)},
      {"timing_note",
       "gemm_time_ps: the slowest program's GEMM, issue to wait; gemm_engine_bound_ps: its "
       "engine's start-up and compute alone (the rest is streaming the operands and the "
       "partial); gemm_to_sum_ps: from the last GEMM's end to the start of the sum "
       "(buffer=sram: loading the partials); sum_time_ps: the collective from the first "
       "program's start to the last one's end (buffer=sram: the output is stored after it); "
       "sum_model_ps: its alpha-beta model (components/collectives/alpha_beta_model.hpp), which "
       "leaves out HBM traffic (buffer=hbm)"}};
  if (!s.plan.levels.empty()) o.details["ring_sizes"] = s.plan.levels;
  return o;
}

namespace {

Outcome run_splitk_gemm(Simulation& sim, const Params& p) {
  require_hardware_grid(sim, "splitk_gemm",
                        "its programs reduce partial sums over messages; its `programs` parameter "
                        "picks a sub-grid");
  const SplitKShape shape{.M = get_int(p, "M"),
                          .N = get_int(p, "N"),
                          .K = get_int(p, "K"),
                          .dtype = get_dtype(p),
                          .collective = Collective::reduce_scatter,
                          .algorithm = get_string(p, "algorithm"),
                          .buffer = get_string(p, "buffer") == "hbm" ? Buffer::hbm : Buffer::sram};
  const GridShape grid = grid_of(sim.config(), get_int(p, "split"), "split");
  auto s = setup_splitk_gemm(sim, grid, shape);
  Outcome o = launch_split_k(sim, *s);
  const std::int64_t M = s->M, N = s->N, K = s->K;
  o.useful_flops = static_cast<std::uint64_t>(2 * M * N * K);
  o.useful_bytes = static_cast<std::uint64_t>((M * K + K * N) * dtype_size(s->dtype) + M * N * 4);
  if (sim.options().timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  const std::uint64_t seed = sim.options().seed;
  verify_gemm(o, sim, s->c, DType::f32, random_array(s->dtype, M * K, seed, kStreamA),
              random_array(s->dtype, K * N, seed, kStreamB), M, K, N, seed,
              [N](std::int64_t i, std::int64_t j) { return i * N + j; });
  return o;
}

}  // namespace

ParamSpec partial_buffer_param() {
  // HBM by default: the partial is where the GEMM engine wrote it, and an M x N partial
  // soon outgrows a PE's SRAM.
  return choice_param("buffer", "hbm", {"sram", "hbm"},
                      "where each program's partial is during the sum: its SRAM (loaded "
                      "whole before the sum, its output stored after it) or HBM (a block "
                      "loaded when first needed and stored once final)");
}

KernelInfo splitk_gemm_info() {
  return {
      .name = "splitk_gemm",
      .description =
          "Split-K GEMM C = A . B: each program multiplies its slice of K on its GEMM engine, "
          "then a reduce-scatter over tl.send/tl.recv sums the f32 partials and each program "
          "stores its block of C (row-major f32); details give the GEMM and sum times",
      .params =
          {
              int_param("M", 256, 1, std::int64_t{1} << 20, "rows of A and C"),
              int_param("N", 256, 1, std::int64_t{1} << 20, "columns of B and C"),
              int_param("K", 16384, 1, std::int64_t{1} << 24,
                        "columns of A, rows of B: split over the programs, at least one each"),
              int_param("split", 0, 0, std::int64_t{1} << 20,
                        "programs K is split over (0: every PE); the first PEs of cube 0, "
                        "whole cubes or whole SIPs"),
              choice_param("algorithm", collectives::default_algorithm(Collective::reduce_scatter),
                           collectives::algorithm_names(Collective::reduce_scatter),
                           "the reduce-scatter's algorithm (as the reduce_scatter kernel's)"),
              partial_buffer_param(),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of A and B (the GEMMs accumulate and C is f32)"),
          },
      .run = run_splitk_gemm,
  };
}

}  // namespace cubesim::kernels
