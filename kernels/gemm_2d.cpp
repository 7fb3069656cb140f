#include "kernels/gemm_2d.hpp"

#include <algorithm>
#include <string>

#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/verify_gemm.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

void gemm_2d(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
             std::int64_t N) {
  gemm_2d_with(tl, a_ptr, b_ptr, c_ptr, M, K, N, Gemm2dOptions{});
}

void gemm_2d_with(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
                  std::int64_t N, Gemm2dOptions options) {
  const DType dtype = options.dtype;
  const std::int64_t size = dtype_size(dtype);
  const Range rows = split_range(M, tl.num_programs(1) * tl.num_programs(2),
                                 tl.program_id(2) * tl.num_programs(1) + tl.program_id(1));
  const Range cols = split_range(N, tl.num_programs(0), tl.program_id(0));
  if (rows.empty() || cols.empty()) return;  // more programs than rows or columns
  const std::int64_t mb = rows.size(), nb = cols.size();

  // B's column block: rows of nb elements, N apart.
  const auto b_bytes = static_cast<std::uint64_t>(K * nb * size);
  const tl::Context::Operand b =
      b_bytes <= tl.sram_free()
          ? tl::Context::Operand{tl.load(b_ptr + cols.begin * size, {K, nb}, dtype,
                                         {.row_stride = N})}
          : tl::Context::Operand{tl.ref(b_ptr + cols.begin * size, {K, nb}, dtype, N)};

  // Each chunk's product goes straight into its rows of C's column block (row stride N); the
  // engine runs the chunks in order, so waiting for the last waits for all.
  const std::int64_t block = options.block_m == 0 ? mb : std::min(options.block_m, mb);
  tl::Handle last;
  for (std::int64_t r0 = 0; r0 < mb; r0 += block) {
    const std::int64_t n_rows = std::min(block, mb - r0);
    const tl::Ref a = tl.ref(a_ptr + (rows.begin + r0) * K * size, {n_rows, K}, dtype);
    last = tl.composite(tl::Op::gemm, a, b, c_ptr + ((rows.begin + r0) * N + cols.begin) * size,
                        {.out_row_stride = N});
  }
  tl.wait(last);
}

namespace {

constexpr std::uint64_t kStreamA = 1, kStreamB = 2;

Outcome run_gemm_2d(Simulation& sim, const Params& p) {
  const std::int64_t M = get_int(p, "M"), K = get_int(p, "K"), N = get_int(p, "N");
  const std::int64_t block_m = get_int(p, "block_m");
  const DType dtype = get_dtype(p);
  const std::int64_t size = dtype_size(dtype);
  const auto& cfg = sim.config();
  const GridShape grid = launch_grid(sim);
  const std::int64_t bands = grid.cubes * grid.sips;

  const std::int64_t nb_max = (N + grid.pes - 1) / grid.pes;
  const Ptr a = alloc_array(sim, dtype, M * K), b = alloc_array(sim, dtype, K * N),
            c = alloc_array(sim, dtype, M * N);
  const bool timing_only = sim.options().timing_only;
  const std::uint64_t seed = sim.options().seed;
  HostArray a_host, b_host;
  if (!timing_only) {
    a_host = random_array(dtype, M * K, seed, kStreamA);
    b_host = random_array(dtype, K * N, seed, kStreamB);
    write_array(sim, a, a_host);
    write_array(sim, b, b_host);
  }

  Outcome o;
  o.inputs = {{a, static_cast<std::uint64_t>(M * K * size)},
              {b, static_cast<std::uint64_t>(K * N * size)}};
  o.outputs = {{c, static_cast<std::uint64_t>(M * N * size)}};
  o.run =
      sim.launch(gemm_2d_with, a, b, c, M, K, N, Gemm2dOptions{.dtype = dtype, .block_m = block_m});
  o.useful_flops = static_cast<std::uint64_t>(2 * M * N * K);
  o.useful_bytes = static_cast<std::uint64_t>((M * K + K * N + M * N) * size);
  o.details = {
      {"dtype", dtype_name(dtype)},
      {"programs", grid.str()},
      {"row_bands", bands},
      {"rows_per_band_max", (M + bands - 1) / bands},
      {"column_blocks", grid.pes},
      {"columns_per_block_max", nb_max},
      {"b_block_in_sram", static_cast<std::uint64_t>(K * nb_max * size) <= cfg.pe.sram_bytes},
      {"layout", "A, B, C row-major; each GEMM writes its rows of C with row stride N"}};
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }

  verify_gemm(o, sim, c, dtype, a_host, b_host, M, K, N, seed,
              [&](std::int64_t i, std::int64_t j) { return i * N + j; });
  return o;
}

}  // namespace

KernelInfo gemm_2d_info() {
  return {
      .name = "gemm_2d",
      .description =
          "row-major GEMM C = A . B sharded in 2D: rows over cubes and SIPs, columns "
          "over the PEs of a cube; strided blocks via refs and strided GEMM outputs",
      .params =
          {
              int_param("M", 1024, 1, std::int64_t{1} << 20, "rows of A and C"),
              int_param("K", 1024, 1, std::int64_t{1} << 20, "columns of A, rows of B"),
              int_param("N", 1024, 1, std::int64_t{1} << 24, "columns of B and C"),
              int_param("block_m", 0, 0, std::int64_t{1} << 20,
                        "rows of C per composite GEMM; 0 = a program's whole row band in one"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of A, B and C (f16/bf16 accumulate in f32)"),
          },
      .run = run_gemm_2d,
  };
}

}  // namespace cubesim::kernels
