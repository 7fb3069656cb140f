#include "kernels/ring_attention.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/collectives/ring_order.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/message_slots.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

double RingAttentionProblem::scale() const {
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

RingAttentionProblem::Rows RingAttentionProblem::rows(std::int64_t r) const {
  const std::int64_t n = programs();
  if (layout == SeqLayout::striped) return {r, (seq - r + n - 1) / n, n};
  const Range range = split_range(seq, n, r);
  return {range.begin, range.size(), 1};
}

std::int64_t RingAttentionProblem::max_rows() const {
  return rows(0).count;  // both layouts give the first positions the extra rows
}

namespace {

constexpr double kMinusInf = -std::numeric_limits<double>::infinity();

tl::Peer peer_of(const tl::Context& tl, std::int64_t g) {
  const std::int64_t pes = tl.num_programs(0), cubes = tl.num_programs(1);
  return tl::program(g % pes, (g / pes) % cubes, g / (pes * cubes));
}

// Rows [from, from + n) of a program's block of x (seq x head_dim): where they lie, and loaded
// as one tile.
tl::Ref rows_ref(const RingAttentionProblem& p, Ptr x, RingAttentionProblem::Rows rows,
                 std::int64_t from, std::int64_t n) {
  const std::int64_t d = p.head_dim, size = dtype_size(p.dtype);
  return {x + (rows.first + from * rows.stride) * d * size,
          {n, d},
          p.dtype,
          rows.stride == 1 ? 0 : rows.stride * d};
}
tl::Tile load_rows(tl::Context& tl, const RingAttentionProblem& p, Ptr x,
                   RingAttentionProblem::Rows rows, std::int64_t from, std::int64_t n) {
  const tl::Ref ref = rows_ref(p, x, rows, from, n);
  return tl.load(ref.ptr, ref.shape, ref.dtype, {.row_stride = ref.row_stride});
}

// A K/V block as the messages carry it: chunk c is rows [c * chunk_rows, ...) of K and of V.
struct Block {
  std::vector<tl::Tile> k, v;
};

// The running softmax of some query rows (f32): row maxima, denominators and the unnormalised
// output. The last tile's P.V product may still be on the GEMM engine: acc is brought up to
// date with it, and its tile's rescaling `alpha`, only when the rows' next tile needs acc, so
// that the engine computes it while the vector unit works on that tile's softmax.
struct Running {
  tl::Tile m, l, acc;
  tl::TileHandle pv;
  tl::Tile alpha;

  void add_pending(tl::Context& tl) {
    if (!pv.valid()) return;
    acc = acc * alpha.column() + tl.wait(pv);
    pv = {};
  }
};

// Sends a held block to the ring successor a few messages at a time, so that a send that has
// to wait for a credit waits between chunks of compute rather than before all of them.
class Forward {
 public:
  Forward(tl::Context& tl, const tl::Peer& to, const Block& block, emu::Tick* blocked)
      : tl_(tl), to_(to), block_(block), blocked_(blocked) {}
  void send(std::int64_t messages) {
    const auto total = static_cast<std::int64_t>(2 * block_.k.size());
    const emu::Tick t0 = tl_.now();
    for (; messages > 0 && next_ < total; --messages, ++next_) {
      const auto c = static_cast<std::size_t>(next_ / 2);
      tl_.send(to_, next_ % 2 == 0 ? block_.k[c] : block_.v[c]);
    }
    if (blocked_) *blocked_ += tl_.now() - t0;
  }
  void finish() { send(std::numeric_limits<std::int64_t>::max()); }

 private:
  tl::Context& tl_;
  tl::Peer to_;
  const Block& block_;
  emu::Tick* blocked_;
  std::int64_t next_ = 0;
};

// The causal masks of tiles that straddle the diagonal, made once and reused. Query and key
// rows of a program's blocks lie `stride` apart in both layouts, so key jj of a tile (first key
// key0) is visible to its query ii (first query query0) when key0 + stride jj <= query0 +
// stride ii, i.e. jj - ii <= shift = floor((query0 - key0) / stride): a mask depends only on
// the tile's shape and shift. Causal stripes meet two shifts (0 and -1: whether the key
// block's first row comes before the query block's or not), so a few masks serve every step.
class CausalMasks {
 public:
  static constexpr std::size_t kCapacity = 4;

  const tl::Tile& get(tl::Context& tl, std::int64_t rows, std::int64_t cols, std::int64_t query0,
                      std::int64_t key0, std::int64_t stride) {
    const std::int64_t diff = query0 - key0;
    const std::int64_t shift = diff / stride - (diff % stride < 0 ? 1 : 0);
    for (const Entry& e : entries_)
      if (e.rows == rows && e.cols == cols && e.shift == shift) return e.mask;
    if (entries_.size() == kCapacity) entries_.erase(entries_.begin());
    const tl::Tile mask =
        tl.arange(0, cols).row() <= (tl.arange(0, rows) + static_cast<double>(shift)).column();
    entries_.push_back({rows, cols, shift, mask});
    return entries_.back().mask;
  }

 private:
  struct Entry {
    std::int64_t rows, cols, shift;
    tl::Tile mask;
  };
  std::vector<Entry> entries_;
};

// A run of this program's query rows, [from, from + count) of its block: Q (scaled) and the
// online softmax of those rows.
struct QueryChunk {
  std::int64_t from = 0, count = 0;
  tl::Tile q;
  Running run;
};

// The online-softmax update of every query chunk with every key chunk of `block` (the keys at
// `keys`) that some query of that chunk may see: a (query chunk, key chunk) tile that causality
// masks entirely costs nothing, neither GEMM nor load nor vector work. Tiles go key chunk by key
// chunk, so each query chunk meets its key chunks in order and the block's first key (in step
// 0, its own, which all its queries see) before any other. `after_key_chunk` runs after the
// last tile of each key chunk that had one. Returns the tiles done.
std::int64_t attend(tl::Context& tl, const RingAttentionProblem& p,
                    RingAttentionProblem::Rows queries, RingAttentionProblem::Rows keys,
                    const Block& block, std::vector<QueryChunk>& chunks, CausalMasks& masks,
                    const std::function<void()>& after_key_chunk) {
  auto position = [](RingAttentionProblem::Rows rows, std::int64_t i) {
    return rows.first + i * rows.stride;
  };
  struct TileIndex {
    std::size_t key_chunk, query_chunk;
  };
  std::vector<TileIndex> todo;
  for (std::size_t c = 0; c < block.k.size(); ++c) {
    const std::int64_t first_key = position(keys, static_cast<std::int64_t>(c) * p.chunk_rows);
    for (std::size_t i = 0; i < chunks.size(); ++i)
      if (!p.causal || first_key <= position(queries, chunks[i].from + chunks[i].count - 1))
        todo.push_back({c, i});
  }
  if (todo.empty()) return 0;

  auto scores = [&](std::size_t t) {
    return tl.composite(tl::Op::gemm, chunks[todo[t].query_chunk].q, block.k[todo[t].key_chunk],
                        tl::to_tile, {.trans_b = true, .out_dtype = DType::f32});
  };
  tl::TileHandle pending[2];
  pending[0] = scores(0);
  for (std::size_t t = 0; t < todo.size(); ++t) {
    // The engine computes the next tile's scores while the vector unit works on these.
    if (t + 1 < todo.size()) pending[(t + 1) % 2] = scores(t + 1);
    tl::Tile s = tl.wait(pending[t % 2]);
    pending[t % 2] = {};
    const std::size_t c = todo[t].key_chunk;
    QueryChunk& chunk = chunks[todo[t].query_chunk];
    Running& run = chunk.run;
    const std::int64_t nq = chunk.count, n = block.k[c].shape().rows();
    const std::int64_t key0 = position(keys, static_cast<std::int64_t>(c) * p.chunk_rows);
    const std::int64_t key_last = key0 + (n - 1) * keys.stride;
    const std::int64_t query0 = position(queries, chunk.from);
    if (p.causal && key_last > query0)  // some key follows some query: mask
      s = tl::where(masks.get(tl, nq, n, query0, key0, keys.stride), s, kMinusInf);
    const tl::Tile m = tl::maximum(run.m, tl::max(s, 1));
    const tl::Tile alpha = tl::exp(run.m - m);  // 0 on the chunk's first tile (run.m is -inf)
    const tl::Tile e = tl::exp(s - m.column());
    run.l = run.l * alpha + tl::sum(e, 1);
    run.add_pending(tl);
    run.pv = tl.composite(tl::Op::gemm, p.dtype == DType::f32 ? e : e.to(p.dtype), block.v[c],
                          tl::to_tile, {.out_dtype = DType::f32});
    run.alpha = alpha;
    run.m = m;
    if (t + 1 == todo.size() || todo[t + 1].key_chunk != c) after_key_chunk();
  }
  return static_cast<std::int64_t>(todo.size());
}

// The program's query rows `mine`, scaled, in chunks of p.query_rows, each with a fresh online
// softmax (running max -inf, sum 0, acc 0).
std::vector<QueryChunk> load_query_chunks(tl::Context& tl, const RingAttentionProblem& p,
                                          RingAttentionProblem::Rows mine) {
  const std::int64_t nq = mine.count, d = p.head_dim;
  std::vector<QueryChunk> chunks;
  std::vector<tl::LoadHandle> q;
  for (std::int64_t from = 0; from < nq; from += p.query_rows) {
    const std::int64_t count = std::min(p.query_rows, nq - from);
    q.push_back(tl.load_async(rows_ref(p, p.q, mine, from, count)));
    chunks.push_back({from,
                      count,
                      {},
                      {tl.full({count}, kMinusInf, DType::f32),
                       tl.zeros({count}, DType::f32),
                       tl.zeros({count, d}, DType::f32),
                       {},
                       {}}});
  }
  for (std::size_t i = 0; i < q.size(); ++i) chunks[i].q = tl.wait(q[i]) * p.scale();
  return chunks;
}

// O of every query chunk (acc / l, in the problem's dtype) stored to its rows of p.out.
void store_output(tl::Context& tl, const RingAttentionProblem& p, RingAttentionProblem::Rows mine,
                  std::vector<QueryChunk>& chunks) {
  const std::int64_t d = p.head_dim;
  std::vector<tl::StoreHandle> stores;
  for (QueryChunk& chunk : chunks) {
    chunk.run.add_pending(tl);
    const tl::Tile o = chunk.run.acc / chunk.run.l.column();
    stores.push_back(
        tl.store_async(p.out + (mine.first + chunk.from * mine.stride) * d * dtype_size(p.dtype),
                       p.dtype == DType::f32 ? o : o.to(p.dtype),
                       {.row_stride = mine.stride == 1 ? 0 : mine.stride * d}));
  }
  for (tl::StoreHandle& h : stores) tl.wait(h);
}

}  // namespace

void ring_attention(tl::Context& tl, const RingAttentionProblem& p) {
  const std::int64_t g = global_program_id(tl), n = p.programs();
  if (total_programs(tl) != n)
    tl.fault("ring_attention: the problem's ring has " + std::to_string(n) +
             " programs but the launch has " + std::to_string(total_programs(tl)));
  const std::int64_t r = p.position[static_cast<std::size_t>(g)];
  const tl::Peer next = peer_of(tl, p.ring[static_cast<std::size_t>((r + 1) % n)]);
  const tl::Peer prev = peer_of(tl, p.ring[static_cast<std::size_t>((r + n - 1) % n)]);
  RingAttentionTimes* times = p.times;
  const auto at = static_cast<std::size_t>(g);
  emu::Tick recv_wait = 0, send_wait = 0;
  std::int64_t tiles = 0;
  if (times) times->begin[at] = tl.now();

  const RingAttentionProblem::Rows mine = p.rows(r);
  const std::int64_t nq = mine.count, d = p.head_dim, rc = p.chunk_rows;
  std::vector<QueryChunk> chunks = load_query_chunks(tl, p, mine);
  CausalMasks masks;
  Block held;
  for (std::int64_t c0 = 0; c0 < nq; c0 += rc) {
    held.k.push_back(load_rows(tl, p, p.k, mine, c0, std::min(rc, nq - c0)));
    held.v.push_back(load_rows(tl, p, p.v, mine, c0, std::min(rc, nq - c0)));
  }
  for (std::int64_t s = 0; s < n; ++s) {
    const bool last = s + 1 == n;
    // Post the receives of the next block first: each message is read out of its slot as soon
    // as it arrives, so the predecessor's sends never wait on this program's compute.
    std::vector<tl::RecvHandle> incoming;
    if (!last) {
      const std::int64_t rows = p.rows((r - s - 1 + 2 * n) % n).count;
      for (std::int64_t c0 = 0; c0 < rows; c0 += rc)
        for (int kv = 0; kv < 2; ++kv)
          incoming.push_back(tl.recv_async(prev, {std::min(rc, rows - c0), d}, p.dtype));
    }
    Forward forward(tl, next, held, times ? &send_wait : nullptr);
    if (!last) forward.send(p.window);
    tiles += attend(tl, p, mine, p.rows((r - s + n) % n), held, chunks, masks, [&] {
      if (!last) forward.send(2);
    });
    if (last) break;
    forward.finish();
    const emu::Tick t0 = tl.now();
    Block got;
    for (std::size_t i = 0; i < incoming.size(); ++i)
      (i % 2 == 0 ? got.k : got.v).push_back(tl.wait(incoming[i]));
    recv_wait += tl.now() - t0;
    held = std::move(got);
  }
  held = {};
  store_output(tl, p, mine, chunks);
  if (times) {
    times->end[at] = tl.now();
    times->recv_wait[at] = recv_wait;
    times->send_wait[at] = send_wait;
    times->tiles[at] = tiles;
  }
}

GridShape ring_attention_grid(const components::SystemConfig& config, std::int64_t programs) {
  const GridShape hw = hardware_grid(config);
  if (programs == 0) return hw;
  const std::int64_t per_sip = hw.pes * hw.cubes;
  if (programs >= 1 && programs <= hw.pes) return {programs, 1, 1};
  if (programs % hw.pes == 0 && programs <= per_sip) return {hw.pes, programs / hw.pes, 1};
  if (programs % per_sip == 0 && programs <= hw.total())
    return {hw.pes, hw.cubes, programs / per_sip};
  throw UsageError("programs = " + std::to_string(programs) +
                   ": a ring runs on part of one cube (1 to " + std::to_string(hw.pes) +
                   "), on whole cubes of one SIP (a multiple of " + std::to_string(hw.pes) +
                   " up to " + std::to_string(per_sip) + ") or on whole SIPs (a multiple of " +
                   std::to_string(per_sip) + " up to " + std::to_string(hw.total()) +
                   "); use one of those, or 0 for every PE");
}

namespace {

// SRAM a program holds at its peak: Q and its scaled copy, two K/V blocks (the one it holds and
// the one arriving), acc and the pending P.V product of every query chunk with one chunk's
// rescaled acc and its sum (f32), two tiles of scores (the one worked on and the next, which
// the engine writes) with the masked copy, shifted copy and exponentials, and the previous
// tile's exponentials that its P.V GEMM still reads (f32 each), the causal masks kept (bool), a
// few row vectors, and the inbound channel's slots when they live in PE SRAM.
std::uint64_t sram_needed(const components::SystemConfig& cfg, std::int64_t rows,
                          std::int64_t query_rows, std::int64_t chunk_rows, std::int64_t d,
                          DType dtype, GridShape grid, std::uint32_t slot_cap) {
  const auto size = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t bytes =
      2 * rows * d * size + 4 * rows * d * size + 4 * rows * d * 4 +
      7 * query_rows * chunk_rows * 4 +
      static_cast<std::int64_t>(CausalMasks::kCapacity) * query_rows * chunk_rows + 8 * rows * 4;
  const std::uint64_t slots = cfg.messages.memory == components::SlotMemory::pe_sram
                                  ? collectives::message_windows(cfg, grid, slot_cap).largest_bytes
                                  : 0;
  return static_cast<std::uint64_t>(bytes) + slots;
}

constexpr std::uint64_t kStreamQ = 1, kStreamK = 2, kStreamV = 3;
constexpr std::int64_t kDefaultRowsPerProgram = 64;

}  // namespace

RingAttentionProblem make_ring_attention(Simulation& sim, GridShape grid, std::int64_t seq,
                                         std::int64_t head_dim, bool causal, SeqLayout layout,
                                         DType dtype) {
  const auto& cfg = sim.config();
  RingAttentionProblem p;
  p.seq = seq;
  p.head_dim = head_dim;
  p.causal = causal;
  p.layout = layout;
  p.dtype = dtype;
  const std::int64_t n = grid.total();
  if (seq < n)
    throw UsageError("seq = " + std::to_string(seq) + " is shorter than the ring of " + grid.str() +
                     ": every program needs at least one row; use seq >= " + std::to_string(n) +
                     ", or fewer programs (-p programs=N)");
  const auto row_bytes = static_cast<std::uint64_t>(head_dim) * dtype_size(dtype);
  const collectives::MessageWindows windows = collectives::message_windows(cfg, grid);
  if (row_bytes > windows.smallest_slot)
    throw UsageError(
        "a row of K (head_dim = " + std::to_string(head_dim) + " " +
        std::string(dtype_name(dtype)) + " values, " + std::to_string(row_bytes) +
        " bytes) does not fit a message slot of " + std::to_string(windows.smallest_slot) +
        " bytes; use head_dim <= " + std::to_string(windows.smallest_slot / dtype_size(dtype)) +
        ", or larger slots (--set system.messages.slot_KiB=...)");
  p.ring = collectives::ring_order(cfg, grid);
  p.position.assign(p.ring.size(), 0);
  for (std::size_t i = 0; i < p.ring.size(); ++i)
    p.position[static_cast<std::size_t>(p.ring[i])] = static_cast<std::int64_t>(i);
  const std::int64_t rows = p.max_rows();
  p.chunk_rows = std::min(rows, static_cast<std::int64_t>(windows.smallest_slot / row_bytes));
  // Query chunks smaller than the block cost every tile two GEMM start-ups and the vector
  // unit's latency per operation; they pay off where the mask removes tiles from most blocks,
  // as with causal stripes (every block straddles the diagonal). Square tiles put the diagonal
  // on tile corners, so that about half of every block's tiles go. With contiguous blocks only
  // the program's own block straddles it, and the last program attends to every other block
  // in full: one query chunk, and whole key chunks skipped, cost it least.
  p.query_rows = causal && layout == SeqLayout::striped ? p.chunk_rows : rows;
  std::uint64_t sram = sram_needed(cfg, rows, p.query_rows, p.chunk_rows, head_dim, dtype, grid, 0);
  // An inbound channel's window in PE SRAM that leaves too little for the blocks (an inter-SIP
  // one covers a long credit loop): the most slots per channel that fit, down to 2.
  if (sram > cfg.pe.sram_bytes && cfg.messages.memory == components::SlotMemory::pe_sram) {
    const auto need = [&](std::uint32_t slots) {
      return sram_needed(cfg, rows, p.query_rows, p.chunk_rows, head_dim, dtype, grid, slots);
    };
    p.slot_cap = most_slots_that_fit(
        windows.most_slots, [&](std::uint32_t slots) { return need(slots) <= cfg.pe.sram_bytes; });
    sram = need(p.slot_cap);
  }
  p.window = collectives::message_windows(cfg, grid, p.slot_cap).fewest_slots;
  require_sram(cfg, sram,
               "blocks of " + std::to_string(rows) + " rows of head_dim = " +
                   std::to_string(head_dim) + " (Q, two K/V blocks, the f32 output and scores)",
               "use a shorter seq or more programs" +
                   std::string(cfg.messages.memory == components::SlotMemory::pe_sram
                                   ? ", or message slots outside the PE (--set "
                                     "system.messages.memory=cube_sram or hbm)"
                                   : ""));

  // Each program receives from its ring predecessor only: one channel into each PE of a cube.
  if (cfg.messages.memory != components::SlotMemory::pe_sram)
    require_message_slots(cfg, static_cast<std::uint64_t>(grid.pes),
                          static_cast<std::uint64_t>(4 * seq * head_dim) * dtype_size(dtype),
                          "ring_attention's ring (slots in " +
                              std::string(components::slot_memory_name(cfg.messages.memory)) + ")");
  const std::int64_t elems = seq * head_dim;
  p.q = alloc_array(sim, dtype, elems);
  p.k = alloc_array(sim, dtype, elems);
  p.v = alloc_array(sim, dtype, elems);
  p.out = alloc_array(sim, dtype, elems);
  return p;
}

void write_ring_attention_inputs(Simulation& sim, const RingAttentionProblem& p,
                                 std::uint64_t seed) {
  const std::int64_t elems = p.seq * p.head_dim;
  write_array(sim, p.q, random_array(p.dtype, elems, seed, kStreamQ));
  write_array(sim, p.k, random_array(p.dtype, elems, seed, kStreamK));
  write_array(sim, p.v, random_array(p.dtype, elems, seed, kStreamV));
}

void verify_ring_attention(Outcome& out, const Simulation& sim, const RingAttentionProblem& p,
                           std::uint64_t seed) {
  const std::int64_t seq = p.seq, d = p.head_dim, elems = seq * d;
  const HostArray q = random_array(p.dtype, elems, seed, kStreamQ);
  const HostArray k = random_array(p.dtype, elems, seed, kStreamK);
  const HostArray v = random_array(p.dtype, elems, seed, kStreamV);
  const HostArray o = read_array(sim, p.out, p.dtype, elems);
  // Every row when the fp64 reference costs at most 2^28 multiply-adds, else a sample of rows
  // that does (at least 16).
  const std::int64_t per_row = 2 * seq * d;
  const std::int64_t count = std::min(
      seq,
      std::max<std::int64_t>(16, (std::int64_t{1} << 28) / std::max<std::int64_t>(per_row, 1)));
  const auto rows = sample_indices(seq, count, seed);

  // The reference takes Q scaled as the kernel scales it in SRAM (an f32 product rounded to
  // the dtype), so what is left to bound is the kernel's f32 arithmetic and its roundings to
  // the dtype, relative to max(|O|, sum_j p_j |v_j| / sum_j p_j): the weighted mean of |v|,
  // the size at which a sum of values of random sign keeps only absolute accuracy.
  //   - P is cast to the dtype for its GEMM: u_dt; O is stored in the dtype: u_dt.
  //   - a score errs by at most d u32 times sum |q k| <= d u32 * scale * d = d sqrt(d) u32, and
  //     exp turns that absolute error into a relative one of P; exp itself, x - m and the
  //     rescalings exp(m - m') (once per chunk, at most seq chunks) add a few u32 each;
  //   - l is a sum of seq positive terms (seq u32), acc sums seq products of P and v, each
  //     partial sum within the error scale (seq u32 of it).
  // Tolerance: 2 u_dt + (d sqrt(d) + 4 seq + 16) u32. Worst cases, so far above the errors
  // seen; a wrong block, a missed step or a missing mask errs by O(1).
  const double u32 = unit_roundoff(DType::f32);
  const double tolerance =
      2 * unit_roundoff(p.dtype) + (static_cast<double>(d) * std::sqrt(static_cast<double>(d)) +
                                    4.0 * static_cast<double>(seq) + 16) *
                                       u32;
  const auto sf = static_cast<float>(p.scale());
  std::vector<double> qs(static_cast<std::size_t>(d)), row(qs.size()),
      s(static_cast<std::size_t>(seq));
  std::vector<double> ref(qs.size()), mag(qs.size()), got(qs.size());
  ErrorCheck check(0);
  for (const std::int64_t i : rows) {
    q.decode(i * d, d, row.data());
    for (std::int64_t c = 0; c < d; ++c) {
      const auto x = static_cast<float>(row[static_cast<std::size_t>(c)]);
      qs[static_cast<std::size_t>(c)] = round_to(p.dtype, static_cast<double>(x * sf));
    }
    const std::int64_t keys = p.causal ? i + 1 : seq;
    double m = kMinusInf;
    for (std::int64_t j = 0; j < keys; ++j) {
      k.decode(j * d, d, row.data());
      const double dot = std::inner_product(qs.begin(), qs.end(), row.begin(), 0.0);
      s[static_cast<std::size_t>(j)] = dot;
      m = std::max(m, dot);
    }
    std::fill(ref.begin(), ref.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    double l = 0;
    for (std::int64_t j = 0; j < keys; ++j) {
      const double e = std::exp(s[static_cast<std::size_t>(j)] - m);
      l += e;
      v.decode(j * d, d, row.data());
      for (std::size_t c = 0; c < row.size(); ++c) {
        ref[c] += e * row[c];
        mag[c] += e * std::abs(row[c]);
      }
    }
    o.decode(i * d, d, got.data());
    for (std::size_t c = 0; c < ref.size(); ++c) {
      check.add(i * d + static_cast<std::int64_t>(c), got[c], ref[c] / l, mag[c] / l);
    }
  }
  set_verification(out, check, tolerance,
                   (count == seq ? "all " : "a random sample of ") + std::to_string(count) +
                       " of the " + std::to_string(seq) +
                       " rows of O (every element) against fp64 attention of the same inputs");
  out.details["verification"]["error_scale"] = "max(|O|, sum_j p_j |v_j| / sum_j p_j) per element";
}

namespace {

// How many ring hops stay in a cube's mesh, cross UCIe between cubes, or cross SIPs.
nlohmann::json hop_kinds(const RingAttentionProblem& p, GridShape grid) {
  std::int64_t mesh = 0, ucie = 0, inter_sip = 0;
  const std::int64_t n = p.programs(), per_sip = grid.pes * grid.cubes;
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t a = p.ring[static_cast<std::size_t>(r)];
    const std::int64_t b = p.ring[static_cast<std::size_t>((r + 1) % n)];
    if (a / per_sip != b / per_sip)
      ++inter_sip;
    else if (a / grid.pes != b / grid.pes)
      ++ucie;
    else
      ++mesh;
  }
  return {{"mesh", mesh}, {"ucie", ucie}, {"inter_sip", inter_sip}};
}

// The most bytes a program sends: the program at ring position r forwards every block but that
// of position r + 1 (the last it receives), K and V.
std::int64_t bytes_sent_max(const RingAttentionProblem& p) {
  const std::int64_t n = p.programs(), d = p.head_dim, size = dtype_size(p.dtype);
  std::int64_t sent_max = 0;
  for (std::int64_t r = 0; r < n; ++r)
    sent_max = std::max(sent_max, 2 * (p.seq - p.rows((r + 1) % n).count) * d * size);
  return sent_max;
}

// Where the ring's time went, from each program's times: the ring's span, the mean program's
// waits and work, and those of the program that finished last.
void add_time_details(Outcome& o, const RingAttentionProblem& p, const RingAttentionTimes& times) {
  const std::int64_t n = p.programs();
  const emu::Tick start = *std::min_element(times.begin.begin(), times.begin.end());
  const emu::Tick finish = *std::max_element(times.end.begin(), times.end.end());
  const auto critical = static_cast<std::size_t>(
      std::max_element(times.end.begin(), times.end.end()) - times.end.begin());
  double recv_mean = 0, send_mean = 0, busy_mean = 0;
  for (std::size_t g = 0; g < times.end.size(); ++g) {
    recv_mean += static_cast<double>(times.recv_wait[g]) / static_cast<double>(n);
    send_mean += static_cast<double>(times.send_wait[g]) / static_cast<double>(n);
    busy_mean += static_cast<double>(times.end[g] - times.begin[g] - times.recv_wait[g] -
                                     times.send_wait[g]) /
                 static_cast<double>(n);
  }
  const auto [tiles_min, tiles_max] = std::minmax_element(times.tiles.begin(), times.tiles.end());
  o.details["tiles_attended"] = {{"min", *tiles_min}, {"max", *tiles_max}};
  o.details["ring_time_ps"] = finish - start;
  o.details["mean_per_program_ps"] = {
      {"recv_wait", recv_mean}, {"send_wait", send_mean}, {"compute_and_memory", busy_mean}};
  o.details["last_program"] = {
      {"ring_position", p.position[critical]},
      {"recv_wait_ps", times.recv_wait[critical]},
      {"send_wait_ps", times.send_wait[critical]},
      {"compute_and_memory_ps", times.end[critical] - times.begin[critical] -
                                    times.recv_wait[critical] - times.send_wait[critical]}};
  o.details["time_note"] =
      "recv_wait: blocked in tl.wait for the next K/V block after attending to the current "
      "one; send_wait: in tl.send (slots full); compute_and_memory: the rest (GEMMs, vector "
      "math, loads and stores)";
}

Outcome run_ring_attention(Simulation& sim, const Params& params) {
  require_hardware_grid(sim, "ring_attention",
                        "K and V blocks travel between neighbouring programs' PEs; its `programs` "
                        "parameter picks a sub-grid");
  const auto& cfg = sim.config();
  const GridShape grid = ring_attention_grid(cfg, get_int(params, "programs"));
  const bool causal = params.at("causal").get<bool>();
  const SeqLayout layout =
      get_string(params, "layout") == "striped" ? SeqLayout::striped : SeqLayout::contiguous;
  // seq = 0: a block of kDefaultRowsPerProgram rows per program (weak scaling: the sequence
  // grows with the ring, as sequence parallelism is used).
  const std::int64_t seq_param = get_int(params, "seq");
  const std::int64_t seq = seq_param > 0 ? seq_param : kDefaultRowsPerProgram * grid.total();
  RingAttentionProblem p = make_ring_attention(sim, grid, seq, get_int(params, "head_dim"), causal,
                                               layout, get_dtype(params));
  const bool timing_only = sim.options().timing_only;
  const std::uint64_t seed = sim.options().seed;
  if (!timing_only) write_ring_attention_inputs(sim, p, seed);

  const std::int64_t n = p.programs();
  RingAttentionTimes times;
  for (auto* v : {&times.begin, &times.end, &times.recv_wait, &times.send_wait})
    v->assign(static_cast<std::size_t>(n), 0);
  times.tiles.assign(static_cast<std::size_t>(n), 0);
  p.times = &times;
  Outcome o;
  const auto bytes = static_cast<std::uint64_t>(p.seq * p.head_dim * dtype_size(p.dtype));
  o.inputs = {{p.q, bytes}, {p.k, bytes}, {p.v, bytes}};
  o.outputs = {{p.out, bytes}};
  const MessageSlotLimit limit(sim, p.slot_cap);  // the slots that fitted
  o.run = sim.launch_on(Grid{.pes = grid.pes, .cubes = grid.cubes, .sips = grid.sips},
                        ring_attention, p);
  p.times = nullptr;

  const std::int64_t d = p.head_dim, size = dtype_size(p.dtype);
  o.useful_flops = static_cast<std::uint64_t>(4 * seq * seq * d / (causal ? 2 : 1));
  o.useful_bytes = static_cast<std::uint64_t>(4 * seq * d * size);
  const std::int64_t chunks_per_block = (p.max_rows() + p.chunk_rows - 1) / p.chunk_rows;
  o.details = {{"programs", grid.str()},
               {"slots_per_channel_limit", p.slot_cap},
               {"seq", seq},
               {"layout", layout == SeqLayout::striped ? "striped" : "contiguous"},
               {"causal", causal},
               {"dtype", dtype_name(p.dtype)},
               {"scale", p.scale()},
               {"steps", n},
               {"block_rows", p.max_rows()},
               {"chunk_rows", p.chunk_rows},
               {"messages_per_step", 2 * chunks_per_block},
               {"bytes_sent_per_program", bytes_sent_max(p)},
               {"ring_hops", hop_kinds(p, grid)},
               {"query_rows", p.query_rows}};
  add_time_details(o, p, times);
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  verify_ring_attention(o, sim, p, seed);
  return o;
}

}  // namespace

KernelInfo ring_attention_info() {
  return {
      .name = "ring_attention",
      .description =
          "sequence-parallel attention softmax(Q K^T / sqrt(head_dim)) V over a ring of "
          "programs: K/V blocks passed around the ring with tl.send/tl.recv_async while each "
          "program updates an online softmax of its query rows (composite GEMMs + vector "
          "math)",
      .params =
          {
              int_param("seq", 0, 0, std::int64_t{1} << 20,
                        "sequence length (rows of Q, K, V and O), at least the programs; 0 = " +
                            std::to_string(kDefaultRowsPerProgram) + " rows per program"),
              int_param("head_dim", 64, 1, 4096,
                        "columns of Q, K, V and O; a row of K must fit a message slot"),
              bool_param("causal", false,
                         "query i attends to keys j <= i only; tiles that the mask removes "
                         "entirely are skipped"),
              choice_param("layout", "contiguous", {"contiguous", "striped"},
                           "which rows a program owns: contiguous: the r-th run of seq / P "
                           "rows; striped: rows r, r + P, ... (balances causal work)"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of Q, K, V and O (softmax and accumulation in f32)"),
              int_param("programs", 0, 0, std::int64_t{1} << 20,
                        "programs in the ring: 0 = every PE; else part of one cube, whole "
                        "cubes of a SIP, or whole SIPs"),
          },
      .run = run_ring_attention,
  };
}

}  // namespace cubesim::kernels
