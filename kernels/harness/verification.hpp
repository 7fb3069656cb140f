#pragma once
// Checking a result against a reference: relative errors, the worst element over those
// checked, which elements to check, and the verdict in a kernel's Outcome.

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry.hpp"

namespace cubesim::kernels {

// |value - ref| / max(|ref|, scale): relative error, measured against `scale` where |ref| is
// smaller (cancellation and underflow leave only absolute accuracy there).
double relative_error(double value, double ref, double scale);

// The worst relative error over the elements checked.
struct ErrorCheck {
  double scale = 0;
  double max_rel = 0;
  std::uint64_t checked = 0;
  std::int64_t worst_index = -1;
  double worst_value = 0, worst_ref = 0;

  explicit ErrorCheck(double s) : scale(s) {}
  void add(std::int64_t index, double value, double ref) { add(index, value, ref, scale); }
  void add(std::int64_t index, double value, double ref, double element_scale);
  // Elements first_index, first_index + 1, ... with the common scale (a tight loop).
  void add_range(std::int64_t first_index, const double* values, const double* refs,
                 std::int64_t n);
  void merge(const ErrorCheck& other);
};

// Indices to check of an output of n elements: all of them when n <= count, else `count`
// distinct indices drawn from (seed), sorted.
std::vector<std::int64_t> sample_indices(std::int64_t n, std::int64_t count, std::uint64_t seed);

// How many output elements a harness checks: all of them when the reference costs at most
// 2^26 multiply-adds (outputs x work_per_output), else a sample of 4096.
std::int64_t elements_to_check(std::int64_t outputs, std::int64_t work_per_output);

// Fills verified / max_rel_error / tolerance / elements_checked and details["verification"]
// (what was checked, against what, and the worst element).
void set_verification(Outcome& out, const ErrorCheck& check, double tolerance,
                      const std::string& what);

}  // namespace cubesim::kernels
