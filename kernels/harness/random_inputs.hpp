#pragma once
// Seeded random inputs in any dtype, counter-based: element i of an array is a pure function
// of (seed, stream, i), so a harness can fill memory and regenerate any element for its
// reference without keeping the inputs.

#include <cstddef>
#include <cstdint>

#include "components/dtype.hpp"
#include "kernels/harness/host_array.hpp"

namespace cubesim::kernels {

// signed_unit: magnitudes uniform in [1/16, 1] with a random sign (never zero or tiny, so a
// relative error means something); positive: uniform in [0.5, 1.5]. i32 arrays hold integers:
// +-[1, 1000] or [1, 1000].
enum class Fill { signed_unit, positive };

// Element i of the random array (seed, stream) in `dtype`, as raw bytes at dst[0 .. count).
void random_block(DType dtype, Fill fill, std::uint64_t seed, std::uint64_t stream,
                  std::int64_t begin, std::int64_t count, std::byte* dst);

HostArray random_array(DType dtype, std::int64_t n, std::uint64_t seed, std::uint64_t stream,
                       Fill fill = Fill::signed_unit);

// The generator under the draws: splitmix64's mixing function, and the key of the stream
// (seed, stream) that an array's draws (and sample_indices's) are hashed with.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(splitmix64(seed) ^ (stream * 0xd1b54a32d192ed03ULL));
}

}  // namespace cubesim::kernels
