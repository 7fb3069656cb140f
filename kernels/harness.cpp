#include "kernels/harness.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/element_codec.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

// ---- The grid
// ------------------------------------------------------------------------------------

std::int64_t global_program_id(const tl::Context& tl) {
  return (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) +
         tl.program_id(0);
}

std::int64_t total_programs(const tl::Context& tl) {
  return tl.num_programs(0) * tl.num_programs(1) * tl.num_programs(2);
}

Range split_range(std::int64_t n, std::int64_t parts, std::int64_t index) {
  // The first n % parts parts get one element more.
  const std::int64_t q = n / parts, r = n % parts;
  const auto at = [&](std::int64_t i) { return i * q + std::min(i, r); };
  return {at(index), at(index + 1)};
}

std::string GridShape::str() const {
  std::string s = std::to_string(total()) + (total() == 1 ? " program (" : " programs (");
  if (logical)
    return s + "logical grid " + std::to_string(pes) + " x " + std::to_string(cubes) + " x " +
           std::to_string(sips) + ")";
  if (sips > 1) s += std::to_string(sips) + " SIPs x ";
  s += std::to_string(cubes) + (cubes == 1 ? " cube x " : " cubes x ");
  s += std::to_string(pes) + (pes == 1 ? " PE)" : " PEs)");
  return s;
}

GridShape hardware_grid(const components::SystemConfig& c) {
  return {c.cube.pes, c.cubes_per_sip, c.sips};
}

GridShape launch_grid(const Simulation& sim) {
  const Grid& g = sim.options().grid;
  const GridShape hw = hardware_grid(sim.config());
  const GridShape shape{g.pes ? g.pes : hw.pes, g.cubes ? g.cubes : hw.cubes,
                        g.sips ? g.sips : hw.sips};
  const bool fits = shape.pes <= hw.pes && shape.cubes <= hw.cubes && shape.sips <= hw.sips;
  return {shape.pes, shape.cubes, shape.sips, g.dispatched || !fits};
}

void require_hardware_grid(const Simulation& sim, const std::string& kernel,
                           const std::string& why) {
  const Grid& g = sim.options().grid;
  if (!g.dispatched && g.pes == 0 && g.cubes == 0 && g.sips == 0) return;
  throw UsageError(kernel + " runs on the hardware grid only (" + why + "), not on the grid " +
                   g.str() + "; leave out --grid");
}

void require_one_wave(const Simulation& sim, const std::string& kernel, const std::string& why) {
  const GridShape grid = launch_grid(sim);
  const auto pes = static_cast<std::int64_t>(sim.config().total_pes());
  if (grid.total() <= pes) return;
  throw UsageError(kernel + " needs every program running at once (" + why + "), but the grid " +
                   sim.options().grid.str() + " has " + std::to_string(grid.total()) +
                   " programs for " + std::to_string(pes) + " PEs, so they would run in " +
                   std::to_string((grid.total() + pes - 1) / pes) + " waves; launch at most " +
                   std::to_string(pes) + " programs, or leave out --grid");
}

// ---- Parameters --------------------------------------------------------------------------------

ParamSpec int_param(std::string name, std::int64_t default_value, std::int64_t min,
                    std::int64_t max, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::integer,
                   .default_value = default_value,
                   .min = static_cast<double>(min),
                   .max = static_cast<double>(max),
                   .help = std::move(help)};
}

ParamSpec bool_param(std::string name, bool default_value, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::boolean,
                   .default_value = default_value,
                   .help = std::move(help)};
}

ParamSpec real_param(std::string name, double default_value, double min, double max,
                     std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::real,
                   .default_value = default_value,
                   .min = min,
                   .max = max,
                   .help = std::move(help)};
}

ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help) {
  return ParamSpec{.name = std::move(name),
                   .type = ParamSpec::Type::string,
                   .default_value = std::move(default_value),
                   .choices = std::move(choices),
                   .help = std::move(help)};
}

ParamSpec dtype_param(DType default_value, std::vector<DType> choices, std::string help) {
  std::vector<std::string> names;
  for (DType t : choices) names.emplace_back(dtype_name(t));
  return choice_param("dtype", std::string(dtype_name(default_value)), std::move(names),
                      std::move(help));
}

namespace {
const nlohmann::json& param(const Params& p, const char* name) {
  const auto it = p.find(name);
  if (it == p.end())
    throw UsageError(std::string("missing parameter '") + name +
                     "' (parse_params fills in every default)");
  return *it;
}
}  // namespace

std::int64_t get_int(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_number_integer())
    throw UsageError(std::string("parameter ") + name + " must be an integer, got " + v.dump());
  return v.get<std::int64_t>();
}

double get_real(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_number()) throw UsageError(std::string("parameter ") + name + " must be a number");
  return v.get<double>();
}

std::string get_string(const Params& p, const char* name) {
  const auto& v = param(p, name);
  if (!v.is_string()) throw UsageError(std::string("parameter ") + name + " must be a string");
  return v.get<std::string>();
}

DType get_dtype(const Params& p, const char* name) {
  const std::string s = get_string(p, name);
  const auto t = dtype_from_name(s);
  if (!t) throw UsageError(std::string("parameter ") + name + ": unknown dtype '" + s + "'");
  return *t;
}

// ---- Usage errors ------------------------------------------------------------------------------

void require_divisible(const std::string& name, std::int64_t value, std::int64_t divisor,
                       const std::string& divisor_description) {
  if (divisor <= 0 || value % divisor == 0) return;
  const std::int64_t below = value / divisor * divisor, above = below + divisor;
  std::string examples =
      below > 0 ? std::to_string(below) + " or " + std::to_string(above) : std::to_string(above);
  throw UsageError(name + " = " + std::to_string(value) + " is not divisible by the " +
                   divisor_description + "; use a multiple of " + std::to_string(divisor) +
                   " (such as " + examples + ")");
}

void require_sram(const components::SystemConfig& config, std::uint64_t bytes,
                  const std::string& what, const std::string& fix) {
  if (bytes <= config.pe.sram_bytes) return;
  throw UsageError(what + " needs " + std::to_string(bytes) +
                   " bytes of SRAM per program but a PE has " +
                   std::to_string(config.pe.sram_bytes) + " (system.pe.sram_KiB); " + fix);
}

void require_message_slots(const components::SystemConfig& config, std::uint64_t channels,
                           std::uint64_t hbm_bytes, const std::string& what) {
  const auto& m = config.messages;
  const std::uint64_t per_channel = std::uint64_t{m.slots} * m.slot_bytes;
  const std::uint64_t need = channels * per_channel;
  const std::string slots = fmt::format(
      "{} channels into one cube of {} slots of {} bytes (system.messages.slots, slot_KiB) need "
      "{} bytes",
      channels, m.slots, m.slot_bytes, need);
  if (m.memory == components::SlotMemory::cube_sram && need > m.cube_sram_bytes)
    throw UsageError(
        fmt::format("{}: {} of the cube's shared SRAM, which holds {} "
                    "(system.messages.cube_sram.capacity_KiB); "
                    "use fewer or smaller slots, raise the capacity, or put the slots in HBM "
                    "(--set system.messages.memory=hbm)",
                    what, slots, m.cube_sram_bytes));
  // Each channel's slots are a buffer of their own, page-aligned.
  const std::uint64_t hbm_need = channels * ((per_channel + 4095) / 4096 * 4096);
  if (m.memory == components::SlotMemory::hbm &&
      hbm_need + hbm_bytes > config.cube.hbm.capacity_bytes)
    throw UsageError(fmt::format(
        "{}: {} of the cube's HBM beside the kernel's {} bytes there, more than its {} "
        "(system.cube.hbm.capacity_GiB); use fewer or smaller slots or less data per PE",
        what, slots, hbm_bytes, config.cube.hbm.capacity_bytes));
}

// ---- Random inputs -----------------------------------------------------------------------------

namespace {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return splitmix64(splitmix64(seed) ^ (stream * 0xd1b54a32d192ed03ULL));
}

// 32 random bits for element i of the stream `key`: a bijection of the low 32 bits of i (an odd
// multiply, then murmur3's finaliser), so the elements of a stream never repeat within 2^32.
// 32-bit arithmetic vectorises (0.7 ns per element with AVX2, against 7 ns for splitmix64),
// which matters when vector_add draws and re-draws 2^25 inputs.
inline std::uint32_t hash32(std::uint64_t key, std::int64_t i) {
  const auto u = static_cast<std::uint64_t>(i);
  std::uint32_t h = (static_cast<std::uint32_t>(u) ^ static_cast<std::uint32_t>(key)) * 0x9e3779b1U;
  h ^= static_cast<std::uint32_t>(key >> 32) + static_cast<std::uint32_t>(u >> 32);
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  return h ^ (h >> 16);
}

// Bit 0 gives the sign, bits 8..31 the magnitude.
__attribute__((target_clones("avx2", "default"))) void random_floats(std::uint64_t key,
                                                                     std::int64_t begin,
                                                                     std::int64_t n, Fill fill,
                                                                     float* out) {
  if (fill == Fill::positive) {
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = 0.5f + static_cast<float>(static_cast<std::int32_t>(hash32(key, begin + i) >> 8)) *
                          0x1p-24f;
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t h = hash32(key, begin + i);
    const float mag =
        0.0625f + 0.9375f * static_cast<float>(static_cast<std::int32_t>(h >> 8)) * 0x1p-24f;
    out[i] = (h & 1) ? -mag : mag;
  }
}

std::int32_t random_int(std::uint64_t key, std::int64_t i, Fill fill) {
  const std::uint32_t h = hash32(key, i);
  const auto mag = static_cast<std::int32_t>(1 + (h >> 8) % 1000);
  if (fill == Fill::positive) return mag;
  return (h & 1) ? -mag : mag;
}

constexpr std::int64_t kChunk = 4096;

}  // namespace

void random_block(DType dtype, Fill fill, std::uint64_t seed, std::uint64_t stream,
                  std::int64_t begin, std::int64_t count, std::byte* dst) {
  const std::uint64_t key = stream_key(seed, stream);
  if (is_integer(dtype)) {  // i8 and bool keep the low bits of the same draws
    std::array<std::int64_t, kChunk> v;
    for (std::int64_t done = 0; done < count; done += kChunk) {
      const std::int64_t n = std::min(kChunk, count - done);
      for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = random_int(key, begin + done + i, fill);
      tl::encode_i64(v.data(), n, dtype, dst + done * dtype_size(dtype));
    }
    return;
  }
  // Draw in f32, then round to the dtype in vectorised blocks.
  std::array<float, kChunk> f;
  const std::uint32_t size = dtype_size(dtype);
  for (std::int64_t done = 0; done < count; done += kChunk) {
    const std::int64_t n = std::min(kChunk, count - done);
    random_floats(key, begin + done, n, fill, f.data());
    tl::encode_f32(f.data(), n, dtype, dst + done * size);
  }
}

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

HostArray random_array(DType dtype, std::int64_t n, std::uint64_t seed, std::uint64_t stream,
                       Fill fill) {
  HostArray a{dtype, n, std::vector<std::byte>(static_cast<std::size_t>(n) * dtype_size(dtype))};
  random_block(dtype, fill, seed, stream, 0, n, a.bytes.data());
  return a;
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

Ptr alloc_array(Simulation& sim, DType dtype, std::int64_t n) {
  return sim.alloc(static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1)) * dtype_size(dtype));
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

// ---- Verification ------------------------------------------------------------------------------

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return 0x1p-11;
    case DType::bf16:
      return 0x1p-8;
    case DType::f32:
      return 0x1p-24;
    case DType::f8e4m3:
      return 0x1p-4;
    case DType::f8e5m2:
      return 0x1p-3;
    case DType::i32:
    case DType::i8:
    case DType::i64:
    case DType::boolean:
      return 0;
  }
  return 0;
}

double min_normal(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return 0x1p-14;
    case DType::bf16:
    case DType::f32:
      return 0x1p-126;
    case DType::f8e4m3:
      return 0x1p-6;
    case DType::f8e5m2:
      return 0x1p-14;
    case DType::i32:
    case DType::i8:
    case DType::i64:
    case DType::boolean:
      return 1;
  }
  return 0;
}

double dot_error_scale(std::int64_t k, double mean_square) {
  return std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1))) * mean_square;
}

double dot_tolerance(DType out, std::int64_t k) {
  return unit_roundoff(out) + 4.0 * static_cast<double>(k) * 0x1p-24;
}

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

// ---- Several launches
// ----------------------------------------------------------------------------

RunResult sum_runs(std::vector<RunResult> runs) {
  if (runs.empty()) return {};
  if (runs.size() == 1) return std::move(runs.front());
  RunResult total = runs.back();
  RunStats& sum = total.stats;
  sum.sim_time_ps = sum.flops = sum.events = 0;
  sum.wall_seconds = 0;
  sum.network.bytes_by_kind = {};
  sum.messages = {};
  sum.launches.clear();
  for (const auto& r : runs) {
    sum.sim_time_ps += r.stats.sim_time_ps;
    sum.flops += r.stats.flops;
    sum.events += r.stats.events;
    sum.wall_seconds += r.stats.wall_seconds;
    sum.messages += r.stats.messages;
    for (std::size_t k = 0; k < components::kLinkKinds; ++k)
      sum.network.bytes_by_kind[k] += r.stats.network.bytes_by_kind[k];
    sum.launches.push_back(r.stats);
  }
  total.sim_time_ps = sum.sim_time_ps;
  total.report = run_report(sum);
  return total;
}

}  // namespace cubesim::kernels
