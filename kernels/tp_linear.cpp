#include "kernels/tp_linear.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

namespace {

using collectives::Collective;
using components::collectives::Buffer;

constexpr std::uint64_t kStreamX = 1, kStreamW = 2, kStreamBias = 3;

// The inputs as the host generates them (from the seed), for writing and for the reference.
struct Inputs {
  HostArray x, w, bias;
};

Inputs host_inputs(const TpLinearShape& s, std::uint64_t seed) {
  Inputs in{random_array(s.dtype, s.M * s.K, seed, kStreamX),
            random_array(s.dtype, s.K * s.N, seed, kStreamW),
            {}};
  if (s.bias) in.bias = random_array(s.dtype, s.N, seed, kStreamBias);
  return in;
}

// Y = X . W + b in fp64 at the sampled elements, against Y as the simulation left it. The
// tolerance is one f32-accumulated dot product of length K + 1 (the bias is one more addition,
// whichever partial it went into).
void verify_linear(Outcome& o, const Simulation& sim, const SplitKSetup& s, const Inputs& in,
                   std::uint64_t seed) {
  const std::int64_t M = s.M, N = s.N, K = s.K;
  const auto samples = sample_indices(M * N, elements_to_check(M * N, K), seed);
  const std::vector<double> x = in.x.to_f64(), w = in.w.to_f64();
  ErrorCheck check(dot_error_scale(K + 1));
  for (const std::int64_t f : samples) {
    const std::int64_t i = f / N, j = f % N;
    double ref = in.bias.size > 0 ? in.bias.at(j) : 0.0;
    for (std::int64_t k = 0; k < K; ++k)
      ref += x[static_cast<std::size_t>(i * K + k)] * w[static_cast<std::size_t>(k * N + j)];
    check.add(f, read_element(sim, s.c, f, DType::f32), ref);
  }
  set_verification(o, check, dot_tolerance(DType::f32, K + 1),
                   std::to_string(samples.size()) + " of the " + std::to_string(M * N) +
                       " elements of Y against an fp64 reference of X . W + b");
}

}  // namespace

std::unique_ptr<SplitKSetup> setup_tp_linear(Simulation& sim, GridShape grid,
                                             const TpLinearShape& shape) {
  auto s = prepare_split_k(sim, grid,
                           SplitKShape{.M = shape.M,
                                       .N = shape.N,
                                       .K = shape.K,
                                       .dtype = shape.dtype,
                                       .collective = Collective::all_reduce,
                                       .algorithm = shape.algorithm,
                                       .buffer = shape.buffer});
  const std::int64_t M = shape.M, N = shape.N, K = shape.K, n = grid.total();
  const std::int64_t size = dtype_size(shape.dtype);
  const bool values = !sim.options().timing_only;
  Inputs in;
  if (values) in = host_inputs(shape, sim.options().seed);
  for (std::int64_t g = 0; g < n; ++g) {
    const Range k = split_range(K, n, g);
    const std::int64_t cube = g / grid.pes;
    const Placement here = Placement::on_cube(static_cast<std::uint32_t>(cube / grid.cubes),
                                              static_cast<std::uint32_t>(cube % grid.cubes));
    KSlice& slice = s->args.slices[static_cast<std::size_t>(g)];
    slice.a = sim.alloc(static_cast<std::uint64_t>(M * k.size() * size), here);
    slice.b = sim.alloc(static_cast<std::uint64_t>(k.size() * N * size), here);
    slice.lda = k.size();
    s->inputs.push_back({slice.a, static_cast<std::uint64_t>(M * k.size() * size)});
    s->inputs.push_back({slice.b, static_cast<std::uint64_t>(k.size() * N * size)});
    if (!values) continue;
    // X_g: the columns [k.begin, k.end) of every row of X; W_g: the rows of W, contiguous.
    std::vector<std::byte> block(static_cast<std::size_t>(M * k.size() * size));
    for (std::int64_t i = 0; i < M; ++i)
      std::copy_n(in.x.bytes.data() + (i * K + k.begin) * size, k.size() * size,
                  block.data() + i * k.size() * size);
    sim.write_bytes(slice.a, block.data(), block.size());
    sim.write_bytes(slice.b, in.w.bytes.data() + k.begin * N * size,
                    static_cast<std::uint64_t>(k.size() * N * size));
  }
  if (shape.bias) {
    const Ptr b = alloc_array(sim, shape.dtype, N);
    s->inputs.push_back({b, static_cast<std::uint64_t>(N * size)});
    if (values) write_array(sim, b, in.bias);
    s->args.bias = b;
  }
  return s;
}

namespace {

Outcome run_tp_linear(Simulation& sim, const Params& p) {
  require_hardware_grid(sim, "tp_linear", "its programs all-reduce over messages");
  const TpLinearShape shape{
      .M = get_int(p, "M"),
      .N = get_int(p, "N"),
      .K = get_int(p, "K"),
      .dtype = get_dtype(p),
      .bias = p.at("bias").get<bool>(),
      .algorithm = get_string(p, "algorithm"),
      .buffer = get_string(p, "buffer") == "hbm" ? Buffer::hbm : Buffer::sram};
  const GridShape grid = grid_of(sim.config(), get_int(p, "programs"), "programs");
  auto s = setup_tp_linear(sim, grid, shape);
  Outcome o = launch_split_k(sim, *s);
  const std::int64_t M = shape.M, N = shape.N, K = shape.K;
  o.useful_flops = static_cast<std::uint64_t>(2 * M * N * K + (shape.bias ? M * N : 0));
  o.useful_bytes = static_cast<std::uint64_t>(
      (M * K + K * N + (shape.bias ? N : 0)) * dtype_size(shape.dtype) + M * N * 4);
  o.details["bias"] = shape.bias;
  o.details["layout"] =
      "X_g (M x k_g) and W_g (k_g x N) contiguous on program g's cube; b and Y (row-major "
      "f32) interleaved across cubes";
  if (sim.options().timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  verify_linear(o, sim, *s, host_inputs(shape, sim.options().seed), sim.options().seed);
  return o;
}

}  // namespace

KernelInfo tp_linear_info() {
  return {
      .name = "tp_linear",
      .description =
          "Tensor-parallel row-parallel linear layer Y = X . W + b: W split by rows (K) and X "
          "by columns over the programs, each computes X_g . W_g on its GEMM engine, an "
          "all-reduce over tl.send/tl.recv sums them; Y (f32) stored once, block g by program "
          "g; details give the GEMM and all-reduce times",
      .params =
          {
              int_param("M", 32, 1, std::int64_t{1} << 20, "rows of X and Y (tokens)"),
              int_param("N", 1024, 1, std::int64_t{1} << 20,
                        "columns of W and Y (output features)"),
              int_param("K", 4096, 1, std::int64_t{1} << 24,
                        "columns of X, rows of W (input features): split over the programs, "
                        "at least one each"),
              bool_param("bias", true, "add a bias b (N values of dtype) to every row of Y"),
              choice_param("algorithm", collectives::default_algorithm(Collective::all_reduce),
                           collectives::algorithm_names(Collective::all_reduce),
                           "the all-reduce's algorithm (as the allreduce kernel's)"),
              partial_buffer_param(),
              int_param("programs", 0, 0, std::int64_t{1} << 20,
                        "programs W is split over (0: every PE); the first PEs of cube 0, "
                        "whole cubes or whole SIPs"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of X, W and b (the GEMMs accumulate and Y is f32)"),
          },
      .run = run_tp_linear,
  };
}

}  // namespace cubesim::kernels
