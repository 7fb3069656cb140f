#include "kernels/vector_add.hpp"

#include <algorithm>
#include <bit>
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

void vector_add(tl::Context& tl, Ptr x_ptr, Ptr y_ptr, Ptr out_ptr, std::int64_t n,
                std::int64_t block, DType dtype) {
  const std::int64_t pid = global_program_id(tl);
  const std::int64_t stride = total_programs(tl) * block;
  const std::int64_t size = dtype_size(dtype);
  for (std::int64_t start = pid * block; start < n; start += stride) {
    const std::int64_t at = start * size;
    if (start + block <= n) {
      // A whole chunk: its mask would be all ones, so skip building it. This keeps the loop
      // lean (two loads, one add, one store) in simulated and in wall-clock time alike.
      const tl::Tile x = tl.load(x_ptr + at, {block}, dtype);
      const tl::Tile y = tl.load(y_ptr + at, {block}, dtype);
      tl.store(out_ptr + at, x + y);
      continue;
    }
    // The tail: offs = start + arange(0, BLOCK), mask = offs < n. The offsets are kept relative
    // to the chunk (arange(0, BLOCK) < n - start), so i32 offsets never overflow for n >= 2^31.
    const tl::Tile mask = tl.arange(0, block) < static_cast<double>(n - start);
    const tl::Tile x = tl.load(x_ptr + at, {block}, dtype, {.mask = &mask});
    const tl::Tile y = tl.load(y_ptr + at, {block}, dtype, {.mask = &mask});
    tl.store(out_ptr + at, x + y, {.mask = &mask});
  }
}

void vector_add_pipelined(tl::Context& tl, Ptr x_ptr, Ptr y_ptr, Ptr out_ptr, std::int64_t n,
                          std::int64_t block, DType dtype) {
  const std::int64_t stride = total_programs(tl) * block;
  const std::int64_t size = dtype_size(dtype);
  struct Chunk {
    std::int64_t start = 0;
    tl::Tile mask;  // the tail's (offs < n); invalid for a whole chunk
    tl::LoadHandle x, y;
  };
  const auto issue = [&](std::int64_t start) {
    Chunk c{start, {}, {}, {}};
    tl::LoadOptions o;
    if (start + block > n) {
      c.mask = tl.arange(0, block) < static_cast<double>(n - start);
      o.mask = &c.mask;
    }
    c.x = tl.load_async(x_ptr + start * size, {block}, dtype, o);
    c.y = tl.load_async(y_ptr + start * size, {block}, dtype, o);
    return c;
  };
  std::int64_t start = global_program_id(tl) * block;
  if (start >= n) return;
  Chunk cur = issue(start);
  tl::StoreHandle stored;  // the previous chunk's sum, on its way to memory
  for (; start < n; start += stride) {
    Chunk next;
    if (start + stride < n) next = issue(start + stride);
    const tl::Tile x = tl.wait(cur.x), y = tl.wait(cur.y);
    const tl::Tile sum = x + y;
    if (stored.valid()) tl.wait(stored);  // at most one sum in flight: its SRAM comes back
    stored = tl.store_async(out_ptr + start * size, sum,
                            {.mask = cur.mask.valid() ? &cur.mask : nullptr});
    cur = std::move(next);
  }
  // The program ends when its last store has landed.
}

namespace {

constexpr std::uint64_t kStreamX = 1, kStreamY = 2;
constexpr std::int64_t kHostChunk = std::int64_t{1} << 20;  // elements per host-side pass
constexpr std::int64_t kTritonBlock = 1024;                 // Triton's tutorial BLOCK_SIZE
constexpr std::uint64_t kPipelinedChunks = 4;               // per program, at least, when block = 0

// block = 0: the largest power of two whose tiles (`block_bytes` per element of a block) fit the
// SRAM, but no larger than a program's share of n split in `chunks` (rounded up to a power of
// two), so that every program streams with as many bytes in flight as its SRAM allows, in at
// least that many chunks (a pipeline needs several to overlap).
std::int64_t automatic_block(std::uint64_t sram_bytes, std::int64_t block_bytes, std::int64_t n,
                             std::uint64_t programs, std::uint64_t chunks) {
  const auto fits = sram_bytes / static_cast<std::uint64_t>(block_bytes);
  const auto share = (static_cast<std::uint64_t>(n) + programs * chunks - 1) / (programs * chunks);
  return static_cast<std::int64_t>(
      std::max<std::uint64_t>(1, std::min(std::bit_floor(fits), std::bit_ceil(share))));
}

// How a run is laid out: the parameters, with block = 0 resolved.
struct VectorAddPlan {
  std::int64_t n = 0, size = 0, block = 0, chunks = 0;
  DType dtype = DType::f32;
  bool triton_grid = false, pipelined = false;
};

VectorAddPlan plan_vector_add(const Simulation& sim, const Params& p) {
  VectorAddPlan v;
  v.n = get_int(p, "n");
  v.dtype = get_dtype(p);
  v.size = dtype_size(v.dtype);
  v.triton_grid = get_string(p, "grid") == "triton";
  if (v.triton_grid)
    require_hardware_grid(sim, "vector_add with grid=triton",
                          "it launches cdiv(n, block) programs itself");
  v.pipelined = get_string(p, "pipeline") == "double";
  if (v.pipelined && v.triton_grid)
    throw UsageError(
        "vector_add: pipeline=double overlaps the chunks of one program, but with grid=triton "
        "every program has a single chunk; use grid=hardware (or --grid) with pipeline=double");
  // Tiles of a chunk: x, y and x + y (double-buffered: two of each), and the tail's i32
  // offsets and mask.
  const std::int64_t chunk_tiles = v.pipelined ? 6 : 3;
  v.block = get_int(p, "block");
  if (v.block == 0)
    v.block = v.triton_grid
                  ? kTritonBlock
                  : automatic_block(sim.config().pe.sram_bytes, chunk_tiles * v.size + 8, v.n,
                                    static_cast<std::uint64_t>(launch_grid(sim).total()),
                                    v.pipelined ? kPipelinedChunks : 1);
  v.chunks = (v.n + v.block - 1) / v.block;
  return v;
}

// Writes the seeded x and y in passes (they are regenerated for the check, so the host never
// holds more than a pass of them: n = 2^24 would otherwise keep 128+ MiB alive).
void write_inputs(Simulation& sim, const VectorAddPlan& v, Ptr x, Ptr y) {
  const std::uint64_t seed = sim.options().seed;
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min(v.n, kHostChunk) * v.size));
  for (std::int64_t begin = 0; begin < v.n; begin += kHostChunk) {
    const std::int64_t count = std::min(kHostChunk, v.n - begin);
    for (auto [ptr, stream] : {std::pair{x, kStreamX}, std::pair{y, kStreamY}}) {
      random_block(v.dtype, Fill::signed_unit, seed, stream, begin, count, buf.data());
      sim.write_bytes(ptr + begin * v.size, buf.data(), static_cast<std::uint64_t>(count * v.size));
    }
  }
}

// Every element of out against x + y in fp64, the inputs regenerated pass by pass.
void verify_sum(Outcome& o, const Simulation& sim, const VectorAddPlan& v, Ptr out) {
  // x and y are exactly representable, and with magnitudes in [1/16, 1] their sum has at most
  // 11 + 5 significant bits (f16; bf16 8 + 5), so it is exact in the vector unit's f32 and is
  // rounded once to the dtype: |error| <= u |x + y| (u = 2^-11 f16, 2^-8 bf16, 2^-24 f32),
  // and u * min_normal where the sum is subnormal, hence scale = the smallest normal value.
  // f32 inputs round once in f32 alike. i32 sums are exact (|x + y| <= 2000): tolerance 0.
  // The 1% on top only absorbs the rounding of the error computation itself.
  const DType dtype = v.dtype;
  const std::uint64_t seed = sim.options().seed;
  const double tolerance = unit_roundoff(dtype) * 1.01;
  ErrorCheck check(min_normal(dtype));
  HostArray xs{dtype, 0, {}}, ys{dtype, 0, {}}, got{dtype, 0, {}};
  std::vector<double> xv, yv, ov;
  for (std::int64_t begin = 0; begin < v.n; begin += kHostChunk) {
    const std::int64_t count = std::min(kHostChunk, v.n - begin);
    const auto bytes = static_cast<std::size_t>(count * v.size);
    for (auto* a : {&xs, &ys, &got}) {
      a->size = count;
      a->bytes.resize(bytes);
    }
    random_block(dtype, Fill::signed_unit, seed, kStreamX, begin, count, xs.bytes.data());
    random_block(dtype, Fill::signed_unit, seed, kStreamY, begin, count, ys.bytes.data());
    sim.read_bytes(out + begin * v.size, got.bytes.data(), bytes);
    xv.resize(static_cast<std::size_t>(count));
    yv.resize(xv.size());
    ov.resize(xv.size());
    xs.decode(0, count, xv.data());
    ys.decode(0, count, yv.data());
    got.decode(0, count, ov.data());
    for (std::size_t k = 0; k < xv.size(); ++k) xv[k] += yv[k];  // the reference
    check.add_range(begin, ov.data(), xv.data(), count);
  }
  set_verification(o, check, tolerance,
                   "all " + std::to_string(v.n) + " elements against x + y in fp64");
}

Outcome run_vector_add(Simulation& sim, const Params& p) {
  const VectorAddPlan v = plan_vector_add(sim, p);
  const std::int64_t n = v.n, size = v.size, block = v.block, chunks = v.chunks;
  const DType dtype = v.dtype;
  const auto& cfg = sim.config();
  const GridShape grid = v.triton_grid ? GridShape{chunks, 1, 1, true} : launch_grid(sim);

  // x, y and x + y; the tail chunk adds its i32 offsets and mask.
  const auto sram = static_cast<std::uint64_t>(block * (3 * size + 8));
  require_sram(cfg, sram,
               "block = " + std::to_string(block) + " (x, y and their sum in " +
                   std::string(dtype_name(dtype)) + ", and the tail's i32 offsets and mask)",
               "use block <= " +
                   std::to_string(cfg.pe.sram_bytes / static_cast<std::uint64_t>(3 * size + 8)));

  // The buffers are padded to whole blocks: timing-only runs ignore masks (their tiles carry no
  // values), so there the tail chunk's loads and stores cover the whole block.
  const std::int64_t padded = (n + block - 1) / block * block;
  const Placement where = block_placement(sim, p, static_cast<std::uint64_t>(block * size),
                                          "vector_add", v.triton_grid || grid.logical);
  const Ptr x = alloc_array(sim, dtype, padded, where), y = alloc_array(sim, dtype, padded, where),
            out = alloc_array(sim, dtype, padded, where);
  const bool timing_only = sim.options().timing_only;
  if (!timing_only) write_inputs(sim, v, x, y);

  Outcome o;
  const auto bytes = static_cast<std::uint64_t>(n * size);
  o.inputs = {{x, bytes}, {y, bytes}};
  o.outputs = {{out, bytes}};
  o.run = v.triton_grid
              ? sim.launch_on(Grid::logical(chunks), vector_add, x, y, out, n, block, dtype)
          : v.pipelined ? sim.launch(vector_add_pipelined, x, y, out, n, block, dtype)
                        : sim.launch(vector_add, x, y, out, n, block, dtype);
  o.useful_flops = static_cast<std::uint64_t>(n);
  o.useful_bytes = static_cast<std::uint64_t>(3 * n * size);
  o.details = {{"dtype", dtype_name(dtype)},
               {"block", block},
               {"pipeline", v.pipelined ? "double" : "none"},
               {"placement", where.str()},
               {"chunks", chunks},
               {"programs", grid.str()},
               {"chunks_per_program_max", (chunks + grid.total() - 1) / grid.total()}};
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  verify_sum(o, sim, v, out);
  return o;
}

}  // namespace

KernelInfo vector_add_info() {
  return {
      .name = "vector_add",
      .description =
          "Triton's vector-add tutorial: out = x + y in BLOCK-sized masked chunks, "
          "dealt to all programs in a grid-stride loop (grid=hardware) or one chunk per "
          "program on a logical grid of cdiv(n, block) programs (grid=triton)",
      .params =
          {
              int_param("n", std::int64_t{1} << 20, 1, std::int64_t{1} << 36,
                        "elements of x, y and out"),
              int_param("block", 0, 0, std::int64_t{1} << 24,
                        "elements per chunk (BLOCK); a program holds about block * (3 * element "
                        "size + 8) bytes of SRAM (pipeline=double: 6 * element size + 8); 0 = "
                        "the largest power of two that fits, at most a program's share of n "
                        "(pipeline=double: a quarter of it)"),
              dtype_param(DType::f32, {DType::f16, DType::bf16, DType::f32, DType::i32},
                          "element type"),
              choice_param("grid", "hardware", {"hardware", "triton"},
                           "hardware: one program per PE (or --grid), each looping over chunks; "
                           "triton: cdiv(n, block) programs of one chunk each (block 0 = 1024), "
                           "run in waves by the dispatcher"),
              placement_param("x, y and out"),
              choice_param("pipeline", "none", {"none", "double"},
                           "none: each chunk is loaded, added and stored in turn; double: the "
                           "next chunk's loads (tl.load_async) and this chunk's store "
                           "(tl.store_async) overlap the add (grid=hardware only)"),
          },
      .run = run_vector_add,
  };
}

}  // namespace cubesim::kernels
