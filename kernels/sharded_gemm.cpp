#include "kernels/sharded_gemm.hpp"

#include <algorithm>
#include <string>

#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/verify_gemm.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

void sharded_gemm(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                  std::int64_t K, std::int64_t N) {
  sharded_gemm_with(tl, a_ptr, b_ptr, out_ptr, M, K, N, ShardedGemmOptions{});
}

void sharded_gemm_with(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr out_ptr, std::int64_t M,
                       std::int64_t K, std::int64_t N, ShardedGemmOptions options) {
  const DType dtype = options.dtype;
  const std::int64_t size = dtype_size(dtype);
  const std::int64_t global_pid = global_program_id(tl);
  const std::int64_t programs = total_programs(tl);
  if (N % programs != 0)
    tl.fault("sharded_gemm: N = " + std::to_string(N) + " is not divisible by the " +
             std::to_string(programs) + " programs of the launch; use a multiple of " +
             std::to_string(programs));
  const std::int64_t n_per_pid = N / programs;
  const std::int64_t col_start = global_pid * n_per_pid;

  // B's block stays in HBM; the GEMM engine streams it (ADR-0022).
  const tl::Ref b = tl.ref(b_ptr + col_start * K * size, {K, n_per_pid}, dtype);
  const Ptr out = out_ptr + col_start * M * size;

  const auto a_bytes = static_cast<std::uint64_t>(M * K * size);
  const auto row_bytes = static_cast<std::uint64_t>(K * size);
  const std::uint64_t sram = tl.sram_free();
  const bool whole = options.block_m == 0 ? a_bytes <= sram : options.block_m >= M;
  if (whole) {  // the ADR's kernel
    const tl::Tile a = tl.load(a_ptr, {M, K}, dtype);
    tl::Handle h = tl.composite(tl::Op::gemm, a, b, out);
    tl.wait(h);
    return;
  }

  const std::int64_t block_m =
      options.block_m > 0 ? options.block_m : static_cast<std::int64_t>(sram / 2 / row_bytes);
  if (block_m < 1)
    tl.fault("sharded_gemm: one row of A (K = " + std::to_string(K) + " elements, " +
             std::to_string(row_bytes) + " bytes) does not fit in half of the " +
             std::to_string(sram) +
             " bytes of free SRAM; use a smaller K or a larger "
             "system.pe.sram_KiB");
  // Two blocks in SRAM let block i + 1 load while the engine multiplies block i; an explicit
  // block_m too large for two runs one block at a time.
  const bool double_buffer = 2 * static_cast<std::uint64_t>(block_m) * row_bytes <= sram;
  tl::Handle previous;
  for (std::int64_t r0 = 0; r0 < M; r0 += block_m) {
    const std::int64_t rows = std::min(block_m, M - r0);
    if (!double_buffer && previous.valid()) tl.wait(previous);
    // The tile lives on in the GEMM job until the engine is done with it.
    const tl::Tile a = tl.load(a_ptr + r0 * K * size, {rows, K}, dtype);
    tl::Handle h = tl.composite(tl::Op::gemm, a, b, out + r0 * n_per_pid * size);
    if (double_buffer && previous.valid()) tl.wait(previous);
    previous = h;
  }
  tl.wait(previous);
}

namespace {

constexpr std::uint64_t kStreamA = 1, kStreamB = 2;

Outcome run_sharded_gemm(Simulation& sim, const Params& p) {
  const std::int64_t M = get_int(p, "M"), K = get_int(p, "K"), N = get_int(p, "N");
  const std::int64_t block_m = get_int(p, "block_m");
  const DType dtype = get_dtype(p);
  const std::int64_t size = dtype_size(dtype);
  const auto& cfg = sim.config();
  const GridShape grid = launch_grid(sim);
  const std::int64_t programs = grid.total();

  require_divisible("N", N, programs, grid.str());
  const std::int64_t n_per_pid = N / programs;
  const auto row_bytes = static_cast<std::uint64_t>(K * size);
  const auto a_bytes = static_cast<std::uint64_t>(M) * row_bytes;
  const std::uint64_t sram = cfg.pe.sram_bytes;
  std::string a_mode;
  if (block_m == 0 ? a_bytes <= sram : block_m >= M) {
    a_mode = "A loaded whole (" + std::to_string(a_bytes) + " bytes)";
    // Only an explicit block_m >= M asks for A whole where it does not fit: blocks of rows
    // that do fit are the fix that keeps M and K.
    require_sram(cfg, a_bytes, "block_m = " + std::to_string(block_m) + " >= M: A (M x K) whole",
                 "use block_m <= " + std::to_string(sram / row_bytes) +
                     " (A in blocks of rows) or 0 (automatic)");
  } else {
    const std::int64_t rows =
        block_m > 0 ? block_m : static_cast<std::int64_t>(sram / 2 / row_bytes);
    require_sram(cfg, 2 * row_bytes, "a row of A (K = " + std::to_string(K) + ") in half the SRAM",
                 "use K <= " + std::to_string(sram / 2 / static_cast<std::uint64_t>(size)));
    require_sram(cfg, static_cast<std::uint64_t>(rows) * row_bytes,
                 "block_m = " + std::to_string(rows) + " rows of A",
                 "use block_m <= " + std::to_string(sram / row_bytes) + " (or 0: automatic)");
    a_mode = "A in blocks of " + std::to_string(std::min(rows, M)) + " rows (" +
             std::to_string((M + rows - 1) / rows) + " composites per program)";
  }

  const Ptr a = alloc_array(sim, dtype, M * K), b = alloc_array(sim, dtype, K * N),
            c = alloc_array(sim, dtype, M * N);
  const bool timing_only = sim.options().timing_only;
  const std::uint64_t seed = sim.options().seed;
  HostArray a_host, b_host;
  if (!timing_only) {
    a_host = random_array(dtype, M * K, seed, kStreamA);
    b_host = random_array(dtype, K * N, seed, kStreamB);  // logical K x N, row-major
    write_array(sim, a, a_host);
    // The ADR's blocked layout: program p's K x n_per_pid block, row-major, one after another.
    HostArray blocked{dtype, K * N, std::vector<std::byte>(b_host.bytes.size())};
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j0 = 0; j0 < N; j0 += n_per_pid)
        std::copy_n(b_host.bytes.data() + (k * N + j0) * size, n_per_pid * size,
                    blocked.bytes.data() + column_blocked_index(K, n_per_pid, k, j0) * size);
    write_array(sim, b, blocked);
  }

  Outcome o;
  o.inputs = {{a, static_cast<std::uint64_t>(M * K * size)},
              {b, static_cast<std::uint64_t>(K * N * size)}};
  o.outputs = {{c, static_cast<std::uint64_t>(M * N * size)}};
  o.run = sim.launch(sharded_gemm_with, a, b, c, M, K, N,
                     ShardedGemmOptions{.dtype = dtype, .block_m = block_m});
  o.useful_flops = static_cast<std::uint64_t>(2 * M * N * K);
  o.useful_bytes = static_cast<std::uint64_t>((M * K + K * N + M * N) * size);
  o.details = {{"dtype", dtype_name(dtype)},
               {"programs", grid.str()},
               {"columns_per_program", n_per_pid},
               {"a", a_mode},
               {"layout", "B and C column-blocked per program (ADR-0022)"}};
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }

  verify_gemm(o, sim, c, dtype, a_host, b_host, M, K, N, seed, [&](std::int64_t i, std::int64_t j) {
    return column_blocked_index(M, n_per_pid, i, j);
  });
  return o;
}

}  // namespace

KernelInfo sharded_gemm_info() {
  return {
      .name = "sharded_gemm",
      .description =
          "ADR-0022's column-sharded GEMM C = A . B (SIP axis folded into the global "
          "PID); A in PE SRAM, B streamed from HBM, B and C column-blocked",
      .params =
          {
              int_param("M", 1024, 1, std::int64_t{1} << 20, "rows of A and C"),
              int_param("K", 1024, 1, std::int64_t{1} << 20, "columns of A, rows of B"),
              int_param("N", 1024, 1, std::int64_t{1} << 24,
                        "columns of B and C; a multiple of the number of programs"),
              int_param("block_m", 0, 0, std::int64_t{1} << 20,
                        "rows of A per composite GEMM; 0 = A whole when it fits in SRAM, else "
                        "the largest block that fits in half of it"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of A, B and C (f16/bf16 accumulate in f32)"),
          },
      .run = run_sharded_gemm,
  };
}

}  // namespace cubesim::kernels
