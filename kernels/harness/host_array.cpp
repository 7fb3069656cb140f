#include "kernels/harness/host_array.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstring>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/tile/element_codec.hpp"

namespace cubesim::kernels {

namespace {
// Conversions through f32 run this many elements at a time, in a buffer on the stack.
constexpr std::int64_t kChunk = 4096;
}  // namespace

double HostArray::at(std::int64_t i) const {
  return tl::element_value(dtype, bytes.data() + i * dtype_size(dtype));
}

void HostArray::decode(std::int64_t begin, std::int64_t count, double* out) const {
  const std::byte* src = bytes.data() + begin * dtype_size(dtype);
  if (is_integer(dtype) || dtype_size(dtype) == 1) {
    tl::decode_f64(dtype, src, count, out);
    return;
  }
  if (dtype == DType::f32) {
    for (std::int64_t i = 0; i < count; ++i) {
      float x;
      std::memcpy(&x, src + i * 4, 4);
      out[i] = x;
    }
    return;
  }
  std::array<float, kChunk> f;
  const std::uint32_t element = dtype_size(dtype);
  for (std::int64_t done = 0; done < count; done += kChunk) {
    const std::int64_t n = std::min(kChunk, count - done);
    backends::convert_block(dtype, bytes.data() + (begin + done) * element, n, DType::f32, f.data(),
                            n, 1, n);
    for (std::int64_t i = 0; i < n; ++i) out[done + i] = f[static_cast<std::size_t>(i)];
  }
}

std::vector<double> HostArray::to_f64() const {
  std::vector<double> v(static_cast<std::size_t>(size));
  decode(0, size, v.data());
  return v;
}
HostArray make_array(DType dtype, std::span<const double> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  HostArray a{dtype, n, std::vector<std::byte>(values.size() * dtype_size(dtype))};
  if (is_integer(dtype) || dtype_size(dtype) == 1) {
    tl::encode_f64(values.data(), n, dtype, a.bytes.data());
    return a;
  }
  std::array<float, kChunk> f;
  const std::uint32_t size = dtype_size(dtype);
  for (std::int64_t done = 0; done < n; done += kChunk) {
    const std::int64_t m = std::min(kChunk, n - done);
    // double -> f32 -> f16/bf16 rounds twice, which can differ from one rounding by an ulp
    // in rare ties; harnesses check against the values stored, so that does not matter.
    for (std::int64_t i = 0; i < m; ++i)
      f[static_cast<std::size_t>(i)] =
          static_cast<float>(values[static_cast<std::size_t>(done + i)]);
    backends::convert_block(DType::f32, f.data(), m, dtype, a.bytes.data() + done * size, m, 1, m);
  }
  return a;
}

double round_to(DType dtype, double value) {
  switch (dtype) {
    case DType::f16:
      return static_cast<float>(Eigen::half(static_cast<float>(value)));
    case DType::bf16:
      return static_cast<float>(Eigen::bfloat16(static_cast<float>(value)));
    case DType::f32:
      return static_cast<float>(value);
    default: {  // i8, i32, i64, bool, f8: the codec's rounding (integers truncate toward zero)
      std::byte b[8];
      tl::encode_f64(&value, 1, dtype, b);
      return tl::element_value(dtype, b);
    }
  }
}

Ptr alloc_array(Simulation& sim, DType dtype, std::int64_t n, Placement placement) {
  return sim.alloc(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1)) * dtype_size(dtype),
                   placement);
}

void write_array(Simulation& sim, Ptr p, const HostArray& a) {
  sim.write_bytes(p, a.bytes.data(), a.bytes.size());
}

HostArray read_array(const Simulation& sim, Ptr p, DType dtype, std::int64_t n) {
  HostArray a{dtype, n, std::vector<std::byte>(static_cast<std::size_t>(n) * dtype_size(dtype))};
  sim.read_bytes(p, a.bytes.data(), a.bytes.size());
  return a;
}

double read_element(const Simulation& sim, Ptr base, std::int64_t index, DType dtype) {
  HostArray one{dtype, 1, std::vector<std::byte>(dtype_size(dtype))};
  sim.read_bytes(base + index * dtype_size(dtype), one.bytes.data(), one.bytes.size());
  return one.at(0);
}

}  // namespace cubesim::kernels
