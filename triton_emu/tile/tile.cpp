#include "triton_emu/tile/tile.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/errors.hpp"
#include "triton_emu/tile/deferred_loads.hpp"
#include "triton_emu/tile/element_codec.hpp"
#include "triton_emu/tile/tile_access.hpp"
#include "triton_emu/tile/tile_owner.hpp"

namespace cubesim::tl {

using components::VectorOp;

// ---- Shape ----------------------------------------------------------------------------------

Shape::Shape(std::initializer_list<std::int64_t> d) {
  if (d.size() == 0 || d.size() > 3)
    throw std::invalid_argument("a tile shape has 1, 2 or 3 dimensions, got " +
                                std::to_string(d.size()));
  rank = static_cast<int>(d.size());
  std::size_t i = 0;
  for (std::int64_t v : d) dims[i++] = v;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[static_cast<std::size_t>(i)] != o.dims[static_cast<std::size_t>(i)]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(dims[static_cast<std::size_t>(i)]);
  return s + "]";
}

namespace {

using Index = std::vector<std::int64_t>;

TileOwner& context_of(const Tile& a) {
  if (!a.valid()) throw std::logic_error("operation on an empty tile (made by Tile())");
  return TileAccess::owner(a);
}

TileOwner& context_of(const Tile& a, const Tile& b) {
  TileOwner& c = context_of(a);
  if (&context_of(b) != &c) c.fault("tiles of two different programs cannot be combined");
  return c;
}

void need_values(const Tile& t) {
  if (!t.has_values() && t.numel() > 0)
    throw std::logic_error(
        "this tile has no values: the run is timing-only (--timing-only), which moves and "
        "computes no data; run without it to read values");
}

// Whether to compute the values of result `r`. Functional runs always do. Timing-only runs
// compute index math only: integer and bool results whose operands all have values (arange,
// offsets, comparisons, masks), so masks, and therefore timing, are as in a functional run.
bool compute_values(TileOwner& ctx, Tile& r, std::initializer_list<const Tile*> inputs) {
  if (!ctx.timing_only()) return true;
  bool ok = is_integer(r.dtype());
  for (const Tile* t : inputs) ok = ok && (t->has_values() || t->numel() == 0);
  if (!ok) TileAccess::drop_values(r);
  return ok;
}

int integer_rank(DType t) {
  return t == DType::boolean ? 0 : t == DType::i8 ? 1 : t == DType::i32 ? 2 : 3;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (is_integer(a) && is_integer(b)) return integer_rank(a) > integer_rank(b) ? a : b;
  if (is_integer(a)) return b;
  if (is_integer(b)) return a;
  return DType::f32;  // two different floats
}

// Arithmetic computes bool in i32 (True + True is 2).
DType arith_type(DType a, DType b) {
  const DType t = promote(a, b);
  return t == DType::boolean ? DType::i32 : t;
}

DType float_result(DType t) {
  return is_floating(t) ? t : DType::f32;
}

// A shape as 3 dimensions, aligned at the last (NumPy): [n] is [1, 1, n].
std::array<std::int64_t, 3> dims3(const Shape& s) {
  std::array<std::int64_t, 3> d{1, 1, 1};
  for (int i = 0; i < s.rank; ++i)
    d[static_cast<std::size_t>(3 - s.rank + i)] = s.dims[static_cast<std::size_t>(i)];
  return d;
}

Shape shape_of(const std::array<std::int64_t, 3>& d, int rank) {
  Shape s;
  s.rank = rank;
  for (int i = 0; i < rank; ++i)
    s.dims[static_cast<std::size_t>(i)] = d[static_cast<std::size_t>(3 - rank + i)];
  return s;
}

Shape broadcast(TileOwner& ctx, const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  const auto da = dims3(a), db = dims3(b);
  std::array<std::int64_t, 3> r{};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t x = da[i], y = db[i];
    if (x == y || y == 1) {
      r[i] = x;
    } else if (x == 1) {
      r[i] = y;
    } else {
      ctx.fault(std::string(op) + ": shapes " + a.str() + " and " + b.str() +
                " do not broadcast (aligned at the last dimension, each dimension must match "
                "or be 1)");
    }
  }
  return shape_of(r, std::max(a.rank, b.rank));
}

// For each element of `to` (row-major), the flat index of the element of `from` that
// broadcasting puts there. Empty when the layouts are the same (no index map needed).
Index broadcast_index(const Shape& from, const Shape& to) {
  if (from.numel() == to.numel()) return {};
  const auto f = dims3(from), t = dims3(to);
  const std::int64_t s2 = f[2] == 1 ? 0 : 1, s1 = f[1] == 1 ? 0 : f[2],
                     s0 = f[0] == 1 ? 0 : f[1] * f[2];
  Index idx(static_cast<std::size_t>(to.numel()));
  std::size_t k = 0;
  for (std::int64_t i = 0; i < t[0]; ++i)
    for (std::int64_t j = 0; j < t[1]; ++j)
      for (std::int64_t l = 0; l < t[2]; ++l) idx[k++] = i * s0 + j * s1 + l * s2;
  return idx;
}

template <class T>
std::vector<T> expand(std::vector<T> v, const Shape& from, const Shape& to) {
  const Index idx = broadcast_index(from, to);
  if (idx.empty()) return v;
  std::vector<T> out(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) out[i] = v[static_cast<std::size_t>(idx[i])];
  return out;
}

// "(1, 2)" for element 6 of a [4, 4] tile.
std::string element_name(const Shape& s, std::int64_t flat) {
  std::array<std::int64_t, 3> at{};
  for (int i = s.rank - 1; i >= 0; --i) {
    const std::int64_t d = s.dims[static_cast<std::size_t>(i)];
    at[static_cast<std::size_t>(i)] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
  std::string r = "(";
  for (int i = 0; i < s.rank; ++i)
    r += (i ? ", " : "") + std::to_string(at[static_cast<std::size_t>(i)]);
  return r + ")";
}

// An element-wise operation's fault at one element; the loop that meets it names the element.
struct ElementFault {
  std::string what;
};

void store_f32(const std::vector<float>& v, Tile& out) {
  encode_f32(v.data(), static_cast<std::int64_t>(v.size()), out.dtype(), TileAccess::raw(out));
}

void store_i64(const std::vector<std::int64_t>& v, Tile& out) {
  encode_i64(v.data(), static_cast<std::int64_t>(v.size()), out.dtype(), TileAccess::raw(out));
}

// Two's complement arithmetic of i64 without undefined behaviour; narrower dtypes wrap when
// stored (encode_i64 keeps the low bits).
std::int64_t wrap_add(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y));
}
std::int64_t wrap_sub(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y));
}
std::int64_t wrap_mul(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
}

// Element-wise over two broadcast operands into a tile of `out`: integer math in i64 (`ints`,
// wrapped to out when stored) or f32 math rounded to out. fi/ff may throw ElementFault.
template <class FF, class FI>
Tile binary(const Tile& a, const Tile& b, const char* name, VectorOp op, DType out, bool ints,
            FF ff, FI fi) {
  TileOwner& ctx = context_of(a, b);
  const Shape s = broadcast(ctx, a.shape(), b.shape(), name);
  ctx.charge_vector(static_cast<std::uint64_t>(s.numel()), op);
  Tile r = ctx.make_tile(s, out);
  if (!compute_values(ctx, r, {&a, &b})) return r;
  need_values(a);
  need_values(b);
  const auto n = static_cast<std::size_t>(s.numel());
  std::size_t i = 0;
  try {
    if (ints) {
      const auto av = expand(a.to_i64(), a.shape(), s), bv = expand(b.to_i64(), b.shape(), s);
      std::vector<std::int64_t> rv(n);
      for (; i < n; ++i) rv[i] = fi(av[i], bv[i]);
      store_i64(rv, r);
    } else {
      const auto av = expand(a.to_f32(), a.shape(), s), bv = expand(b.to_f32(), b.shape(), s);
      std::vector<float> rv(n);
      for (; i < n; ++i) rv[i] = ff(av[i], bv[i]);
      store_f32(rv, r);
    }
  } catch (const ElementFault& e) {
    ctx.fault(fmt::format("{}: {} at element {} of the {} result", name, e.what,
                          element_name(s, static_cast<std::int64_t>(i)), s.str()));
  }
  return r;
}

template <class FF, class FI>
Tile unary(const Tile& a, const char* name, VectorOp op, DType out, bool ints, FF ff, FI fi) {
  TileOwner& ctx = context_of(a);
  ctx.charge_vector(static_cast<std::uint64_t>(a.numel()), op);
  Tile r = ctx.make_tile(a.shape(), out);
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  std::size_t i = 0;
  try {
    if (ints) {
      auto v = a.to_i64();
      for (; i < v.size(); ++i) v[i] = fi(v[i]);
      store_i64(v, r);
    } else {
      auto v = a.to_f32();
      for (; i < v.size(); ++i) v[i] = ff(v[i]);
      store_f32(v, r);
    }
  } catch (const ElementFault& e) {
    ctx.fault(fmt::format("{}: {} at element {} of the {} tile", name, e.what,
                          element_name(a.shape(), static_cast<std::int64_t>(i)), a.shape().str()));
  }
  return r;
}

// A float function of each element: an integer tile gives f32.
template <class F>
Tile float_fn(const Tile& a, const char* name, VectorOp op, F f) {
  return unary(a, name, op, float_result(a.dtype()), false, f, [](std::int64_t x) { return x; });
}

// Arithmetic: integer math (wrapping) for two integer tiles, else f32 math rounded.
template <class FF, class FI>
Tile arith(const Tile& a, const Tile& b, const char* name, VectorOp op, FF ff, FI fi) {
  const DType out = arith_type(a.dtype(), b.dtype());
  return binary(a, b, name, op, out, is_integer(out), ff, fi);
}

template <class F>
Tile compare(const Tile& a, const Tile& b, const char* name, F f) {
  const bool ints = is_integer(a.dtype()) && is_integer(b.dtype());
  return binary(
      a, b, name, VectorOp::simple, DType::boolean, ints,
      [f](float x, float y) -> float { return f(x, y) ? 1.0f : 0.0f; },
      [f](std::int64_t x, std::int64_t y) -> std::int64_t { return f(x, y) ? 1 : 0; });
}

// Whether s is an integer that an i64 holds exactly.
bool integral(double s) {
  return std::nearbyint(s) == s && std::abs(s) < 0x1p63;
}

// Scalar operand: an integer tile stays integer with an integral scalar (bool computes in i32);
// otherwise float math.
template <class FF, class FI>
Tile with_scalar(const Tile& a, double s, const char* name, VectorOp op, FF ff, FI fi) {
  if (is_integer(a.dtype()) && integral(s)) {
    const auto si = static_cast<std::int64_t>(s);
    return unary(
        a, name, op, arith_type(a.dtype(), a.dtype()), true, [](float x) { return x; },
        [&](std::int64_t x) { return fi(x, si); });
  }
  const auto sf = static_cast<float>(s);
  return unary(
      a, name, op, float_result(a.dtype()), false, [&](float x) { return ff(x, sf); },
      [](std::int64_t x) { return x; });
}

template <class F>
Tile compare_scalar(const Tile& a, double s, const char* name, F f) {
  // long double holds every i64 and every double exactly, so integer tiles compare exactly.
  const bool ints = is_integer(a.dtype());
  const auto sl = static_cast<long double>(s);
  return unary(
      a, name, VectorOp::simple, DType::boolean, ints,
      [&](float x) -> float { return f(static_cast<long double>(x), sl) ? 1.0f : 0.0f; },
      [&](std::int64_t x) -> std::int64_t { return f(static_cast<long double>(x), sl) ? 1 : 0; });
}

std::int64_t int_min_of(DType t) {
  return t == DType::i8 ? INT8_MIN : t == DType::i32 ? INT32_MIN : INT64_MIN;
}

// Truncating division and remainder (INT_MIN / -1 wraps to INT_MIN when stored).
std::int64_t int_div(std::int64_t x, std::int64_t y) {
  if (y == 0) throw ElementFault{fmt::format("integer division of {} by zero", x)};
  if (y == -1) return wrap_sub(0, x);  // -INT_MIN wraps to INT_MIN in every width
  return x / y;
}
std::int64_t int_rem(std::int64_t x, std::int64_t y) {
  if (y == 0) throw ElementFault{fmt::format("integer remainder of {} by zero", x)};
  if (y == -1) return 0;
  return x % y;
}

std::int64_t shift_count(DType t, std::int64_t y) {
  const int bits = static_cast<int>(dtype_size(t)) * 8;
  if (y < 0 || y >= bits)
    throw ElementFault{
        fmt::format("shift by {}, outside 0 .. {} for {}", y, bits - 1, dtype_name(t))};
  return y;
}

// Shifts act on the value as stored in `t` (wrapping), left in unsigned arithmetic.
std::int64_t shl(DType t, std::int64_t x, std::int64_t y) {
  return wrap_integer(
      t, static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << shift_count(t, y)));
}
std::int64_t shr(DType t, std::int64_t x, std::int64_t y) {
  return x >> shift_count(t, y);  // arithmetic on signed values (C++20)
}

Tile shift(const Tile& a, const Tile& b, const char* name, bool left) {
  TileOwner& ctx = context_of(a, b);
  if (!is_integer(a.dtype()) || !is_integer(b.dtype()))
    ctx.fault(fmt::format("{}: shifts need integer tiles, got {} and {}; convert with .to()", name,
                          dtype_name(a.dtype()), dtype_name(b.dtype())));
  const DType out = arith_type(a.dtype(), b.dtype());
  return binary(
      a, b, name, VectorOp::simple, out, true, [](float x, float) { return x; },
      [out, left](std::int64_t x, std::int64_t y) {
        return left ? shl(out, x, y) : shr(out, x, y);
      });
}

Tile shift_scalar(const Tile& a, int s, const char* name, bool left) {
  if (!is_integer(a.dtype()))
    context_of(a).fault(fmt::format("{}: shifts need an integer tile, got {}; convert with .to()",
                                    name, dtype_name(a.dtype())));
  const DType out = arith_type(a.dtype(), a.dtype());
  return unary(
      a, name, VectorOp::simple, out, true, [](float x) { return x; },
      [out, left, s](std::int64_t x) { return left ? shl(out, x, s) : shr(out, x, s); });
}

// Bitwise on integers; a float operand makes it the logical operation on masks.
template <class F>
Tile bitwise(const Tile& a, const Tile& b, const char* name, F f) {
  if (is_integer(a.dtype()) && is_integer(b.dtype()))
    return binary(
        a, b, name, VectorOp::simple, promote(a.dtype(), b.dtype()), true,
        [](float x, float) { return x; }, f);
  return binary(
      a, b, name, VectorOp::simple, DType::boolean, false,
      [f](float x, float y) -> float { return f(x != 0.0f, y != 0.0f) ? 1.0f : 0.0f; },
      [](std::int64_t x, std::int64_t) { return x; });
}

// ---- Reductions and scans --------------------------------------------------------------------

// A tile as (outer, len, inner) around `axis`: element (o, k, i) is at (o * len + k) * inner + i.
struct AxisView {
  std::int64_t outer = 1, len = 1, inner = 1;
  Shape reduced;  // the shape without the axis ([1] for a 1D tile)
};

AxisView axis_view(TileOwner& ctx, const Tile& a, int axis, const char* name) {
  const Shape& s = a.shape();
  if (axis < 0 || axis >= s.rank)
    ctx.fault(fmt::format("{}: axis {} of a tile of shape {}; use 0 .. {}", name, axis, s.str(),
                          s.rank - 1));
  AxisView v;
  for (int i = 0; i < axis; ++i) v.outer *= s[i];
  v.len = s[axis];
  for (int i = axis + 1; i < s.rank; ++i) v.inner *= s[i];
  v.reduced.rank = std::max(1, s.rank - 1);
  int k = 0;
  for (int i = 0; i < s.rank; ++i)
    if (i != axis) v.reduced.dims[static_cast<std::size_t>(k++)] = s[i];
  if (s.rank == 1) v.reduced.dims[0] = 1;
  return v;
}

// sum and cumsum of bool and i8 give i32 (as Triton's tl.sum).
DType sum_type(DType t) {
  return t == DType::boolean || t == DType::i8 ? DType::i32 : t;
}

enum class Extreme { max, min };

// Whether x replaces the best so far: strictly better (so the first wins a tie), or the first
// NaN (NaN beats everything; a later NaN does not replace it).
bool better(Extreme e, float x, float best) {
  if (std::isnan(best)) return false;
  if (std::isnan(x)) return true;
  return e == Extreme::max ? x > best : x < best;
}

// Max/min (`want_index` false) or argmax/argmin (true) along an axis.
Tile extreme(const Tile& a, int axis, const char* name, Extreme e, bool want_index) {
  TileOwner& ctx = context_of(a);
  const AxisView v = axis_view(ctx, a, axis, name);
  if (want_index && v.len == 0)
    ctx.fault(fmt::format("{}: axis {} of the {} tile is empty; there is no index to give", name,
                          axis, a.shape().str()));
  ctx.charge_reduce(static_cast<std::uint64_t>(v.outer), static_cast<std::uint64_t>(v.len),
                    static_cast<std::uint64_t>(v.inner), false);
  Tile r = ctx.make_tile(v.reduced, want_index ? DType::i32 : a.dtype());
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  const auto m = static_cast<std::size_t>(v.outer * v.inner);
  std::vector<std::int64_t> index(m, 0);
  if (is_integer(a.dtype())) {
    const auto x = a.to_i64();
    // An empty axis gives the identity: the dtype's lowest (max) or highest (min) value.
    const std::int64_t lo = a.dtype() == DType::boolean ? 0 : int_min_of(a.dtype());
    const std::int64_t hi = a.dtype() == DType::boolean ? 1 : -(lo + 1);
    std::vector<std::int64_t> best(m, e == Extreme::max ? lo : hi);
    for (std::int64_t o = 0; o < v.outer; ++o)
      for (std::int64_t i = 0; i < v.inner; ++i) {
        const auto out = static_cast<std::size_t>(o * v.inner + i);
        for (std::int64_t k = 0; k < v.len; ++k) {
          const std::int64_t y = x[static_cast<std::size_t>((o * v.len + k) * v.inner + i)];
          if (k == 0 || (e == Extreme::max ? y > best[out] : y < best[out])) {
            best[out] = y;
            index[out] = k;
          }
        }
      }
    store_i64(want_index ? index : best, r);
    return r;
  }
  const auto x = a.to_f32();
  std::vector<float> best(m, e == Extreme::max ? -std::numeric_limits<float>::infinity()
                                               : std::numeric_limits<float>::infinity());
  for (std::int64_t o = 0; o < v.outer; ++o)
    for (std::int64_t i = 0; i < v.inner; ++i) {
      const auto out = static_cast<std::size_t>(o * v.inner + i);
      for (std::int64_t k = 0; k < v.len; ++k) {
        const float y = x[static_cast<std::size_t>((o * v.len + k) * v.inner + i)];
        if (k == 0 || better(e, y, best[out])) {
          best[out] = y;
          index[out] = k;
        }
      }
    }
  if (want_index)
    store_i64(index, r);
  else
    store_f32(best, r);
  return r;
}

// sum (`scan` false) or cumsum (true) along an axis.
Tile summation(const Tile& a, int axis, const char* name, bool scan) {
  TileOwner& ctx = context_of(a);
  const AxisView v = axis_view(ctx, a, axis, name);
  ctx.charge_reduce(static_cast<std::uint64_t>(v.outer), static_cast<std::uint64_t>(v.len),
                    static_cast<std::uint64_t>(v.inner), scan);
  const DType out = sum_type(a.dtype());
  Tile r = ctx.make_tile(scan ? a.shape() : v.reduced, out);
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  const auto m = static_cast<std::size_t>(scan ? a.numel() : v.outer * v.inner);
  auto run = [&](auto x, auto zero, auto add) {
    std::vector<decltype(zero)> acc(m, zero);
    for (std::int64_t o = 0; o < v.outer; ++o)
      for (std::int64_t i = 0; i < v.inner; ++i) {
        auto total = zero;
        for (std::int64_t k = 0; k < v.len; ++k) {
          const auto at = static_cast<std::size_t>((o * v.len + k) * v.inner + i);
          total = add(total, x[at]);
          if (scan) acc[at] = total;
        }
        if (!scan) acc[static_cast<std::size_t>(o * v.inner + i)] = total;
      }
    return acc;
  };
  if (is_integer(out)) {
    // Wrapping in i64 and keeping the low bits equals wrapping at every step in the dtype.
    store_i64(run(a.to_i64(), std::int64_t{0}, wrap_add), r);
  } else {
    store_f32(run(a.to_f32(), 0.0f, [](float p, float q) { return p + q; }), r);
  }
  return r;
}

// ---- Data movement ---------------------------------------------------------------------------

// A tile of `s` whose element k is a's element src[k] (bytes copied: exact for every dtype).
Tile gather(TileOwner& ctx, const Tile& a, const Tile* b, const Shape& s, const Index& src) {
  ctx.charge_gather(src, static_cast<std::uint32_t>(dtype_size(a.dtype())), a.numel());
  Tile r = ctx.make_tile(s, a.dtype());
  if (!compute_values(
          ctx, r,
          b ? std::initializer_list<const Tile*>{&a, b} : std::initializer_list<const Tile*>{&a}))
    return r;
  need_values(a);
  const std::size_t size = dtype_size(a.dtype());
  const std::byte* pa = a.raw();
  const std::byte* pb = b ? (need_values(*b), b->raw()) : nullptr;
  std::byte* out = TileAccess::raw(r);
  // src[k] >= a.numel() indexes b (cat).
  for (std::size_t k = 0; k < src.size(); ++k) {
    const std::int64_t i = src[k];
    const std::byte* from = i < a.numel() ? pa + static_cast<std::size_t>(i) * size
                                          : pb + static_cast<std::size_t>(i - a.numel()) * size;
    std::memcpy(out + k * size, from, size);
  }
  return r;
}

}  // namespace

// ---- Tile ------------------------------------------------------------------------------------

double element_value(DType dtype, const std::byte* p) {
  double v = 0;
  decode_f64(dtype, p, 1, &v);
  return v;
}

TileOwner& TileAccess::owner(const Tile& t) {
  if (!t.owner_) throw std::logic_error("empty tile (made by Tile())");
  if (t.data_->launch == 0 || t.data_->launch != t.data_->sram->tenant)
    throw UsageError(
        "a tile of shape " + t.shape_.str() + " (" + std::string(dtype_name(t.dtype_)) +
        ") was used after the launch that made it ended: a tile lives in its PE's SRAM only "
        "while its launch runs. Keep values on the host instead (to_f32(), at() still work), or "
        "store the tile to memory before the kernel returns and load it in the next launch");
  return *t.owner_;
}

std::vector<float> Tile::to_f32() const {
  need_values(*this);
  std::vector<float> v(static_cast<std::size_t>(numel()));
  decode_f32(dtype_, raw(), numel(), v.data());
  return v;
}

std::vector<double> Tile::to_f64() const {
  need_values(*this);
  std::vector<double> v(static_cast<std::size_t>(numel()));
  decode_f64(dtype_, raw(), numel(), v.data());
  return v;
}

std::vector<std::int64_t> Tile::to_i64() const {
  need_values(*this);
  std::vector<std::int64_t> v(static_cast<std::size_t>(numel()));
  decode_i64(dtype_, raw(), numel(), v.data());
  return v;
}

std::vector<std::int32_t> Tile::to_i32() const {
  need_values(*this);
  const auto n = static_cast<std::size_t>(numel());
  std::vector<std::int32_t> v(n);
  if (dtype_ == DType::i32) {
    if (n) std::memcpy(v.data(), raw(), n * 4);
  } else if (is_integer(dtype_)) {
    const auto w = to_i64();
    for (std::size_t i = 0; i < n; ++i)
      v[i] = static_cast<std::int32_t>(std::clamp<std::int64_t>(w[i], INT32_MIN, INT32_MAX));
  } else {
    const auto f = to_f32();
    for (std::size_t i = 0; i < n; ++i)
      v[i] = static_cast<std::int32_t>(float_to_integer(DType::i32, f[i]));
  }
  return v;
}

std::vector<std::int32_t> Tile::to_mask() const {
  std::vector<std::int32_t> v(static_cast<std::size_t>(numel()));
  if (is_integer(dtype_)) {
    const auto w = to_i64();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = w[i] != 0;
  } else {
    const auto f = to_f32();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = f[i] != 0.0f;  // NaN != 0: true
  }
  return v;
}

double Tile::at(std::int64_t i) const {
  need_values(*this);
  if (i < 0 || i >= numel())
    throw std::out_of_range("tile index " + std::to_string(i) + " outside a tile of shape " +
                            shape_.str());
  return element_value(dtype_, raw() + i * dtype_size(dtype_));
}

double Tile::at(std::int64_t row, std::int64_t col) const {
  if (row < 0 || row >= shape_.rows() || col < 0 || col >= shape_.cols())
    throw std::out_of_range("tile index (" + std::to_string(row) + ", " + std::to_string(col) +
                            ") outside a tile of shape " + shape_.str());
  return at(row * shape_.cols() + col);
}

double Tile::at(std::int64_t i, std::int64_t j, std::int64_t k) const {
  if (shape_.rank != 3 || i < 0 || i >= shape_[0] || j < 0 || j >= shape_[1] || k < 0 ||
      k >= shape_[2])
    throw std::out_of_range(
        fmt::format("tile index ({}, {}, {}) outside a tile of shape {}", i, j, k, shape_.str()));
  return at((i * shape_[1] + j) * shape_[2] + k);
}

#if !defined(__SANITIZE_ADDRESS__)
namespace {
// A thread's spare Tile::Data records. A tile stays on the thread that made it (its reference
// count is not atomic), so the list needs no lock. malloc/free of a record was ~6 % of a small
// tl.load.
class DataRecycler {
 public:
  DataRecycler() = default;
  DataRecycler(const DataRecycler&) = delete;
  DataRecycler& operator=(const DataRecycler&) = delete;
  ~DataRecycler() {
    while (head_) ::operator delete(std::exchange(head_, head_->next));
  }
  void* take(std::size_t bytes) {
    if (!head_) return ::operator new(bytes);
    --count_;
    return std::exchange(head_, head_->next);
  }
  void give(void* p) {
    if (count_ == kKeep) {  // a burst of live tiles went: give the memory back
      ::operator delete(p);
      return;
    }
    ++count_;
    head_ = ::new (p) Node{head_};
  }

 private:
  struct Node {
    Node* next;
  };
  static constexpr std::size_t kKeep = 4096;
  Node* head_ = nullptr;
  std::size_t count_ = 0;
};

thread_local DataRecycler data_recycler;
}  // namespace

void* Tile::Data::operator new(std::size_t bytes) {
  return data_recycler.take(bytes);
}

void Tile::Data::operator delete(void* p, std::size_t) noexcept {
  data_recycler.give(p);
}
#else
// Sanitizer builds: malloc, so that a use of a dropped tile's record is still reported.
void* Tile::Data::operator new(std::size_t bytes) {
  return ::operator new(bytes);
}

void Tile::Data::operator delete(void* p, std::size_t) noexcept {
  ::operator delete(p);
}
#endif

Tile::Data::~Data() {
  if (deferred) deferred->forget(*this);
  if (sram) sram->free(held);
}

void Tile::copy_deferred() const {
  data_->deferred->materialize(*data_);
}

const std::optional<Tile::Source>& Tile::source() const {
  static const std::optional<Source> none;
  return data_ ? data_->source : none;
}

Tile Tile::to(DType t) const {
  if (t == dtype_) return *this;
  TileOwner& ctx = context_of(*this);
  ctx.charge_vector(static_cast<std::uint64_t>(numel()), VectorOp::convert);
  Tile r = ctx.make_tile(shape_, t);
  if (!compute_values(ctx, r, {this}) || numel() == 0) return r;
  need_values(*this);
  const auto n = static_cast<std::size_t>(numel());
  if (is_integer(dtype_) && is_integer(t)) {
    store_i64(to_i64(), r);  // wraps to a narrower integer
  } else if (is_integer(dtype_)) {
    const auto v = to_f64();  // exact below 2^53; one rounding to the float dtype
    encode_f64(v.data(), numel(), t, TileAccess::raw(r));
  } else {
    std::vector<float> v(n);
    decode_f32(dtype_, raw(), numel(), v.data());
    store_f32(v, r);
  }
  return r;
}

Tile Tile::reshape(Shape s) const {
  if (s.numel() != numel())
    context_of(*this).fault("reshape of a tile of shape " + shape_.str() + " to " + s.str() +
                            ": the number of elements must stay the same");
  return TileAccess::share(*this, s);
}

Tile Tile::column() const {
  return reshape(Shape{numel(), 1});
}
Tile Tile::row() const {
  return reshape(Shape{1, numel()});
}

// ---- Operations ------------------------------------------------------------------------------

Tile operator+(const Tile& a, const Tile& b) {
  return arith(
      a, b, "+", VectorOp::simple, [](float x, float y) { return x + y; }, wrap_add);
}
Tile operator-(const Tile& a, const Tile& b) {
  return arith(
      a, b, "-", VectorOp::simple, [](float x, float y) { return x - y; }, wrap_sub);
}
Tile operator*(const Tile& a, const Tile& b) {
  return arith(
      a, b, "*", VectorOp::simple, [](float x, float y) { return x * y; }, wrap_mul);
}
Tile operator/(const Tile& a, const Tile& b) {
  const DType p = promote(a.dtype(), b.dtype());
  return binary(
      a, b, "/", VectorOp::divide, float_result(p), false, [](float x, float y) { return x / y; },
      [](std::int64_t x, std::int64_t) { return x; });
}

Tile operator+(const Tile& a, double s) {
  return with_scalar(
      a, s, "+", VectorOp::simple, [](float x, float y) { return x + y; }, wrap_add);
}
Tile operator-(const Tile& a, double s) {
  return with_scalar(
      a, s, "-", VectorOp::simple, [](float x, float y) { return x - y; }, wrap_sub);
}
Tile operator*(const Tile& a, double s) {
  return with_scalar(
      a, s, "*", VectorOp::simple, [](float x, float y) { return x * y; }, wrap_mul);
}
Tile operator/(const Tile& a, double s) {
  const auto sf = static_cast<float>(s);
  return float_fn(a, "/", VectorOp::divide, [sf](float x) { return x / sf; });
}
Tile operator+(double s, const Tile& a) {
  return a + s;
}
Tile operator-(double s, const Tile& a) {
  return with_scalar(
      a, s, "-", VectorOp::simple, [](float x, float y) { return y - x; },
      [](std::int64_t x, std::int64_t y) { return wrap_sub(y, x); });
}
Tile operator*(double s, const Tile& a) {
  return a * s;
}
Tile operator/(double s, const Tile& a) {
  const auto sf = static_cast<float>(s);
  return float_fn(a, "/", VectorOp::divide, [sf](float x) { return sf / x; });
}
Tile operator-(const Tile& a) {
  return a * -1.0;
}

Tile operator<(const Tile& a, const Tile& b) {
  return compare(a, b, "<", [](auto x, auto y) { return x < y; });
}
Tile operator<=(const Tile& a, const Tile& b) {
  return compare(a, b, "<=", [](auto x, auto y) { return x <= y; });
}
Tile operator>(const Tile& a, const Tile& b) {
  return compare(a, b, ">", [](auto x, auto y) { return x > y; });
}
Tile operator>=(const Tile& a, const Tile& b) {
  return compare(a, b, ">=", [](auto x, auto y) { return x >= y; });
}
Tile operator==(const Tile& a, const Tile& b) {
  return compare(a, b, "==", [](auto x, auto y) { return x == y; });
}
Tile operator!=(const Tile& a, const Tile& b) {
  return compare(a, b, "!=", [](auto x, auto y) { return x != y; });
}
Tile operator<(const Tile& a, double s) {
  return compare_scalar(a, s, "<", [](auto x, auto y) { return x < y; });
}
Tile operator<=(const Tile& a, double s) {
  return compare_scalar(a, s, "<=", [](auto x, auto y) { return x <= y; });
}
Tile operator>(const Tile& a, double s) {
  return compare_scalar(a, s, ">", [](auto x, auto y) { return x > y; });
}
Tile operator>=(const Tile& a, double s) {
  return compare_scalar(a, s, ">=", [](auto x, auto y) { return x >= y; });
}
Tile operator==(const Tile& a, double s) {
  return compare_scalar(a, s, "==", [](auto x, auto y) { return x == y; });
}
Tile operator!=(const Tile& a, double s) {
  return compare_scalar(a, s, "!=", [](auto x, auto y) { return x != y; });
}

Tile floordiv(const Tile& a, const Tile& b) {
  if (!is_integer(a.dtype()) || !is_integer(b.dtype()))
    context_of(a, b).fault(
        fmt::format("floordiv: needs integer tiles, got {} and {}; for floats use floor(a / b)",
                    dtype_name(a.dtype()), dtype_name(b.dtype())));
  return arith(
      a, b, "floordiv", VectorOp::divide, [](float x, float) { return x; }, int_div);
}
Tile floordiv(const Tile& a, double s) {
  TileOwner& ctx = context_of(a);
  if (!is_integer(a.dtype()) || !integral(s))
    ctx.fault(
        fmt::format("floordiv: needs an integer tile and an integer divisor, got {} and {}; "
                    "for floats use floor(a / s)",
                    dtype_name(a.dtype()), s));
  return with_scalar(
      a, s, "floordiv", VectorOp::divide, [](float x, float) { return x; }, int_div);
}
Tile operator%(const Tile& a, const Tile& b) {
  return arith(
      a, b, "%", VectorOp::divide, [](float x, float y) { return std::fmod(x, y); }, int_rem);
}
Tile operator%(const Tile& a, double s) {
  return with_scalar(
      a, s, "%", VectorOp::divide, [](float x, float y) { return std::fmod(x, y); }, int_rem);
}

Tile operator&(const Tile& a, const Tile& b) {
  return bitwise(a, b, "&", [](auto x, auto y) { return x & y; });
}
Tile operator|(const Tile& a, const Tile& b) {
  return bitwise(a, b, "|", [](auto x, auto y) { return x | y; });
}
Tile operator^(const Tile& a, const Tile& b) {
  return bitwise(a, b, "^", [](auto x, auto y) { return x ^ y; });
}
Tile operator~(const Tile& a) {
  if (!is_integer(a.dtype()))
    context_of(a).fault(
        fmt::format("~: needs an integer or bool tile, got {}; for a float mask "
                    "use (a == 0)",
                    dtype_name(a.dtype())));
  const bool logical = a.dtype() == DType::boolean;
  return unary(
      a, "~", VectorOp::simple, a.dtype(), true, [](float x) { return x; },
      [logical](std::int64_t x) -> std::int64_t { return logical ? !x : ~x; });
}
Tile operator<<(const Tile& a, const Tile& b) {
  return shift(a, b, "<<", true);
}
Tile operator>>(const Tile& a, const Tile& b) {
  return shift(a, b, ">>", false);
}
Tile operator<<(const Tile& a, int s) {
  return shift_scalar(a, s, "<<", true);
}
Tile operator>>(const Tile& a, int s) {
  return shift_scalar(a, s, ">>", false);
}

Tile maximum(const Tile& a, const Tile& b) {
  const DType t = promote(a.dtype(), b.dtype());
  return binary(
      a, b, "maximum", VectorOp::simple, t, is_integer(t),
      [](float x, float y) { return std::isnan(x) || x > y ? x : y; },
      [](std::int64_t x, std::int64_t y) { return std::max(x, y); });
}
Tile minimum(const Tile& a, const Tile& b) {
  const DType t = promote(a.dtype(), b.dtype());
  return binary(
      a, b, "minimum", VectorOp::simple, t, is_integer(t),
      [](float x, float y) { return std::isnan(x) || x < y ? x : y; },
      [](std::int64_t x, std::int64_t y) { return std::min(x, y); });
}

Tile exp(const Tile& a) {
  return float_fn(a, "exp", VectorOp::exp, [](float x) { return std::exp(x); });
}
Tile exp2(const Tile& a) {
  return float_fn(a, "exp2", VectorOp::exp, [](float x) { return std::exp2(x); });
}
Tile log(const Tile& a) {
  return float_fn(a, "log", VectorOp::exp, [](float x) { return std::log(x); });
}
Tile log2(const Tile& a) {
  return float_fn(a, "log2", VectorOp::exp, [](float x) { return std::log2(x); });
}
Tile sqrt(const Tile& a) {
  return float_fn(a, "sqrt", VectorOp::sqrt, [](float x) { return std::sqrt(x); });
}
Tile rsqrt(const Tile& a) {
  return float_fn(a, "rsqrt", VectorOp::sqrt, [](float x) { return 1.0f / std::sqrt(x); });
}
Tile tanh(const Tile& a) {
  return float_fn(a, "tanh", VectorOp::transcendental, [](float x) { return std::tanh(x); });
}
Tile sigmoid(const Tile& a) {
  return float_fn(a, "sigmoid", VectorOp::transcendental,
                  [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}
Tile erf(const Tile& a) {
  return float_fn(a, "erf", VectorOp::transcendental, [](float x) { return std::erf(x); });
}
Tile pow(const Tile& a, const Tile& b) {
  return binary(
      a, b, "pow", VectorOp::transcendental, float_result(promote(a.dtype(), b.dtype())), false,
      [](float x, float y) { return std::pow(x, y); },
      [](std::int64_t x, std::int64_t) { return x; });
}
Tile pow(const Tile& a, double s) {
  const auto sf = static_cast<float>(s);
  return float_fn(a, "pow", VectorOp::transcendental, [sf](float x) { return std::pow(x, sf); });
}
Tile floor(const Tile& a) {
  return float_fn(a, "floor", VectorOp::simple, [](float x) { return std::floor(x); });
}
Tile ceil(const Tile& a) {
  return float_fn(a, "ceil", VectorOp::simple, [](float x) { return std::ceil(x); });
}
Tile abs(const Tile& a) {
  return unary(
      a, "abs", VectorOp::simple, a.dtype(), is_integer(a.dtype()),
      [](float x) { return std::fabs(x); },
      [](std::int64_t x) { return x < 0 ? wrap_sub(0, x) : x; });
}

Tile where(const Tile& mask, const Tile& a, const Tile& b) {
  TileOwner& ctx = context_of(mask, a);
  context_of(a, b);
  const Shape s =
      broadcast(ctx, broadcast(ctx, mask.shape(), a.shape(), "where"), b.shape(), "where");
  const DType out = promote(a.dtype(), b.dtype());
  ctx.charge_vector(static_cast<std::uint64_t>(s.numel()), VectorOp::simple);
  Tile r = ctx.make_tile(s, out);
  if (!compute_values(ctx, r, {&mask, &a, &b})) return r;
  const auto m = expand(mask.to_mask(), mask.shape(), s);
  auto pick = [&](auto av, auto bv) {
    av = expand(std::move(av), a.shape(), s);
    bv = expand(std::move(bv), b.shape(), s);
    for (std::size_t i = 0; i < m.size(); ++i)
      if (!m[i]) av[i] = bv[i];
    return av;
  };
  if (is_integer(out))
    store_i64(pick(a.to_i64(), b.to_i64()), r);
  else
    store_f32(pick(a.to_f32(), b.to_f32()), r);
  return r;
}

Tile where(const Tile& mask, const Tile& a, double b) {
  TileOwner& ctx = context_of(mask, a);
  return where(mask, a, ctx.filled("full", Shape{1}, b, a.dtype()));
}

Tile sum(const Tile& a, int axis) {
  return summation(a, axis, "sum", false);
}
Tile cumsum(const Tile& a, int axis) {
  return summation(a, axis, "cumsum", true);
}
Tile max(const Tile& a, int axis) {
  return extreme(a, axis, "max", Extreme::max, false);
}
Tile min(const Tile& a, int axis) {
  return extreme(a, axis, "min", Extreme::min, false);
}
Tile argmax(const Tile& a, int axis) {
  return extreme(a, axis, "argmax", Extreme::max, true);
}
Tile argmin(const Tile& a, int axis) {
  return extreme(a, axis, "argmin", Extreme::min, true);
}

Tile permute(const Tile& a, std::initializer_list<int> dims) {
  TileOwner& ctx = context_of(a);
  const Shape& in = a.shape();
  std::array<int, 3> p{};
  std::array<bool, 3> seen{};
  bool ok = static_cast<int>(dims.size()) == in.rank;
  int k = 0;
  for (int d : dims) {
    if (!ok || d < 0 || d >= in.rank || seen[static_cast<std::size_t>(d)]) {
      ok = false;
      break;
    }
    seen[static_cast<std::size_t>(d)] = true;
    p[static_cast<std::size_t>(k++)] = d;
  }
  if (!ok) {
    std::string given;
    for (int d : dims) given += (given.empty() ? "" : ", ") + std::to_string(d);
    ctx.fault(fmt::format("permute: ({}) is not a permutation of the {} axes of a {} tile", given,
                          in.rank, in.str()));
  }
  Shape out;
  out.rank = in.rank;
  for (int i = 0; i < in.rank; ++i)
    out.dims[static_cast<std::size_t>(i)] = in[p[static_cast<std::size_t>(i)]];
  // Strides of a's axes, then the source of each output element in row-major order.
  std::array<std::int64_t, 3> stride{1, 1, 1};
  for (int i = in.rank - 2; i >= 0; --i)
    stride[static_cast<std::size_t>(i)] = stride[static_cast<std::size_t>(i + 1)] * in[i + 1];
  const auto o3 = dims3(out);
  std::array<std::int64_t, 3> s3{0, 0, 0};  // the stride in a of each (padded) output axis
  for (int i = 0; i < in.rank; ++i)
    s3[static_cast<std::size_t>(3 - in.rank + i)] =
        stride[static_cast<std::size_t>(p[static_cast<std::size_t>(i)])];
  Index src(static_cast<std::size_t>(out.numel()));
  std::size_t n = 0;
  for (std::int64_t i = 0; i < o3[0]; ++i)
    for (std::int64_t j = 0; j < o3[1]; ++j)
      for (std::int64_t l = 0; l < o3[2]; ++l) src[n++] = i * s3[0] + j * s3[1] + l * s3[2];
  return gather(ctx, a, nullptr, out, src);
}

Tile trans(const Tile& a) {
  if (a.shape().rank != 2)
    context_of(a).fault(
        fmt::format("trans: needs a 2D tile, got {}; for a 3D tile give the order "
                    "of the axes with permute(a, {{...}})",
                    a.shape().str()));
  return permute(a, {1, 0});
}

Tile broadcast_to(const Tile& a, Shape shape) {
  TileOwner& ctx = context_of(a);
  const bool ok = shape.rank >= a.shape().rank && [&] {
    const auto f = dims3(a.shape()), t = dims3(shape);
    for (std::size_t i = 0; i < 3; ++i)
      if (f[i] != t[i] && f[i] != 1) return false;
    return true;
  }();
  if (!ok)
    ctx.fault(
        fmt::format("broadcast_to: a {} tile does not broadcast to {} (aligned at the last "
                    "dimension, each dimension must match or be 1)",
                    a.shape().str(), shape.str()));
  Index src = broadcast_index(a.shape(), shape);
  if (src.empty()) {  // same elements, maybe a new rank: a copy
    src.resize(static_cast<std::size_t>(shape.numel()));
    std::iota(src.begin(), src.end(), std::int64_t{0});
  }
  return gather(ctx, a, nullptr, shape, src);
}

Tile cat(const Tile& a, const Tile& b, int axis) {
  TileOwner& ctx = context_of(a, b);
  const Shape &sa = a.shape(), &sb = b.shape();
  bool ok = sa.rank == sb.rank && axis >= 0 && axis < sa.rank && a.dtype() == b.dtype();
  for (int i = 0; ok && i < sa.rank; ++i) ok = i == axis || sa[i] == sb[i];
  if (!ok)
    ctx.fault(
        fmt::format("cat: cannot join a {} {} tile and a {} {} tile along axis {}: they "
                    "need the same dtype (convert with .to()), the same rank, an axis in "
                    "0 .. rank - 1, and equal sizes in every other axis",
                    sa.str(), dtype_name(a.dtype()), sb.str(), dtype_name(b.dtype()), axis));
  Shape out = sa;
  out.dims[static_cast<std::size_t>(axis)] = sa[axis] + sb[axis];
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= sa[i];
  for (int i = axis + 1; i < sa.rank; ++i) inner *= sa[i];
  const std::int64_t la = sa[axis] * inner, lb = sb[axis] * inner;
  Index src;
  src.reserve(static_cast<std::size_t>(out.numel()));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t k = 0; k < la; ++k) src.push_back(o * la + k);
    for (std::int64_t k = 0; k < lb; ++k) src.push_back(a.numel() + o * lb + k);
  }
  return gather(ctx, a, &b, out, src);
}

Tile dot(const Tile& a, const Tile& b) {
  TileOwner& ctx = context_of(a, b);
  if (a.shape().rank != 2 || b.shape().rank != 2 || a.shape()[1] != b.shape()[0])
    ctx.fault("dot: needs (M x K) . (K x N) tiles, got " + a.shape().str() + " . " +
              b.shape().str());
  if (is_integer(a.dtype()) != is_integer(b.dtype()))
    ctx.fault("dot: both tiles must be integer or both floating point");
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const bool ints = is_integer(a.dtype());
  const DType out = !ints                                                ? DType::f32
                    : a.dtype() == DType::i64 || b.dtype() == DType::i64 ? DType::i64
                                                                         : DType::i32;
  ctx.charge_vector(static_cast<std::uint64_t>(m * n * k), VectorOp::simple);
  Tile r = ctx.make_tile(Shape{m, n}, out);
  if (!compute_values(ctx, r, {&a, &b})) return r;
  if (ints) {
    const auto av = a.to_i64(), bv = b.to_i64();
    std::vector<std::int64_t> rv(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc = wrap_add(acc, wrap_mul(av[static_cast<std::size_t>(i * k + p)],
                                       bv[static_cast<std::size_t>(p * n + j)]));
        rv[static_cast<std::size_t>(i * n + j)] = acc;
      }
    store_i64(rv, r);
  } else {
    const auto av = a.to_f32(), bv = b.to_f32();
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const Mat> am(av.data(), m, k), bm(bv.data(), k, n);
    std::vector<float> rv(static_cast<std::size_t>(m * n));
    Eigen::Map<Mat>(rv.data(), m, n).noalias() = am * bm;
    store_f32(rv, r);
  }
  return r;
}

}  // namespace cubesim::tl
