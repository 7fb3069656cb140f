#pragma once
// Host-side arrays in a simulated dtype (the raw bytes as they are written to memory), exact
// element access, rounding to a dtype, and moving arrays in and out of simulated memory.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "components/dtype.hpp"
#include "triton_emu/launch/simulation.hpp"

namespace cubesim::kernels {

// A host-side array in a simulated dtype: raw bytes as they are written to memory.
struct HostArray {
  DType dtype = DType::f32;
  std::int64_t size = 0;
  std::vector<std::byte> bytes;

  double at(std::int64_t i) const;  // the exact value of element i
  // Elements [begin, begin + count) as doubles, exactly.
  void decode(std::int64_t begin, std::int64_t count, double* out) const;
  std::vector<double> to_f64() const;
};

// Values rounded to dtype (round to nearest even; integers truncate toward zero).
HostArray make_array(DType dtype, std::span<const double> values);
// Round one value to dtype and back, as storing it in memory would.
double round_to(DType dtype, double value);

// Simulated memory. In timing-only simulations write_array only checks the range.
Ptr alloc_array(Simulation& sim, DType dtype, std::int64_t n, Placement placement = {});
void write_array(Simulation& sim, Ptr p, const HostArray& a);
HostArray read_array(const Simulation& sim, Ptr p, DType dtype, std::int64_t n);
double read_element(const Simulation& sim, Ptr base, std::int64_t index, DType dtype);

}  // namespace cubesim::kernels
