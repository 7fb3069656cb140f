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
// must fit one slot of system.messages), and the program attends to a block chunk by chunk
// with the online softmax of FlashAttention: for a chunk of scores S = (Q * scale) K_c^T,
//   m' = max(m, rowmax S),  P = exp(S - m'),  l' = l exp(m - m') + rowsum P,
//   acc' = acc exp(m - m') + P V_c,
// and at the end O = acc / l. Both products run on the GEMM engine (f32 results into a
// scratch buffer of the program on its own cube's HBM, read back into SRAM, since a composite
// writes memory); the softmax runs on the vector unit. While the vector unit works on chunk c,
// the engine computes the scores of chunk c + 1 and the P.V product of chunk c - 1 (acc takes
// it in only when chunk c needs acc). Q is scaled once, in SRAM, in the input dtype; m, l and
// acc are f32, and P is cast to the input dtype for its GEMM.
//
// causal: query i attends to keys j <= i. A chunk whose keys all lie after every query of the
// program is skipped (but still forwarded, so the ring keeps going); a chunk that straddles the
// diagonal is masked with -inf. Step 0 (the program's own block) comes first and its first
// chunk holds the block's first key, which every query of the block may see, so the running
// maxima are finite before any row meets a fully masked chunk. With contiguous blocks the
// program at ring position r attends to r + 1 blocks (the last one does all the work); striped
// rows give every program about half of every block.

#include <cstdint>
#include <vector>

#include "components/dtype.hpp"
#include "emu/time.hpp"
#include "kernels/harness.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/ptr.hpp"

namespace cubesim::kernels {

enum class SeqLayout { contiguous, striped };

// Where each program's time went, filled in by the kernel when the problem points to one
// (indexed by global program id): begin and end of the program, time blocked in tl.wait for
// K/V messages and in tl.send (the channel's slots full), and the chunks it attended to.
struct RingAttentionTimes {
  std::vector<emu::Tick> begin, end, recv_wait, send_wait;
  std::vector<std::int64_t> chunks;
};

struct RingAttentionProblem {
  Ptr q{}, k{}, v{}, out{};  // seq x head_dim, dtype
  // Per program (global id): its scratch on its own cube's HBM, scratch_bytes() long.
  std::vector<Ptr> scratch;
  std::int64_t seq = 0, head_dim = 0;
  bool causal = false;
  SeqLayout layout = SeqLayout::contiguous;
  DType dtype = DType::f16;
  std::vector<std::int64_t> ring;      // ring position -> global program id
  std::vector<std::int64_t> position;  // global program id -> ring position
  std::int64_t chunk_rows = 0;         // rows of K (and of V) per message
  std::int64_t window = 1;             // messages sent ahead of the compute (the slots)
  RingAttentionTimes* times = nullptr;

  std::int64_t programs() const { return static_cast<std::int64_t>(ring.size()); }
  double scale() const;
  // The sequence rows of ring position r: first, first + stride, ... (count of them).
  struct Rows {
    std::int64_t first = 0, count = 0, stride = 1;
  };
  Rows rows(std::int64_t r) const;
  std::int64_t max_rows() const;  // the largest block
  // Two score buffers (max_rows x chunk_rows) and one P.V buffer (max_rows x head_dim), f32.
  std::uint64_t scratch_bytes() const;
};

void ring_attention(tl::Context& tl, const RingAttentionProblem& p);

// The problem on `sim` for a launch over `grid` (the hardware grid or a sub-grid): Q, K, V and
// O interleaved across cubes, each program's scratch on its cube, the ring and the message
// chunks. UsageError when it cannot run: fewer rows than programs, a K row larger than a
// message slot, or blocks that do not fit a PE's SRAM (saying what would).
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
