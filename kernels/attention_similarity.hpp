#pragma once
// attention_similarity: the similarity scores of multi-head-attention-optimization.md,
//
//   S[i, j] = mean over heads h of (q_i Wq_h^T) . (k_j Wk_h^T) / temperature
//           = (q_i Wq^T) . (k_j Wk^T) / (heads * temperature)
//
// for queries Q (num_queries x dim), keys K (num_keys x dim) and projections Wq, Wk
// (heads * head_dim x dim, row-major; rows h * head_dim ... are head h's, as in the seed's
// [numHeads * H, D] buffers). The second form is the seed's Strategy A: the per-head dot
// products summed over heads are one dot product over the concatenated heads.
//
// All the work is composite GEMMs; every projection uses trans_b (W is stored out x in) and the
// scores use trans_b for K^T. The scale 1 / (heads * temperature) is applied to each block of
// projected queries in SRAM (vector unit) before the scores GEMM, which reads that tile from
// SRAM and streams the projected keys from HBM. Scores are f32; projections are stored in the
// input dtype.
//
// Sharding: the query rows, and the key rows for the key projection, are split evenly over all
// programs (global program id over the three grid axes). A program writes its rows of S (whole
// rows, contiguous) and its rows of the projections, so every output byte has one writer.
//
// The kernels (the `variant` parameter of the harness picks one):
//   attention_similarity_fused     Strategy A in one launch: project this program's keys and
//                                  queries through all heads at once, barrier (every key
//                                  projected before any is read), then the scores.
//                                  "single" is this kernel with heads = 1.
//   attention_project_keys         Strategy D, first launch: project the keys once (a database
//   + attention_similarity_preprojected  is searched by many query batches), then per batch:
//                                  project the queries and compute the scores, no barrier.
//   attention_similarity_per_head  the seed's baseline: heads one after another, each with its
//                                  own small projections, barrier and scores GEMM accumulated
//                                  into S (head_dim-long dot products, S read and written
//                                  once per head). Projections are stored head-major:
//                                  q_proj[h][query][c], k_proj[h][key][c].

#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"
#include "triton_emu/launch/context.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim::kernels {

struct AttentionProblem {
  Ptr queries{}, keys{};   // num_queries x dim, num_keys x dim
  Ptr wq{}, wk{};          // heads * head_dim x dim each
  Ptr q_proj{}, k_proj{};  // workspace / output: num_queries (num_keys) x heads * head_dim
  Ptr scores{};            // num_queries x num_keys, f32
  std::int64_t num_queries = 0, num_keys = 0, dim = 0, heads = 1, head_dim = 0;
  double temperature = 1.0;
  DType dtype = DType::f16;  // of queries, keys, weights and projections

  std::int64_t proj_width() const { return heads * head_dim; }
  double scale() const { return 1.0 / (static_cast<double>(heads) * temperature); }
};

void attention_similarity_fused(tl::Context& tl, const AttentionProblem& p);
void attention_project_keys(tl::Context& tl, const AttentionProblem& p);
void attention_similarity_preprojected(tl::Context& tl, const AttentionProblem& p);
void attention_similarity_per_head(tl::Context& tl, const AttentionProblem& p);

KernelInfo attention_similarity_info();

}  // namespace cubesim::kernels
