#include "kernels/gemm_2d.hpp"

#include <algorithm>
#include <string>

#include "kernels/harness.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

void gemm_2d(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, Ptr scratch_ptr, std::int64_t M,
             std::int64_t K, std::int64_t N) {
  gemm_2d_with(tl, a_ptr, b_ptr, c_ptr, scratch_ptr, M, K, N, Gemm2dOptions{});
}

void gemm_2d_with(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, Ptr scratch_ptr, std::int64_t M,
                  std::int64_t K, std::int64_t N, Gemm2dOptions options) {
  const DType dtype = options.dtype;
  const std::int64_t size = dtype_size(dtype);
  const Range rows = split_range(M, tl.num_programs(1) * tl.num_programs(2),
                                 tl.program_id(2) * tl.num_programs(1) + tl.program_id(1));
  const Range cols = split_range(N, tl.num_programs(0), tl.program_id(0));
  if (rows.empty() || cols.empty()) return;  // more programs than rows or columns
  const std::int64_t mb = rows.size(), nb = cols.size();

  // B's column block: rows of nb elements, N apart.
  const auto b_bytes = static_cast<std::uint64_t>(K * nb * size);
  const std::uint64_t sram = tl.sram_free();
  const bool b_in_sram = b_bytes <= sram / 2;
  const tl::Context::Operand b =
      b_in_sram ? tl::Context::Operand{tl.load(b_ptr + cols.begin * size, {K, nb}, dtype,
                                               {.row_stride = N})}
                : tl::Context::Operand{tl.ref(b_ptr + cols.begin * size, {K, nb}, dtype, N)};

  // One staging tile (a chunk of the result) is in SRAM at a time, while it is copied.
  const auto row_bytes = static_cast<std::uint64_t>(nb * size);
  const auto fit_rows = static_cast<std::int64_t>((sram - (b_in_sram ? b_bytes : 0)) / row_bytes);
  std::int64_t block = options.block_m;
  if (block == 0)  // about four chunks, so copies overlap GEMMs; B streamed: as few as fit
    block = b_in_sram ? std::min(fit_rows, (mb + 3) / 4) : fit_rows;
  block = std::min(block, mb);
  if (block < 1 || block > fit_rows)
    tl.fault(
        "gemm_2d: a chunk of " + std::to_string(std::max<std::int64_t>(block, 1)) + " rows x " +
        std::to_string(nb) + " columns of C needs " +
        std::to_string(static_cast<std::uint64_t>(std::max<std::int64_t>(block, 1)) * row_bytes) +
        " bytes of SRAM but " + std::to_string(fit_rows * static_cast<std::int64_t>(row_bytes)) +
        " are free; use a smaller block_m or more PEs per cube");

  const Ptr stage = scratch_ptr + (rows.begin * N + mb * cols.begin) * size;
  const std::int64_t chunks = (mb + block - 1) / block;
  const auto issue = [&](std::int64_t i) {
    const std::int64_t r0 = i * block, n_rows = std::min(block, mb - r0);
    const tl::Ref a = tl.ref(a_ptr + (rows.begin + r0) * K * size, {n_rows, K}, dtype);
    return tl.composite(tl::Op::gemm, a, b, stage + r0 * nb * size);
  };
  tl::Handle current = issue(0);
  for (std::int64_t i = 0; i < chunks; ++i) {
    tl::Handle next;
    if (i + 1 < chunks) next = issue(i + 1);  // queued behind chunk i on the GEMM engine
    tl.wait(current);
    const std::int64_t r0 = i * block, n_rows = std::min(block, mb - r0);
    const tl::Tile part = tl.load(stage + r0 * nb * size, {n_rows, nb}, dtype);
    tl.store(c_ptr + ((rows.begin + r0) * N + cols.begin) * size, part, {.row_stride = N});
    current = next;
  }
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

  // The kernel's SRAM plan for the widest column block: B's block in SRAM when it fits in half,
  // and a staging tile of block_m (at least 1) rows of C in what is left.
  const std::int64_t nb_max = (N + grid.pes - 1) / grid.pes;
  const auto b_bytes = static_cast<std::uint64_t>(K * nb_max * size);
  const bool b_in_sram = b_bytes <= cfg.pe.sram_bytes / 2;
  const std::uint64_t left = cfg.pe.sram_bytes - (b_in_sram ? b_bytes : 0);
  const auto c_row_bytes = static_cast<std::uint64_t>(nb_max * size);
  const std::int64_t min_rows = std::max<std::int64_t>(block_m, 1);
  if (static_cast<std::uint64_t>(min_rows) * c_row_bytes > left)
    throw UsageError(
        std::to_string(min_rows) + " row(s) of a " + std::to_string(nb_max) +
        "-column block of C need " +
        std::to_string(static_cast<std::uint64_t>(min_rows) * c_row_bytes) +
        " bytes of SRAM per program but " + std::to_string(left) + " are left" +
        (b_in_sram ? " beside B's block" : "") + "; " +
        (block_m > 0 ? "use block_m <= " + std::to_string(left / c_row_bytes) + " (or 0: automatic)"
                     : std::string("use a smaller N")));

  const Ptr a = alloc_array(sim, dtype, M * K), b = alloc_array(sim, dtype, K * N),
            c = alloc_array(sim, dtype, M * N), scratch = alloc_array(sim, dtype, M * N);
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
  o.run = sim.launch(gemm_2d_with, a, b, c, scratch, M, K, N,
                     Gemm2dOptions{.dtype = dtype, .block_m = block_m});
  o.useful_flops = static_cast<std::uint64_t>(2 * M * N * K);
  o.useful_bytes = static_cast<std::uint64_t>((M * K + K * N + M * N) * size);
  o.details = {
      {"dtype", dtype_name(dtype)},
      {"programs", grid.str()},
      {"row_bands", bands},
      {"rows_per_band_max", (M + bands - 1) / bands},
      {"column_blocks", grid.pes},
      {"columns_per_block_max", nb_max},
      {"b_block_in_sram", static_cast<std::uint64_t>(K * nb_max * size) <= cfg.pe.sram_bytes / 2},
      {"layout", "A, B, C row-major; results staged in scratch (M x N), then copied"}};
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
          "over the PEs of a cube; strided blocks via refs, staged results",
      .params =
          {
              int_param("M", 1024, 1, std::int64_t{1} << 20, "rows of A and C"),
              int_param("K", 1024, 1, std::int64_t{1} << 20, "columns of A, rows of B"),
              int_param("N", 1024, 1, std::int64_t{1} << 24, "columns of B and C"),
              int_param("block_m", 0, 0, std::int64_t{1} << 20,
                        "rows of C per composite GEMM; 0 = automatic (about four per program)"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of A, B and C (f16/bf16 accumulate in f32)"),
          },
      .run = run_gemm_2d,
  };
}

}  // namespace cubesim::kernels
