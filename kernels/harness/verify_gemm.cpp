#include "kernels/harness/verify_gemm.hpp"

#include <algorithm>
#include <utility>

#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/backends/cpu_convert.hpp"

namespace cubesim::kernels {

namespace {
// C = A . B checked at the flat indices i * N + j in `samples` (sorted) against an fp64
// reference computed for just those elements (O(samples x K)); `result(i, j)` reads C.
ErrorCheck check_gemm(const HostArray& a, const HostArray& b, std::int64_t K, std::int64_t N,
                      const std::vector<std::int64_t>& samples,
                      const std::function<double(std::int64_t, std::int64_t)>& result,
                      double scale) {
  ErrorCheck check(scale);
  std::vector<double> row(static_cast<std::size_t>(K));
  std::int64_t row_of = -1;
  // One element against its reference; column j of B is b_col(k), k = 0..K-1.
  const auto add = [&](std::int64_t flat, const auto& b_col) {
    const std::int64_t i = flat / N, j = flat % N;
    if (i != row_of) {
      a.decode(i * K, K, row.data());
      row_of = i;
    }
    double ref = 0;
    for (std::int64_t k = 0; k < K; ++k) ref += row[static_cast<std::size_t>(k)] * b_col(k);
    check.add(flat, result(i, j), ref);
  };

  if (K * N <= (std::int64_t{1} << 22)) {  // small problems check every element: B^T, doubles
    const std::vector<double> bv = b.to_f64();
    std::vector<double> bt(bv.size());
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j)
        bt[static_cast<std::size_t>(j * K + k)] = bv[static_cast<std::size_t>(k * N + j)];
    for (const std::int64_t flat : samples) {
      const double* col = bt.data() + (flat % N) * K;
      add(flat, [col](std::int64_t k) { return col[k]; });
    }
    return check;
  }
  if (b.dtype == DType::i32) {  // element by element (no i32 problem this large is run)
    for (const std::int64_t flat : samples)
      add(flat, [&, j = flat % N](std::int64_t k) { return b.at(k * N + j); });
    return check;
  }
  // Samples taken a panel of adjacent columns of B at a time, each panel converted once
  // (floats are exact for f16, bf16 and f32): B is read once, a cache line per row of a panel,
  // instead of K scattered reads per sample (at 4096^3, 0.35 s of a 1.6 s run) or a transposed
  // copy of all of B (64 MiB of fresh pages: 0.07 s).
  constexpr std::int64_t kPanel = 32;
  std::vector<std::int64_t> order = samples;
  std::sort(order.begin(), order.end(), [N](std::int64_t x, std::int64_t y) {
    return std::pair(x % N / kPanel, x) < std::pair(y % N / kPanel, y);  // rows ascending
  });
  std::vector<float> panel(static_cast<std::size_t>(K * kPanel));
  std::int64_t panel_of = -1;
  for (const std::int64_t flat : order) {
    const std::int64_t j = flat % N, p = j / kPanel;
    if (p != panel_of) {
      const std::int64_t j0 = p * kPanel;
      backends::convert_block(b.dtype, b.bytes.data() + j0 * dtype_size(b.dtype), N, DType::f32,
                              panel.data(), kPanel, K, std::min(kPanel, N - j0));
      panel_of = p;
    }
    const float* col = panel.data() + (j - p * kPanel);
    add(flat, [col](std::int64_t k) { return double(col[k * kPanel]); });
  }
  return check;
}
}  // namespace
void verify_gemm(Outcome& out, const Simulation& sim, Ptr c, DType dtype, const HostArray& a,
                 const HostArray& b, std::int64_t M, std::int64_t K, std::int64_t N,
                 std::uint64_t seed,
                 const std::function<std::int64_t(std::int64_t, std::int64_t)>& index_of) {
  const std::int64_t count = elements_to_check(M * N, K);
  const auto samples = sample_indices(M * N, count, seed);
  const bool all = count == M * N;
  HostArray c_host;
  if (all) c_host = read_array(sim, c, dtype, M * N);
  const auto result = [&](std::int64_t i, std::int64_t j) {
    const std::int64_t at = index_of(i, j);
    return all ? c_host.at(at) : read_element(sim, c, at, dtype);
  };
  const ErrorCheck check = check_gemm(a, b, K, N, samples, result, dot_error_scale(K));
  set_verification(out, check, dot_tolerance(dtype, K),
                   (all ? "all " : "a random sample of ") + std::to_string(samples.size()) +
                       " of the " + std::to_string(M * N) +
                       " elements of C against an fp64 reference computed for them");
}

}  // namespace cubesim::kernels
