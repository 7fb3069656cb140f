#pragma once
// Random test inputs: magnitudes in [0.5, 1.5) with random signs. Never zero, so a value that
// is lost, misplaced or left unwritten shows; converted to T (f32, f16, bf16) from one draw.
#include <cstdint>
#include <random>
#include <vector>

namespace cubesim {

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);
  std::vector<T> v(n);
  for (auto& x : v) x = T((rng() & 1 ? 1.0f : -1.0f) * d(rng));
  return v;
}

}  // namespace cubesim
