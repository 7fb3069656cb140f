#include "kernels/matmul.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/verify_gemm.hpp"

namespace cubesim::kernels {

namespace {

std::int64_t cdiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The rows x cols row-major array `a` stored cols x rows (its transpose), row-major.
HostArray transposed(const HostArray& a, std::int64_t rows, std::int64_t cols) {
  const std::int64_t size = dtype_size(a.dtype);
  HostArray t{a.dtype, a.size, std::vector<std::byte>(a.bytes.size())};
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      std::copy_n(a.bytes.data() + (i * cols + j) * size, size,
                  t.bytes.data() + (j * rows + i) * size);
  return t;
}

// Where program `pid` works: its tile's row and column (Triton's grouped ordering).
std::pair<std::int64_t, std::int64_t> tile_of(std::int64_t pid, std::int64_t tiles_m,
                                              std::int64_t tiles_n, std::int64_t group_m) {
  const std::int64_t in_group = group_m * tiles_n;
  const std::int64_t first_m = pid / in_group * group_m;
  const std::int64_t group_rows = std::min(tiles_m - first_m, group_m);
  return {first_m + pid % in_group % group_rows, pid % in_group / group_rows};
}

}  // namespace

std::int64_t matmul_programs(std::int64_t M, std::int64_t N, const MatmulOptions& o) {
  return cdiv(M, o.block_m) * cdiv(N, o.block_n);
}

std::uint64_t matmul_sram_bytes(std::int64_t K, const MatmulOptions& o) {
  if (o.block_k == 0 || o.block_k >= K) return 0;
  return static_cast<std::uint64_t>(o.block_m * o.block_n * (4 + dtype_size(o.dtype)));
}

void matmul(tl::Context& tl, Ptr a_ptr, Ptr b_ptr, Ptr c_ptr, std::int64_t M, std::int64_t K,
            std::int64_t N, MatmulOptions o) {
  const DType dtype = o.dtype;
  const std::int64_t size = dtype_size(dtype);
  const auto [tm, tn] =
      tile_of(tl.program_id(0), cdiv(M, o.block_m), cdiv(N, o.block_n), o.group_m);
  const std::int64_t m0 = tm * o.block_m, n0 = tn * o.block_n;
  const std::int64_t mb = std::min(o.block_m, M - m0), nb = std::min(o.block_n, N - n0);
  const std::int64_t bk = o.block_k == 0 ? K : std::min(o.block_k, K);
  const std::int64_t steps = cdiv(K, bk);

  const auto a = [&](std::int64_t s) {
    const std::int64_t k0 = s * bk, kb = std::min(bk, K - k0);
    return tl.ref(a_ptr + (m0 * K + k0) * size, {mb, kb}, dtype, K);
  };
  const auto b = [&](std::int64_t s) {
    const std::int64_t k0 = s * bk, kb = std::min(bk, K - k0);
    return o.b_nk ? tl.ref(b_ptr + (n0 * K + k0) * size, {nb, kb}, dtype, K)
                  : tl.ref(b_ptr + (k0 * N + n0) * size, {kb, nb}, dtype, N);
  };
  const Ptr c = c_ptr + (m0 * N + n0) * size;
  if (steps == 1) {
    tl::Handle h =
        tl.composite(tl::Op::gemm, a(0), b(0), c, {.trans_b = o.b_nk, .out_row_stride = N});
    tl.wait(h);
    return;
  }
  tl::TileHandle acc = tl.composite(tl::Op::gemm, a(0), b(0), tl::to_tile,
                                    {.trans_b = o.b_nk, .out_dtype = DType::f32});
  for (std::int64_t s = 1; s < steps; ++s) {
    // The last step casts to the output dtype (free, in the engine's epilogue).
    const DType out = s + 1 == steps ? dtype : DType::f32;
    acc = tl.composite(tl::Op::gemm, a(s), b(s), acc,
                       {.trans_b = o.b_nk, .out_dtype = out, .accumulate = true});
  }
  tl.store(c, tl.wait(acc), {.row_stride = N});
}

namespace {

constexpr std::uint64_t kStreamA = 1, kStreamB = 2;

MatmulOptions options_of(const Params& p) {
  return {.dtype = get_dtype(p),
          .block_m = get_int(p, "block_m"),
          .block_n = get_int(p, "block_n"),
          .block_k = get_int(p, "block_k"),
          .group_m = get_int(p, "group_m"),
          .b_nk = get_string(p, "b_layout") == "nk"};
}

Outcome run_matmul(Simulation& sim, const Params& p) {
  const std::int64_t M = get_int(p, "M"), K = get_int(p, "K"), N = get_int(p, "N");
  const MatmulOptions o = options_of(p);
  const std::int64_t size = dtype_size(o.dtype);
  require_hardware_grid(sim, "matmul", "it launches one program per tile of C itself");
  const std::uint64_t sram = matmul_sram_bytes(K, o);
  require_sram(sim.config(), sram, "matmul: a program's f32 accumulator and its cast",
               "use smaller block_m or block_n, or block_k = 0 (all of K in one step, no "
               "accumulator)");
  const Ptr a = alloc_array(sim, o.dtype, M * K), b = alloc_array(sim, o.dtype, K * N),
            c = alloc_array(sim, o.dtype, M * N);
  const bool timing_only = sim.options().timing_only;
  const std::uint64_t seed = sim.options().seed;
  HostArray a_host, b_host;
  if (!timing_only) {
    a_host = random_array(o.dtype, M * K, seed, kStreamA);
    b_host = random_array(o.dtype, K * N, seed, kStreamB);
    write_array(sim, a, a_host);
    write_array(sim, b, o.b_nk ? transposed(b_host, K, N) : b_host);
  }

  const std::int64_t programs = matmul_programs(M, N, o);
  Outcome out;
  out.inputs = {{a, static_cast<std::uint64_t>(M * K * size)},
                {b, static_cast<std::uint64_t>(K * N * size)}};
  out.outputs = {{c, static_cast<std::uint64_t>(M * N * size)}};
  out.run = sim.launch_on(Grid::logical(programs), matmul, a, b, c, M, K, N, o);
  out.useful_flops = static_cast<std::uint64_t>(2 * M * N * K);
  out.useful_bytes = static_cast<std::uint64_t>((M * K + K * N + M * N) * size);
  out.details = {
      {"dtype", dtype_name(o.dtype)},
      {"programs", programs},
      {"tiles", std::to_string(cdiv(M, o.block_m)) + " x " + std::to_string(cdiv(N, o.block_n))},
      {"k_steps", o.block_k == 0 ? 1 : cdiv(K, o.block_k)},
      {"sram_bytes_per_program", sram},
      {"layout", std::string("A (M x K) and C row-major, B ") + (o.b_nk ? "N x K" : "K x N") +
                     " row-major; one block_m x block_n tile of C per program"}};
  if (timing_only) {
    out.details["verification"] = "skipped (timing-only run)";
    return out;
  }
  verify_gemm(out, sim, c, o.dtype, a_host, b_host, M, K, N, seed,
              [&](std::int64_t i, std::int64_t j) { return i * N + j; });
  return out;
}

}  // namespace

KernelInfo matmul_info() {
  return {
      .name = "matmul",
      .description =
          "tiled GEMM as Triton writes one: a program per tile of C on a logical grid run in "
          "waves, tiles in grouped order, A and B streamed by the GEMM engine",
      .params =
          {
              int_param("M", 1024, 1, std::int64_t{1} << 20, "rows of A and C"),
              int_param("K", 1024, 1, std::int64_t{1} << 20, "columns of A, rows of B"),
              int_param("N", 1024, 1, std::int64_t{1} << 20, "columns of B and C"),
              int_param("block_m", 128, 1, 4096, "rows of a program's tile of C"),
              int_param("block_n", 128, 1, 4096, "columns of a program's tile of C"),
              int_param("block_k", 0, 0, std::int64_t{1} << 20,
                        "K per step (an f32 accumulator in SRAM between steps); 0: all of K in "
                        "one step, written straight into C"),
              int_param("group_m", 8, 1, 1 << 20,
                        "rows of tiles per group of the grouped order (1: row by row)"),
              choice_param("b_layout", "kn", {"kn", "nk"},
                           "how B is stored: K x N, or N x K (torch.nn.Linear's weight)"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of A, B and C (products accumulate in f32)"),
          },
      .run = run_matmul,
  };
}

}  // namespace cubesim::kernels
