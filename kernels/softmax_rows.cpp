#include "kernels/softmax_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/placement.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

std::int64_t softmax_block_rows(std::uint64_t sram_bytes, std::int64_t rows, std::int64_t cols,
                                DType dtype, std::int64_t programs) {
  const auto per_row = static_cast<std::uint64_t>(cols) * softmax_sram_per_element(dtype);
  const auto fit = static_cast<std::int64_t>(sram_bytes / std::max<std::uint64_t>(per_row, 1));
  const std::int64_t share = (rows + programs - 1) / std::max<std::int64_t>(programs, 1);
  return std::max<std::int64_t>(1, std::min(fit, share));
}

namespace {

// softmax over axis 1 of a block, in f32, rounded to `dtype` at the end. The temporaries go
// out of scope as soon as they are used, so the block's SRAM stays within
// softmax_sram_per_element().
tl::Tile softmax_block(const tl::Tile& x, DType dtype) {
  tl::Tile e;
  {
    const tl::Tile xf = x.to(DType::f32);
    const tl::Tile m = tl::max(xf, 1);
    e = tl::exp(xf - m.column());  // every exponent <= 0: no overflow
  }
  const tl::Tile s = tl::sum(e, 1);  // >= 1: the maximum contributes exp(0)
  const tl::Tile y = e / s.column();
  return y.to(dtype);
}

}  // namespace

void softmax_rows(tl::Context& tl, Ptr x_ptr, Ptr out_ptr, std::int64_t rows, std::int64_t cols,
                  std::int64_t block_rows, DType dtype) {
  const std::int64_t pid = global_program_id(tl);
  const std::int64_t programs = total_programs(tl);
  const std::int64_t size = dtype_size(dtype);
  const std::int64_t br =
      block_rows > 0 ? block_rows : softmax_block_rows(tl.sram_free(), rows, cols, dtype, programs);
  const std::int64_t blocks = (rows + br - 1) / br;
  for (std::int64_t b = pid; b < blocks; b += programs) {
    const std::int64_t r0 = b * br;
    const Ptr in = x_ptr + r0 * cols * size, out = out_ptr + r0 * cols * size;
    if (r0 + br <= rows) {  // a whole block: no mask needed
      const tl::Tile x = tl.load(in, {br, cols}, dtype);
      tl.store(out, softmax_block(x, dtype));
      continue;
    }
    // The last block: rows r0 + i with i < rows - r0 exist. The row mask is broadcast over the
    // columns (the mask has the tile's shape); masked-off rows read as 0 and are not stored.
    const tl::Tile mask = (tl.arange(0, br).column() < static_cast<double>(rows - r0)) +
                          tl.zeros({1, cols}, DType::i32);
    const tl::Tile x = tl.load(in, {br, cols}, dtype, {.mask = &mask, .other = 0.0});
    tl.store(out, softmax_block(x, dtype), {.mask = &mask});
  }
}

namespace {

constexpr std::uint64_t kStreamValues = 1, kStreamOffsets = 2;
constexpr double kRowOffset = 100;  // rows are shifted by up to +-100: exp(100) overflows f32
constexpr double kSpread = 4;       // values within a row: offset +- [1/4, 4]

// Row r of the input before rounding to the dtype: offset_r + 4 v with v in +-[1/16, 1].
void input_row(std::uint64_t seed, std::int64_t r, std::int64_t cols, std::vector<double>& values) {
  std::byte off_bytes[4];
  random_block(DType::f32, Fill::signed_unit, seed, kStreamOffsets, r, 1, off_bytes);
  float off;
  std::memcpy(&off, off_bytes, 4);
  HostArray v{DType::f32, cols, std::vector<std::byte>(static_cast<std::size_t>(cols) * 4)};
  random_block(DType::f32, Fill::signed_unit, seed, kStreamValues, r * cols, cols, v.bytes.data());
  values.resize(static_cast<std::size_t>(cols));
  v.decode(0, cols, values.data());
  for (double& x : values) x = static_cast<double>(off) * kRowOffset + kSpread * x;
}

// The seeded input rows, rounded to the dtype, written to x; returns them for the check.
HostArray write_input(Simulation& sim, Ptr x, std::int64_t rows, std::int64_t cols, DType dtype) {
  const std::int64_t size = dtype_size(dtype);
  const std::uint64_t seed = sim.options().seed;
  HostArray x_host{dtype, rows * cols, {}};
  x_host.bytes.resize(static_cast<std::size_t>(rows * cols * size));
  std::vector<double> row;
  for (std::int64_t r = 0; r < rows; ++r) {
    input_row(seed, r, cols, row);
    const HostArray rounded = make_array(dtype, row);
    std::copy(rounded.bytes.begin(), rounded.bytes.end(), x_host.bytes.begin() + r * cols * size);
  }
  write_array(sim, x, x_host);
  return x_host;
}

// Rows of out (every row, or a sample) against an fp64 softmax of the input rows x_host.
void verify_softmax(Outcome& o, const Simulation& sim, const HostArray& x_host, Ptr out,
                    std::int64_t rows, std::int64_t cols) {
  const DType dtype = x_host.dtype;
  const std::int64_t size = dtype_size(dtype);
  const std::uint64_t seed = sim.options().seed;
  // The kernel rounds once to the dtype at the end (u_out |ref|); before that, in f32: x - max
  // is rounded (|x - max| <= 2 kSpread, so exp's argument errs by <= 8 u32, which exp turns
  // into a relative error of 8 u32), exp itself (<= 1 ulp), the sum of cols positive terms
  // (relative error <= cols u32) and the division (u32). Tolerance: u_out + (cols + 16) u32.
  // The scale is the dtype's smallest normal value: tiny probabilities underflow to
  // subnormals, which keep only absolute accuracy.
  const double tolerance = unit_roundoff(dtype) + static_cast<double>(cols + 16) * 0x1p-24;
  ErrorCheck check(min_normal(dtype));
  const std::int64_t count = elements_to_check(rows, cols);
  const auto checked_rows = sample_indices(rows, count, seed);
  std::vector<double> xr(static_cast<std::size_t>(cols)), ref(xr.size()), got(xr.size());
  for (const std::int64_t r : checked_rows) {
    x_host.decode(r * cols, cols, xr.data());
    const double m = *std::max_element(xr.begin(), xr.end());
    double s = 0;
    for (std::size_t j = 0; j < xr.size(); ++j) s += ref[j] = std::exp(xr[j] - m);
    for (double& v : ref) v /= s;
    read_array(sim, out + r * cols * size, dtype, cols).decode(0, cols, got.data());
    check.add_range(r * cols, got.data(), ref.data(), cols);
  }
  set_verification(
      o, check, tolerance,
      (static_cast<std::int64_t>(checked_rows.size()) == rows ? "all " : "a random sample of ") +
          std::to_string(checked_rows.size()) + " of the " + std::to_string(rows) +
          " rows (every element) against an fp64 softmax");
}

Outcome run_softmax_rows(Simulation& sim, const Params& p) {
  const std::int64_t rows = get_int(p, "rows"), cols = get_int(p, "cols");
  const std::int64_t block_rows_param = get_int(p, "block_rows");
  const DType dtype = get_dtype(p);
  const std::int64_t size = dtype_size(dtype);
  const auto& cfg = sim.config();
  const GridShape grid = launch_grid(sim);

  const std::uint64_t per_row = static_cast<std::uint64_t>(cols) * softmax_sram_per_element(dtype);
  require_sram(
      cfg, per_row, "a row of " + std::to_string(cols) + " columns",
      "use cols <= " + std::to_string(cfg.pe.sram_bytes / softmax_sram_per_element(dtype)));
  const std::int64_t block_rows =
      block_rows_param > 0 ? block_rows_param
                           : softmax_block_rows(cfg.pe.sram_bytes, rows, cols, dtype, grid.total());
  require_sram(
      cfg, static_cast<std::uint64_t>(block_rows) * per_row,
      "block_rows = " + std::to_string(block_rows) + " rows of " + std::to_string(cols) +
          " columns",
      "use block_rows <= " + std::to_string(cfg.pe.sram_bytes / per_row) + " (or 0: automatic)");

  // Padded to whole blocks: timing-only runs ignore masks (their tiles carry no values), so
  // there the last block's loads and stores cover all of its rows.
  const std::int64_t padded_rows = (rows + block_rows - 1) / block_rows * block_rows;
  const Placement where = block_placement(
      sim, p, static_cast<std::uint64_t>(block_rows * cols * size), "softmax_rows", grid.logical);
  const Ptr x = alloc_array(sim, dtype, padded_rows * cols, where),
            out = alloc_array(sim, dtype, padded_rows * cols, where);
  const bool timing_only = sim.options().timing_only;
  HostArray x_host{dtype, rows * cols, {}};
  if (!timing_only) x_host = write_input(sim, x, rows, cols, dtype);

  Outcome o;
  const auto bytes = static_cast<std::uint64_t>(rows * cols * size);
  o.inputs = {{x, bytes}};
  o.outputs = {{out, bytes}};
  o.run = sim.launch(softmax_rows, x, out, rows, cols, block_rows, dtype);
  const std::int64_t blocks = (rows + block_rows - 1) / block_rows;
  // max, subtract, exp, sum, divide: 5 operations per element.
  o.useful_flops = static_cast<std::uint64_t>(5 * rows * cols);
  o.useful_bytes = static_cast<std::uint64_t>(2 * rows * cols * size);
  o.details = {{"dtype", dtype_name(dtype)}, {"programs", grid.str()},
               {"block_rows", block_rows},   {"placement", where.str()},
               {"blocks", blocks},           {"masked_tail_rows", rows % block_rows}};
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  verify_softmax(o, sim, x_host, out, rows, cols);
  return o;
}

}  // namespace

KernelInfo softmax_rows_info() {
  return {
      .name = "softmax_rows",
      .description =
          "numerically stable row softmax, one program per block of rows (masked "
          "last block), blocks dealt over all programs",
      .params =
          {
              int_param("rows", 4096, 1, std::int64_t{1} << 28, "rows of x and out"),
              int_param("cols", 1024, 1, std::int64_t{1} << 20,
                        "columns (the softmax runs along them); a whole row is in SRAM"),
              int_param("block_rows", 0, 0, std::int64_t{1} << 20,
                        "rows per program and block; 0 = as many as fit in SRAM, at most an "
                        "even share of the rows"),
              dtype_param(DType::f32, {DType::f16, DType::bf16, DType::f32},
                          "element type of x and out (computed in f32)"),
              placement_param("x and out"),
          },
      .run = run_softmax_rows,
  };
}

}  // namespace cubesim::kernels
