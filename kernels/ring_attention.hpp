#pragma once
// ring_attention: sequence-parallel attention O = softmax(Q K^T * scale) V, scale =
// 1 / sqrt(head_dim), over P programs in a ring (Liu et al., "Ring Attention with Blockwise
// Transformers", 2023), Q, K, V and O seq x head_dim row-major.
//
// Sharding: the program at ring position r owns a block of sequence rows: with
// layout=contiguous the r-th of P nearly equal runs of rows (split_range), with layout=striped
// rows r, r + P, r + 2P, ... (Brandon et al., "Striped Attention", 2023). It loads its Q, K and
// V rows once from HBM and writes its rows of O once; no other program touches them.
//
// Steps: in step s = 0 .. P-1 the program holds the K/V block of ring position (r - s) mod P.
// It posts receives for the block of position (r - s - 1) mod P from its ring predecessor,
// forwards the block it holds to its successor, and meanwhile attends to the block it holds;
// the next block thus crosses the link while the current one is computed (double buffering:
// two K/V blocks are in SRAM). The ring is collectives::ring_order(), which follows the mesh in
// single hops and visits the cubes in order, so most hops are one mesh link.
//
// A K/V block travels as messages of chunk_rows rows of K, then the same rows of V (a message
// must fit one slot of system.messages), and the program attends to it tile by tile, a tile
// being a chunk of query_rows of its query rows against one such key chunk, with the online
// softmax of FlashAttention, kept per query chunk: for a tile of scores S = (Q_q * scale) K_c^T,
//   m' = max(m, rowmax S),  P = exp(S - m'),  l' = l exp(m - m') + rowsum P,
//   acc' = acc exp(m - m') + P V_c,
// and at the end O = acc / l. Both products run on the GEMM engine with their f32 results as
// tiles in SRAM; the softmax runs on the vector unit. While the vector unit works on tile t, the
// engine computes the scores of tile t + 1 and the P.V product of an earlier tile (acc takes it
// in only when its query chunk's next tile needs acc). Q is scaled once, in SRAM, in the input
// dtype; m, l and acc are f32, and P is cast to the input dtype for its GEMM.
//
// causal: query i attends to keys j <= i. A tile whose keys all lie after every query of its
// query chunk is skipped (no GEMM, no load, no vector work; the key chunk is still forwarded,
// so the ring keeps going); a tile that straddles the diagonal is masked with -inf. Each query
// chunk meets the key chunks of a block in order, and step 0 (the program's own block) comes
// first, whose first key every query of the block may see, so the running maxima are finite
// before any row meets a fully masked tile. With contiguous blocks the program at ring
// position r attends to r + 1 blocks (the last one does all the work) and its queries form one
// chunk. Striped rows give every program about half of every block: there query chunks are as
// long as key chunks, so the tiles above the diagonal of each block (in rows of the blocks) are
// skipped, and with k chunks to a block side (k + 1) / 2k of its tiles remain.

#include <cstdint>
#include <vector>

#include "components/dtype.hpp"
#include "emu/time.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

enum class SeqLayout { contiguous, striped };

// Where each program's time went, filled in by the kernel when the problem points to one
// (indexed by global program id): begin and end of the program, time blocked in tl.wait for
// K/V messages and in tl.send (the channel's slots full), and the tiles it attended to.
struct RingAttentionTimes {
  std::vector<emu::Tick> begin, end, recv_wait, send_wait;
  std::vector<std::int64_t> tiles;
};

struct RingAttentionProblem {
  Ptr q{}, k{}, v{}, out{};  // seq x head_dim, dtype
  std::int64_t seq = 0, head_dim = 0;
  bool causal = false;
  SeqLayout layout = SeqLayout::contiguous;
  DType dtype = DType::f16;
  std::vector<std::int64_t> ring;      // ring position -> global program id
  std::vector<std::int64_t> position;  // global program id -> ring position
  std::int64_t chunk_rows = 0;         // rows of K (and of V) per message
  std::int64_t query_rows = 0;         // rows of Q per tile of the attention
  std::int64_t window = 1;             // messages sent ahead of the compute (the slots)
  // Slots per channel a launch of it must limit its channels to (Simulation::
  // limit_message_slots): its blocks leave no room for its classes' windows; 0: none.
  std::uint32_t slot_cap = 0;
  RingAttentionTimes* times = nullptr;

  std::int64_t programs() const { return static_cast<std::int64_t>(ring.size()); }
  double scale() const;
  // The sequence rows of ring position r: first, first + stride, ... (count of them).
  struct Rows {
    std::int64_t first = 0, count = 0, stride = 1;
  };
  Rows rows(std::int64_t r) const;
  std::int64_t max_rows() const;  // the largest block
};

void ring_attention(tl::Context& tl, const RingAttentionProblem& p);

// The problem on `sim` for a launch over `grid` (the hardware grid or a sub-grid): Q, K, V and
// O interleaved across cubes, the ring, the message chunks and the query chunks. UsageError when it
// cannot run: fewer rows than programs, a K row larger than a message slot, or blocks that do not
// fit a PE's SRAM (saying what would).
RingAttentionProblem make_ring_attention(Simulation& sim, GridShape grid, std::int64_t seq,
                                         std::int64_t head_dim, bool causal, SeqLayout layout,
                                         DType dtype);
// Seeded random Q, K, V (Fill::signed_unit: never zero), as the harness writes them.
void write_ring_attention_inputs(Simulation& sim, const RingAttentionProblem& p,
                                 std::uint64_t seed);
// Checks O against fp64 attention of the inputs of `seed` and fills `out`'s verification.
void verify_ring_attention(Outcome& out, const Simulation& sim, const RingAttentionProblem& p,
                           std::uint64_t seed);
// The launch grid of `programs` programs on this system (0: every PE): a part of one cube's
// PEs, whole cubes of one SIP, or whole SIPs; UsageError otherwise.
GridShape ring_attention_grid(const components::SystemConfig& config, std::int64_t programs);

KernelInfo ring_attention_info();

}  // namespace cubesim::kernels
