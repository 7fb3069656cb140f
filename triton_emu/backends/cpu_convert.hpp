#pragma once
// Conversion of 2D blocks between the float dtypes (f16, bf16, f32, f8e4m3, f8e5m2), for the GEMM
// paths that compute in f32. f16 and bf16 are vectorised: GCC 12 turns a plain element-by-element
// _Float16 conversion into a libgcc call per element (~9 ns, over half of a 1024^3 GEMM); F16C /
// AVX2 take well under 1 ns per element. f8 widens through a 256-entry table and narrows through
// float8::encode (PyTorch's rounding, components/float8.hpp), the same on every ISA. Rounding is
// round-to-nearest-even throughout, so results do not depend on the CPU.

#include <cstdint>
#include <string_view>

#include "components/dtype.hpp"

namespace cubesim::backends {

enum class ConvertIsa : std::uint8_t {
  scalar,     // portable bit manipulation (Eigen::half / Eigen::bfloat16)
  avx2_f16c,  // 8 lanes at a time; every x86-64 CPU since 2013 has it
};

// The fastest ISA this CPU supports (detected once).
ConvertIsa best_convert_isa();
std::string_view convert_isa_name(ConvertIsa isa);

// Converts (or, for equal dtypes, copies) a rows x cols block: element (r, c) is read at
// src + r * ld_src + c and written to dst + r * ld_dst + c. Float dtypes only (an integer one is
// std::invalid_argument); between two narrow dtypes it goes through f32, exactly: every f16, bf16
// and f8 value is an f32 value. NaNs stay NaNs (their payload may differ between ISAs);
// everything else is bit-exact.
void convert_block(DType from, const void* src, std::int64_t ld_src, DType to, void* dst,
                   std::int64_t ld_dst, std::int64_t rows, std::int64_t cols,
                   ConvertIsa isa = best_convert_isa());

}  // namespace cubesim::backends
