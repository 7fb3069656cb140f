#include "kernels/attention_similarity.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/harness/grid.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/sum_runs.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

namespace {

struct Shares {
  Range queries, keys;
};

Shares shares_of(const tl::Context& tl, const AttentionProblem& p) {
  const std::int64_t pid = global_program_id(tl), programs = total_programs(tl);
  return {split_range(p.num_queries, programs, pid), split_range(p.num_keys, programs, pid)};
}

// rows of x (n x dim) projected through `width` rows of w starting at w_row:
// out (rows x width, contiguous) = x[rows] . w[w_row : w_row + width]^T.
tl::Handle project(tl::Context& tl, const AttentionProblem& p, Ptr x, Range rows, Ptr w,
                   std::int64_t w_row, std::int64_t width, Ptr out) {
  const std::int64_t size = dtype_size(p.dtype);
  const tl::Ref a = tl.ref(x + rows.begin * p.dim * size, {rows.size(), p.dim}, p.dtype);
  const tl::Ref b = tl.ref(w + w_row * p.dim * size, {width, p.dim}, p.dtype);
  return tl.composite(tl::Op::gemm, a, b, out, {.trans_b = true, .out_dtype = std::nullopt});
}

// S[queries] (+)= (scale * qp) . kp^T, for this program's query rows: qp holds their
// projections (rows x width, contiguous), kp all keys' (num_keys x width). The projected queries
// are loaded and scaled in SRAM in blocks; block i + 1 is prepared while the engine computes
// block i (so up to three blocks are in SRAM: the scaled block in flight, the next block and
// its scaled copy).
void scores(tl::Context& tl, const AttentionProblem& p, Range queries, Ptr qp, Ptr kp,
            std::int64_t width, bool accumulate) {
  if (queries.empty()) return;
  const std::int64_t size = dtype_size(p.dtype);
  const auto row_bytes = static_cast<std::uint64_t>(width * size);
  const std::int64_t block = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(tl.sram_free() / (4 * row_bytes)), 1, queries.size());
  const tl::Ref keys = tl.ref(kp, {p.num_keys, width}, p.dtype);
  tl::Handle previous;
  for (std::int64_t r0 = 0; r0 < queries.size(); r0 += block) {
    const std::int64_t rows = std::min(block, queries.size() - r0);
    const tl::Tile q = tl.load(qp + r0 * width * size, {rows, width}, p.dtype) * p.scale();
    tl::Handle h =
        tl.composite(tl::Op::gemm, q, keys, p.scores + (queries.begin + r0) * p.num_keys * 4,
                     {.trans_b = true, .out_dtype = DType::f32, .accumulate = accumulate});
    if (previous.valid()) tl.wait(previous);
    previous = h;
  }
  tl.wait(previous);
}

void wait_all(tl::Context& tl, tl::Handle& a, tl::Handle& b) {
  if (a.valid()) tl.wait(a);
  if (b.valid()) tl.wait(b);
}

}  // namespace

void attention_similarity_fused(tl::Context& tl, const AttentionProblem& p) {
  const Shares s = shares_of(tl, p);
  const std::int64_t width = p.proj_width(), size = dtype_size(p.dtype);
  tl::Handle hk, hq;
  if (!s.keys.empty())
    hk = project(tl, p, p.keys, s.keys, p.wk, 0, width, p.k_proj + s.keys.begin * width * size);
  if (!s.queries.empty())
    hq = project(tl, p, p.queries, s.queries, p.wq, 0, width,
                 p.q_proj + s.queries.begin * width * size);
  wait_all(tl, hk, hq);
  tl.barrier();  // every key is projected before any program reads the projections
  scores(tl, p, s.queries, p.q_proj + s.queries.begin * width * size, p.k_proj, width, false);
}

void attention_project_keys(tl::Context& tl, const AttentionProblem& p) {
  const Shares s = shares_of(tl, p);
  if (s.keys.empty()) return;
  const std::int64_t width = p.proj_width(), size = dtype_size(p.dtype);
  tl::Handle h =
      project(tl, p, p.keys, s.keys, p.wk, 0, width, p.k_proj + s.keys.begin * width * size);
  tl.wait(h);
}

void attention_similarity_preprojected(tl::Context& tl, const AttentionProblem& p) {
  const Shares s = shares_of(tl, p);
  if (s.queries.empty()) return;
  const std::int64_t width = p.proj_width(), size = dtype_size(p.dtype);
  const Ptr qp = p.q_proj + s.queries.begin * width * size;
  tl::Handle h = project(tl, p, p.queries, s.queries, p.wq, 0, width, qp);
  tl.wait(h);
  scores(tl, p, s.queries, qp, p.k_proj, width, false);
}

void attention_similarity_per_head(tl::Context& tl, const AttentionProblem& p) {
  const Shares s = shares_of(tl, p);
  const std::int64_t hd = p.head_dim, size = dtype_size(p.dtype);
  for (std::int64_t h = 0; h < p.heads; ++h) {
    const Ptr kp = p.k_proj + h * p.num_keys * hd * size;
    const Ptr qp = p.q_proj + (h * p.num_queries + s.queries.begin) * hd * size;
    tl::Handle hk, hq;
    if (!s.keys.empty())
      hk = project(tl, p, p.keys, s.keys, p.wk, h * hd, hd, kp + s.keys.begin * hd * size);
    if (!s.queries.empty()) hq = project(tl, p, p.queries, s.queries, p.wq, h * hd, hd, qp);
    wait_all(tl, hk, hq);
    tl.barrier();  // head h's keys are all projected
    scores(tl, p, s.queries, qp, kp, hd, h > 0);
  }
}

namespace {

constexpr std::uint64_t kStreamQ = 1, kStreamK = 2, kStreamWq = 3, kStreamWk = 4;
const std::vector<std::string> kVariants = {"single", "multi_fused", "multi_preprojected",
                                            "multi_per_head"};

// Element index of projection (row n, column c) as the variant stores it.
std::int64_t proj_index(bool head_major, std::int64_t rows, std::int64_t width,
                        std::int64_t head_dim, std::int64_t n, std::int64_t c) {
  if (!head_major) return n * width + c;
  return ((c / head_dim) * rows + n) * head_dim + c % head_dim;
}

// Checks sampled elements of a projection x . w^T (x: rows x dim, w: width x dim) as stored.
ErrorCheck check_projection(const HostArray& x, const HostArray& w, const HostArray& stored,
                            std::int64_t rows, std::int64_t dim, std::int64_t width,
                            std::int64_t head_dim, bool head_major, std::uint64_t seed) {
  ErrorCheck check(0);
  const auto samples = sample_indices(rows * width, elements_to_check(rows * width, dim), seed);
  std::vector<double> xr(static_cast<std::size_t>(dim)), wr(xr.size());
  std::int64_t row_of = -1;
  for (const std::int64_t flat : samples) {
    const std::int64_t n = flat / width, c = flat % width;
    if (n != row_of) {
      x.decode(n * dim, dim, xr.data());
      row_of = n;
    }
    w.decode(c * dim, dim, wr.data());
    double ref = 0, squares = 0;
    for (std::size_t d = 0; d < xr.size(); ++d) {
      const double t = xr[d] * wr[d];
      ref += t;
      squares += t * t;
    }
    check.add(flat, stored.at(proj_index(head_major, rows, width, head_dim, n, c)), ref,
              std::sqrt(squares));
  }
  return check;
}

// The problem the parameters describe (buffers not yet allocated).
AttentionProblem read_problem(const Params& params, bool single) {
  AttentionProblem p;
  p.num_queries = get_int(params, "queries");
  p.num_keys = get_int(params, "keys");
  p.dim = get_int(params, "dim");
  p.heads = single ? 1 : get_int(params, "heads");
  p.head_dim = get_int(params, "head_dim");
  p.temperature = get_real(params, "temperature");
  p.dtype = get_dtype(params);
  return p;
}

// The seeded inputs the harness writes (left empty in timing-only runs).
struct AttentionInputs {
  HostArray q, k, wq, wk;
};

// Allocates every buffer of `p` and, unless timing-only, writes the random inputs.
AttentionInputs place_problem(Simulation& sim, AttentionProblem& p) {
  const std::int64_t width = p.proj_width();
  p.queries = alloc_array(sim, p.dtype, p.num_queries * p.dim);
  p.keys = alloc_array(sim, p.dtype, p.num_keys * p.dim);
  p.wq = alloc_array(sim, p.dtype, width * p.dim);
  p.wk = alloc_array(sim, p.dtype, width * p.dim);
  p.q_proj = alloc_array(sim, p.dtype, p.num_queries * width);
  p.k_proj = alloc_array(sim, p.dtype, p.num_keys * width);
  p.scores = alloc_array(sim, DType::f32, p.num_queries * p.num_keys);
  AttentionInputs in;
  if (sim.options().timing_only) return in;
  const std::uint64_t seed = sim.options().seed;
  in.q = random_array(p.dtype, p.num_queries * p.dim, seed, kStreamQ);
  in.k = random_array(p.dtype, p.num_keys * p.dim, seed, kStreamK);
  in.wq = random_array(p.dtype, width * p.dim, seed, kStreamWq);
  in.wk = random_array(p.dtype, width * p.dim, seed, kStreamWk);
  write_array(sim, p.queries, in.q);
  write_array(sim, p.keys, in.k);
  write_array(sim, p.wq, in.wq);
  write_array(sim, p.wk, in.wk);
  return in;
}

// Runs the variant's launches into o.run (the preprojected variant's two, summed).
void launch_variant(Simulation& sim, const AttentionProblem& p, const std::string& variant,
                    Outcome& o) {
  if (variant == "multi_preprojected") {
    RunResult keys_run = sim.launch(attention_project_keys, p);
    RunResult search = sim.launch(attention_similarity_preprojected, p);
    o.details["preprojection_sim_time_ps"] = keys_run.sim_time_ps;
    o.details["search_sim_time_ps"] = search.sim_time_ps;
    o.details["launches"] = "keys projected once, then the search (sim time is their sum)";
    o.run = sum_runs({std::move(keys_run), std::move(search)});
  } else if (variant == "multi_per_head") {
    o.run = sim.launch(attention_similarity_per_head, p);
  } else {
    o.run = sim.launch(attention_similarity_fused, p);
  }
}

// The scores from the stored projections qp and kp against fp64, with the scaled query block
// reproduced exactly as the vector unit makes it (an f32 product rounded to the dtype): the
// scores GEMM sums width products in f32 into an f32 result. Each element is measured against
// the root-sum-square of its products.
ErrorCheck check_scores(const Simulation& sim, const AttentionProblem& p, bool per_head,
                        const HostArray& qp, const HostArray& kp,
                        const std::vector<std::int64_t>& samples, bool all) {
  const std::int64_t nq = p.num_queries, nk = p.num_keys, width = p.proj_width();
  const auto sf = static_cast<float>(p.scale());
  std::vector<double> qs(static_cast<std::size_t>(width));
  HostArray s_host;
  if (all) s_host = read_array(sim, p.scores, DType::f32, nq * nk);
  ErrorCheck check(0);
  std::int64_t row_of = -1;
  for (const std::int64_t flat : samples) {
    const std::int64_t i = flat / nk, j = flat % nk;
    if (i != row_of) {
      for (std::int64_t c = 0; c < width; ++c) {
        const auto v = static_cast<float>(qp.at(proj_index(per_head, nq, width, p.head_dim, i, c)));
        qs[static_cast<std::size_t>(c)] = round_to(p.dtype, static_cast<double>(v * sf));
      }
      row_of = i;
    }
    double ref = 0, squares = 0;
    for (std::int64_t c = 0; c < width; ++c) {
      const double t = qs[static_cast<std::size_t>(c)] *
                       kp.at(proj_index(per_head, nk, width, p.head_dim, j, c));
      ref += t;
      squares += t * t;
    }
    const double got = all ? s_host.at(flat) : read_element(sim, p.scores, flat, DType::f32);
    check.add(flat, got, ref, std::sqrt(squares));
  }
  return check;
}

// Two stages, each a dot product checked against fp64 with dot_tolerance(): relative errors
// are measured against max(|ref|, the root-sum-square of the products), which is the size of
// a sum of products of random sign (the scale at which accumulation errors live).
void verify_attention(Outcome& o, const Simulation& sim, const AttentionProblem& p, bool per_head,
                      const AttentionInputs& in) {
  const std::int64_t nq = p.num_queries, nk = p.num_keys, width = p.proj_width();
  const std::uint64_t seed = sim.options().seed;
  // 1. The projections the kernel stored (dtype, rounded once from f32 sums of dim products).
  const HostArray qp = read_array(sim, p.q_proj, p.dtype, nq * width);
  const HostArray kp = read_array(sim, p.k_proj, p.dtype, nk * width);
  ErrorCheck proj = check_projection(in.q, in.wq, qp, nq, p.dim, width, p.head_dim, per_head, seed);
  proj.merge(check_projection(in.k, in.wk, kp, nk, p.dim, width, p.head_dim, per_head, seed + 1));
  const double proj_tolerance = dot_tolerance(p.dtype, p.dim);
  // 2. The scores from those stored projections.
  const std::int64_t count = elements_to_check(nq * nk, width);
  const auto samples = sample_indices(nq * nk, count, seed);
  const bool all = count == nq * nk;
  const ErrorCheck check = check_scores(sim, p, per_head, qp, kp, samples, all);
  set_verification(o, check, dot_tolerance(DType::f32, width),
                   (all ? "all " : "a random sample of ") + std::to_string(samples.size()) +
                       " of the " + std::to_string(nq * nk) +
                       " scores against fp64 from the stored projections, and samples of the "
                       "projections against fp64 (details.projections)");
  o.details["verification"]["error_scale"] = "root-sum-square of the products, per element";
  o.details["projections"] = {{"max_rel_error", proj.max_rel},
                              {"tolerance", proj_tolerance},
                              {"elements_checked", proj.checked}};
  o.elements_checked += proj.checked;
  if (proj.max_rel > proj_tolerance) o.verified = false;
}

Outcome run_attention(Simulation& sim, const Params& params) {
  const std::string variant = get_string(params, "variant");
  const bool single = variant == "single", per_head = variant == "multi_per_head";
  AttentionProblem p = read_problem(params, single);
  const std::int64_t size = dtype_size(p.dtype), width = p.proj_width();
  const GridShape grid = launch_grid(sim);
  require_one_wave(sim, "attention_similarity",
                   "its programs meet at tl.barrier once the keys are projected");
  // scores() needs a block of at least one projected query row: three copies of it plus room.
  require_sram(sim.config(), static_cast<std::uint64_t>(4 * (per_head ? p.head_dim : width) * size),
               "a block of one projected query (" + std::to_string(per_head ? p.head_dim : width) +
                   " values, 4 copies)",
               "use fewer heads or a smaller head_dim");
  const AttentionInputs inputs = place_problem(sim, p);

  Outcome o;
  const auto bytes = [&p](std::int64_t elems, DType t) {
    return static_cast<std::uint64_t>(elems * dtype_size(t));
  };
  o.inputs = {{p.queries, bytes(p.num_queries * p.dim, p.dtype)},
              {p.keys, bytes(p.num_keys * p.dim, p.dtype)},
              {p.wq, bytes(width * p.dim, p.dtype)},
              {p.wk, bytes(width * p.dim, p.dtype)}};
  o.outputs = {{p.scores, bytes(p.num_queries * p.num_keys, DType::f32)}};
  o.details = {{"variant", variant},        {"heads", p.heads},   {"head_dim", p.head_dim},
               {"projection_width", width}, {"scale", p.scale()}, {"dtype", dtype_name(p.dtype)},
               {"programs", grid.str()}};
  launch_variant(sim, p, variant, o);
  const std::int64_t nq = p.num_queries, nk = p.num_keys;
  o.useful_flops = static_cast<std::uint64_t>(2 * (nq + nk) * p.dim * width + 2 * nq * nk * width);
  o.useful_bytes =
      static_cast<std::uint64_t>(((nq + nk) * p.dim + 2 * width * p.dim) * size + nq * nk * 4);
  const double seconds = static_cast<double>(o.run.sim_time_ps) * 1e-12;
  o.details["pairs_per_second"] = seconds > 0 ? static_cast<double>(nq * nk) / seconds : 0.0;
  if (sim.options().timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }
  verify_attention(o, sim, p, per_head, inputs);
  return o;
}

}  // namespace

KernelInfo attention_similarity_info() {
  return {
      .name = "attention_similarity",
      .description =
          "multi-head attention similarity S = mean_h (Q Wq_h^T)(K Wk_h^T)^T / "
          "temperature with composite GEMMs: single head, fused projection, "
          "pre-projected keys, or heads one by one",
      .params =
          {
              choice_param("variant", "multi_fused", kVariants,
                           "single: one head; multi_fused: all heads projected at once "
                           "(Strategy A); multi_preprojected: keys projected in a launch of "
                           "their own (Strategy D); multi_per_head: heads one after another "
                           "(the baseline)"),
              int_param("queries", 1024, 1, std::int64_t{1} << 20, "query vectors (rows of Q)"),
              int_param("keys", 4096, 1, std::int64_t{1} << 20, "key vectors (rows of K)"),
              int_param("dim", 768, 1, std::int64_t{1} << 16, "input dimension D"),
              int_param("heads", 12, 1, 256, "heads of the multi_* variants (single uses 1)"),
              int_param("head_dim", 64, 1, 4096, "dimension of each head's projection"),
              real_param("temperature", 8.0, 1e-6, 1e6,
                         "scores are divided by heads x temperature (default sqrt(head_dim))"),
              dtype_param(DType::f16, {DType::f16, DType::bf16, DType::f32},
                          "element type of Q, K, the weights and the projections (scores: f32)"),
          },
      .run = run_attention,
  };
}

}  // namespace cubesim::kernels
