#include "kernels/harness/verification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/harness/random_inputs.hpp"

namespace cubesim::kernels {

double relative_error(double value, double ref, double scale) {
  const double diff = std::abs(value - ref);
  if (std::isnan(diff)) return std::numeric_limits<double>::infinity();
  const double denom = std::max(std::abs(ref), scale);
  return denom > 0 ? diff / denom : diff;
}

void ErrorCheck::add(std::int64_t index, double value, double ref, double element_scale) {
  const double e = relative_error(value, ref, element_scale);
  ++checked;
  if (worst_index < 0 || e > max_rel) {
    max_rel = e;
    worst_index = index;
    worst_value = value;
    worst_ref = ref;
  }
}

namespace {
// The largest |v - r| / max(|r|, scale) over n elements, branch-free so that it vectorises;
// NaNs are counted apart (max() would drop them).
__attribute__((target_clones("avx2", "default"))) double max_relative_error(
    const double* values, const double* refs, std::int64_t n, double scale, std::int64_t* nans) {
  double worst = 0;
  std::int64_t nan_count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = std::abs(values[i] - refs[i]) / std::max(std::abs(refs[i]), scale);
    nan_count += e != e;
    worst = e > worst ? e : worst;
  }
  *nans = nan_count;
  return worst;
}
}  // namespace

void ErrorCheck::add_range(std::int64_t first_index, const double* values, const double* refs,
                           std::int64_t n) {
  if (n <= 0) return;
  std::int64_t nans = 0;
  const double worst = scale > 0 ? max_relative_error(values, refs, n, scale, &nans)
                                 : std::numeric_limits<double>::infinity();
  if (nans == 0 && worst <= max_rel && worst_index >= 0) {
    checked += static_cast<std::uint64_t>(n);
    return;
  }
  // A new worst element (or a NaN, or scale 0): find it the slow way.
  std::int64_t at = 0;
  double at_error = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = relative_error(values[i], refs[i], scale);
    if (e > at_error) {
      at_error = e;
      at = i;
    }
  }
  checked += static_cast<std::uint64_t>(n) - 1;
  add(first_index + at, values[at], refs[at]);
}

void ErrorCheck::merge(const ErrorCheck& o) {
  checked += o.checked;
  if (o.worst_index >= 0 && (worst_index < 0 || o.max_rel > max_rel)) {
    max_rel = o.max_rel;
    worst_index = o.worst_index;
    worst_value = o.worst_value;
    worst_ref = o.worst_ref;
  }
}

std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t count, std::uint64_t seed) {
  std::vector<std::int64_t> idx;
  if (n <= count) {
    idx.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
    return idx;
  }
  const std::uint64_t key = stream_key(seed, 0x5a3b1e);
  std::uint64_t draw = 0;
  while (static_cast<std::int64_t>(idx.size()) < count) {
    while (static_cast<std::int64_t>(idx.size()) < count)
      idx.push_back(
          static_cast<std::int64_t>(splitmix64(key + draw++) % static_cast<std::uint64_t>(n)));
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  }
  return idx;
}
std::int64_t elements_to_check(std::int64_t outputs, std::int64_t work_per_output) {
  const std::int64_t budget = std::int64_t{1} << 26;
  return outputs <= budget / std::max<std::int64_t>(work_per_output, 1)
             ? outputs
             : std::min<std::int64_t>(outputs, 4096);
}

void set_verification(Outcome& out, const ErrorCheck& check, double tolerance,
                      const std::string& what) {
  out.verified = check.max_rel <= tolerance;
  out.max_rel_error = check.max_rel;
  out.tolerance = tolerance;
  out.elements_checked = check.checked;
  nlohmann::json v = {
      {"checked", what}, {"elements_checked", check.checked}, {"error_scale", check.scale}};
  if (check.worst_index >= 0)
    v["worst"] = {{"index", check.worst_index},
                  {"value", check.worst_value},
                  {"reference", check.worst_ref},
                  {"rel_error", check.max_rel}};
  out.details["verification"] = std::move(v);
}

}  // namespace cubesim::kernels
