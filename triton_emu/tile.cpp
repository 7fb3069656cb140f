#include "triton_emu/tile.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>

#include "triton_emu/backends/cpu_convert.hpp"
#include "triton_emu/context.hpp"
#include "triton_emu/deferred_loads.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::tl {

// ---- Shape ----------------------------------------------------------------------------------

Shape::Shape(std::initializer_list<std::int64_t> d) {
  if (d.size() == 0 || d.size() > 2)
    throw std::invalid_argument("a tile shape has 1 or 2 dimensions, got " +
                                std::to_string(d.size()));
  rank = static_cast<int>(d.size());
  std::size_t i = 0;
  for (std::int64_t v : d) dims[i++] = v;
}

bool Shape::operator==(const Shape& o) const {
  return rank == o.rank && dims[0] == o.dims[0] && (rank == 1 || dims[1] == o.dims[1]);
}

std::string Shape::str() const {
  return rank == 1 ? "[" + std::to_string(dims[0]) + "]"
                   : "[" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + "]";
}

// ---- Access to internals for the operations below --------------------------------------------

struct TileAccess {
  static std::byte* raw(Tile& t) { return t.data_->bytes.data(); }
  static void drop_values(Tile& t) {
    if (t.data_) t.data_->bytes.clear();
  }
  static Tile share(const Tile& t, Shape s) {
    Tile r = t;
    r.shape_ = s;
    return r;
  }
};

namespace {

using backends::convert_block;

Context& context_of(const Tile& a) {
  if (!a.valid()) throw std::logic_error("operation on an empty tile (made by Tile())");
  return a.context();
}

Context& context_of(const Tile& a, const Tile& b) {
  Context& c = context_of(a);
  if (&context_of(b) != &c) c.fault("tiles of two different programs cannot be combined");
  return c;
}

void need_values(const Tile& t) {
  if (!t.has_values() && t.numel() > 0)
    throw std::logic_error(
        "this tile has no values: the run is timing-only (--timing-only), which moves and "
        "computes no data; run without it to read values");
}

bool is_float(DType t) {
  return t != DType::i32;
}

// Whether to compute the values of result `r`. Functional runs always do. Timing-only runs
// compute index math only: i32 results whose operands all have values (arange, offsets,
// comparisons, masks), so masks, and therefore timing, are the same as in a functional run.
bool compute_values(Context& ctx, Tile& r, std::initializer_list<const Tile*> inputs) {
  if (!ctx.timing_only()) return true;
  bool ok = r.dtype() == DType::i32;
  for (const Tile* t : inputs) ok = ok && (t->has_values() || t->numel() == 0);
  if (!ok) TileAccess::drop_values(r);
  return ok;
}

DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::i32) return b;
  if (b == DType::i32) return a;
  return DType::f32;  // f16 with bf16, or either with f32
}

Shape broadcast(Context& ctx, const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  const std::int64_t ar = a.rows(), ac = a.cols(), br = b.rows(), bc = b.cols();
  auto dim = [&](std::int64_t x, std::int64_t y) -> std::int64_t {
    if (x == y || y == 1) return x;
    if (x == 1) return y;
    ctx.fault(std::string(op) + ": shapes " + a.str() + " and " + b.str() +
              " do not broadcast (each dimension must match or be 1)");
  };
  const std::int64_t r = dim(ar, br), c = dim(ac, bc);
  if (a.rank == 1 && b.rank == 1) return Shape{c};
  return Shape{r, c};
}

// Flat index of (i, j) of a broadcast result in an operand of shape s.
inline std::int64_t bindex(const Shape& s, std::int64_t i, std::int64_t j) {
  const std::int64_t r = s.rows(), c = s.cols();
  return (r == 1 ? 0 : i) * c + (c == 1 ? 0 : j);
}

// Float to int saturates, NaN gives 0 (documented in docs/writing-kernels.md): a plain cast of
// NaN or of a value outside the i32 range is undefined behaviour.
std::int32_t saturate_i32(float x) {
  return std::isnan(x)         ? 0
         : x >= 2147483647.0f  ? std::numeric_limits<std::int32_t>::max()
         : x <= -2147483648.0f ? std::numeric_limits<std::int32_t>::min()
                               : static_cast<std::int32_t>(x);
}

void from_f32(const std::vector<float>& v, Tile& out) {
  if (out.dtype() == DType::i32) {
    auto* d = reinterpret_cast<std::int32_t*>(TileAccess::raw(out));
    for (std::size_t i = 0; i < v.size(); ++i) d[i] = saturate_i32(v[i]);
    return;
  }
  convert_block(DType::f32, v.data(), static_cast<std::int64_t>(v.size()), out.dtype(),
                TileAccess::raw(out), static_cast<std::int64_t>(v.size()), 1,
                static_cast<std::int64_t>(v.size()));
}

void from_i32(const std::vector<std::int32_t>& v, Tile& out) {
  if (out.dtype() == DType::i32) {
    std::memcpy(TileAccess::raw(out), v.data(), v.size() * 4);
    return;
  }
  std::vector<float> f(v.begin(), v.end());
  from_f32(f, out);
}

template <typename F>
Tile binary_f(const Tile& a, const Tile& b, DType out, const char* name, F f) {
  Context& ctx = context_of(a, b);
  const Shape s = broadcast(ctx, a.shape(), b.shape(), name);
  ctx.charge_vector(static_cast<std::uint64_t>(s.numel()));
  Tile r = ctx.make_tile(s, out);
  if (!compute_values(ctx, r, {&a, &b})) return r;
  need_values(a);
  need_values(b);
  const auto av = a.to_f32(), bv = b.to_f32();
  std::vector<float> rv(static_cast<std::size_t>(s.numel()));
  if (a.shape() == b.shape()) {
    for (std::size_t i = 0; i < rv.size(); ++i) rv[i] = f(av[i], bv[i]);
  } else {
    const std::int64_t rows = s.rows(), cols = s.cols();
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        rv[static_cast<std::size_t>(i * cols + j)] =
            f(av[static_cast<std::size_t>(bindex(a.shape(), i, j))],
              bv[static_cast<std::size_t>(bindex(b.shape(), i, j))]);
  }
  from_f32(rv, r);
  return r;
}

// `as_masks`: the operands are read as masks (nonzero is 1), not converted to integers.
template <typename F>
Tile binary_i(const Tile& a, const Tile& b, const char* name, F f, bool as_masks = false) {
  Context& ctx = context_of(a, b);
  const Shape s = broadcast(ctx, a.shape(), b.shape(), name);
  ctx.charge_vector(static_cast<std::uint64_t>(s.numel()));
  Tile r = ctx.make_tile(s, DType::i32);
  if (!compute_values(ctx, r, {&a, &b})) return r;
  need_values(a);
  need_values(b);
  const auto av = as_masks ? a.to_mask() : a.to_i32(), bv = as_masks ? b.to_mask() : b.to_i32();
  std::vector<std::int32_t> rv(static_cast<std::size_t>(s.numel()));
  const std::int64_t rows = s.rows(), cols = s.cols();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      rv[static_cast<std::size_t>(i * cols + j)] =
          f(av[static_cast<std::size_t>(bindex(a.shape(), i, j))],
            bv[static_cast<std::size_t>(bindex(b.shape(), i, j))]);
  from_i32(rv, r);
  return r;
}

// Arithmetic: integer math (wrapping) for two i32 tiles, else f32 math rounded to the result.
template <typename FF, typename FI>
Tile arith(const Tile& a, const Tile& b, const char* name, FF ff, FI fi) {
  if (a.dtype() == DType::i32 && b.dtype() == DType::i32) return binary_i(a, b, name, fi);
  return binary_f(a, b, promote(a.dtype(), b.dtype()), name, ff);
}

template <typename F>
Tile compare(const Tile& a, const Tile& b, const char* name, F f) {
  if (a.dtype() == DType::i32 && b.dtype() == DType::i32)
    return binary_i(a, b, name, [f](std::int32_t x, std::int32_t y) -> std::int32_t {
      return f(static_cast<double>(x), static_cast<double>(y)) ? 1 : 0;
    });
  return binary_f(a, b, DType::i32, name,
                  [f](float x, float y) -> float { return f(x, y) ? 1.0f : 0.0f; });
}

template <typename F>
Tile unary_f(const Tile& a, DType out, F f) {
  Context& ctx = context_of(a);
  ctx.charge_vector(static_cast<std::uint64_t>(a.numel()));
  Tile r = ctx.make_tile(a.shape(), out);
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  auto v = a.to_f32();
  for (float& x : v) x = f(x);
  from_f32(v, r);
  return r;
}

template <typename F>
Tile unary_i(const Tile& a, F f) {
  Context& ctx = context_of(a);
  ctx.charge_vector(static_cast<std::uint64_t>(a.numel()));
  Tile r = ctx.make_tile(a.shape(), DType::i32);
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  auto v = a.to_i32();
  for (auto& x : v) x = f(x);
  from_i32(v, r);
  return r;
}

bool integral(double s) {
  return std::nearbyint(s) == s && std::abs(s) < 2147483648.0;
}

// Scalar operand: an i32 tile stays i32 with an integral scalar; otherwise float math.
template <typename FF, typename FI>
Tile with_scalar(const Tile& a, double s, FF ff, FI fi) {
  if (a.dtype() == DType::i32 && integral(s)) {
    const auto si = static_cast<std::int32_t>(s);
    return unary_i(a, [&](std::int32_t x) { return fi(x, si); });
  }
  const DType out = is_float(a.dtype()) ? a.dtype() : DType::f32;
  const auto sf = static_cast<float>(s);
  return unary_f(a, out, [&](float x) { return ff(x, sf); });
}

std::int32_t wrap(std::int64_t v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
}

Tile reduce(const Tile& a, int axis, const char* name, float init, float (*f)(float, float)) {
  Context& ctx = context_of(a);
  if (axis < 0 || axis >= a.shape().rank)
    ctx.fault(std::string(name) + ": axis " + std::to_string(axis) + " of a tile of shape " +
              a.shape().str() + "; use 0" + (a.shape().rank == 2 ? " or 1" : ""));
  const std::int64_t rows = a.shape().rows(), cols = a.shape().cols();
  // A 1D tile reduces along its only axis (cols here, since it is 1 x n).
  const bool along_cols = a.shape().rank == 1 || axis == 1;
  const Shape s = along_cols ? Shape{rows} : Shape{cols};
  ctx.charge_vector(static_cast<std::uint64_t>(a.numel()));
  Tile r = ctx.make_tile(s, a.dtype());
  if (!compute_values(ctx, r, {&a})) return r;
  need_values(a);
  const auto v = a.to_f32();
  std::vector<float> out(static_cast<std::size_t>(s.numel()), init);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      float& acc = out[static_cast<std::size_t>(along_cols ? i : j)];
      acc = f(acc, v[static_cast<std::size_t>(i * cols + j)]);
    }
  from_f32(out, r);
  return r;
}

}  // namespace

// ---- Tile ------------------------------------------------------------------------------------

double element_value(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::f16: {
      Eigen::half h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(static_cast<float>(h));
    }
    case DType::bf16: {
      Eigen::bfloat16 h;
      std::memcpy(&h, p, 2);
      return static_cast<double>(static_cast<float>(h));
    }
    case DType::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::i32: {
      std::int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
  }
  return 0;
}

Context& Tile::context() const {
  if (!ctx_) throw std::logic_error("empty tile (made by Tile())");
  if (data_->launch == 0 || data_->launch != data_->sram->launch)
    throw UsageError(
        "a tile of shape " + shape_.str() + " (" + std::string(dtype_name(dtype_)) +
        ") was used after the launch that made it ended: a tile lives in its PE's SRAM only "
        "while its launch runs. Keep values on the host instead (to_f32(), at() still work), or "
        "store the tile to memory before the kernel returns and load it in the next launch");
  return *ctx_;
}

std::vector<float> Tile::to_f32() const {
  need_values(*this);
  const auto n = static_cast<std::size_t>(numel());
  std::vector<float> v(n);
  if (dtype_ == DType::i32) {
    const auto* p = reinterpret_cast<const std::int32_t*>(raw());
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(p[i]);
  } else if (n > 0) {
    convert_block(dtype_, raw(), static_cast<std::int64_t>(n), DType::f32, v.data(),
                  static_cast<std::int64_t>(n), 1, static_cast<std::int64_t>(n));
  }
  return v;
}

std::vector<double> Tile::to_f64() const {
  if (dtype_ == DType::i32) {
    const auto i = to_i32();
    return {i.begin(), i.end()};
  }
  const auto f = to_f32();
  return {f.begin(), f.end()};
}

std::vector<std::int32_t> Tile::to_i32() const {
  need_values(*this);
  const auto n = static_cast<std::size_t>(numel());
  std::vector<std::int32_t> v(n);
  if (dtype_ == DType::i32) {
    if (n) std::memcpy(v.data(), raw(), n * 4);
  } else {
    const auto f = to_f32();
    for (std::size_t i = 0; i < n; ++i) v[i] = saturate_i32(f[i]);
  }
  return v;
}

std::vector<std::int32_t> Tile::to_mask() const {
  if (dtype_ == DType::i32) {
    auto v = to_i32();
    for (auto& x : v) x = x != 0;
    return v;
  }
  const auto f = to_f32();
  std::vector<std::int32_t> v(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) v[i] = f[i] != 0.0f;  // NaN != 0: true
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
  if (t == DType::i32 || dtype_ == DType::i32) return unary_f(*this, t, [](float x) { return x; });
  Context& ctx = context_of(*this);
  ctx.charge_vector(static_cast<std::uint64_t>(numel()));
  Tile r = ctx.make_tile(shape_, t);
  if (!compute_values(ctx, r, {this}) || numel() == 0) return r;
  convert_block(dtype_, raw(), numel(), t, TileAccess::raw(r), numel(), 1, numel());
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
      a, b, "+", [](float x, float y) { return x + y; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{x} + y); });
}
Tile operator-(const Tile& a, const Tile& b) {
  return arith(
      a, b, "-", [](float x, float y) { return x - y; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{x} - y); });
}
Tile operator*(const Tile& a, const Tile& b) {
  return arith(
      a, b, "*", [](float x, float y) { return x * y; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{x} * y); });
}
Tile operator/(const Tile& a, const Tile& b) {
  if (a.dtype() == DType::i32 && b.dtype() == DType::i32)
    return binary_f(a, b, DType::f32, "/", [](float x, float y) { return x / y; });
  return binary_f(a, b, promote(a.dtype(), b.dtype()), "/", [](float x, float y) { return x / y; });
}

Tile operator+(const Tile& a, double s) {
  return with_scalar(
      a, s, [](float x, float y) { return x + y; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{x} + y); });
}
Tile operator-(const Tile& a, double s) {
  return a + (-s);
}
Tile operator*(const Tile& a, double s) {
  return with_scalar(
      a, s, [](float x, float y) { return x * y; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{x} * y); });
}
Tile operator/(const Tile& a, double s) {
  const DType out = is_float(a.dtype()) ? a.dtype() : DType::f32;
  const auto sf = static_cast<float>(s);
  return unary_f(a, out, [sf](float x) { return x / sf; });
}
Tile operator+(double s, const Tile& a) {
  return a + s;
}
Tile operator-(double s, const Tile& a) {
  return with_scalar(
      a, s, [](float x, float y) { return y - x; },
      [](std::int32_t x, std::int32_t y) { return wrap(std::int64_t{y} - x); });
}
Tile operator*(double s, const Tile& a) {
  return a * s;
}
Tile operator/(double s, const Tile& a) {
  const DType out = is_float(a.dtype()) ? a.dtype() : DType::f32;
  const auto sf = static_cast<float>(s);
  return unary_f(a, out, [sf](float x) { return sf / x; });
}
Tile operator-(const Tile& a) {
  return a * -1.0;
}

Tile operator<(const Tile& a, const Tile& b) {
  return compare(a, b, "<", [](double x, double y) { return x < y; });
}
Tile operator<=(const Tile& a, const Tile& b) {
  return compare(a, b, "<=", [](double x, double y) { return x <= y; });
}
Tile operator>(const Tile& a, const Tile& b) {
  return compare(a, b, ">", [](double x, double y) { return x > y; });
}
Tile operator>=(const Tile& a, const Tile& b) {
  return compare(a, b, ">=", [](double x, double y) { return x >= y; });
}
Tile operator==(const Tile& a, const Tile& b) {
  return compare(a, b, "==", [](double x, double y) { return x == y; });
}
Tile operator!=(const Tile& a, const Tile& b) {
  return compare(a, b, "!=", [](double x, double y) { return x != y; });
}

namespace {
template <typename F>
Tile compare_scalar(const Tile& a, double s, F f) {
  if (a.dtype() == DType::i32)
    return unary_i(a, [&](std::int32_t x) -> std::int32_t { return f(double(x), s) ? 1 : 0; });
  Context& ctx = context_of(a);
  ctx.charge_vector(static_cast<std::uint64_t>(a.numel()));
  Tile r = ctx.make_tile(a.shape(), DType::i32);
  if (!compute_values(ctx, r, {&a})) return r;
  const auto v = a.to_f32();
  std::vector<std::int32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f(double(v[i]), s) ? 1 : 0;
  from_i32(out, r);
  return r;
}
}  // namespace

Tile operator<(const Tile& a, double s) {
  return compare_scalar(a, s, [](double x, double y) { return x < y; });
}
Tile operator<=(const Tile& a, double s) {
  return compare_scalar(a, s, [](double x, double y) { return x <= y; });
}
Tile operator>(const Tile& a, double s) {
  return compare_scalar(a, s, [](double x, double y) { return x > y; });
}
Tile operator>=(const Tile& a, double s) {
  return compare_scalar(a, s, [](double x, double y) { return x >= y; });
}
Tile operator&(const Tile& a, const Tile& b) {
  return binary_i(
      a, b, "&", [](std::int32_t x, std::int32_t y) { return (x && y) ? 1 : 0; }, true);
}
Tile operator|(const Tile& a, const Tile& b) {
  return binary_i(
      a, b, "|", [](std::int32_t x, std::int32_t y) { return (x || y) ? 1 : 0; }, true);
}

Tile maximum(const Tile& a, const Tile& b) {
  return arith(
      a, b, "maximum", [](float x, float y) { return std::max(x, y); },
      [](std::int32_t x, std::int32_t y) { return std::max(x, y); });
}
Tile minimum(const Tile& a, const Tile& b) {
  return arith(
      a, b, "minimum", [](float x, float y) { return std::min(x, y); },
      [](std::int32_t x, std::int32_t y) { return std::min(x, y); });
}

namespace {
DType float_result(DType t) {
  return is_float(t) ? t : DType::f32;
}
}  // namespace

Tile exp(const Tile& a) {
  return unary_f(a, float_result(a.dtype()), [](float x) { return std::exp(x); });
}
Tile log(const Tile& a) {
  return unary_f(a, float_result(a.dtype()), [](float x) { return std::log(x); });
}
Tile sqrt(const Tile& a) {
  return unary_f(a, float_result(a.dtype()), [](float x) { return std::sqrt(x); });
}
Tile abs(const Tile& a) {
  if (a.dtype() == DType::i32)
    return unary_i(a, [](std::int32_t x) { return x < 0 ? wrap(-std::int64_t{x}) : x; });
  return unary_f(a, a.dtype(), [](float x) { return std::fabs(x); });
}

Tile where(const Tile& mask, const Tile& a, const Tile& b) {
  Context& ctx = context_of(mask, a);
  context_of(a, b);
  const Shape s =
      broadcast(ctx, broadcast(ctx, mask.shape(), a.shape(), "where"), b.shape(), "where");
  const DType out = promote(a.dtype(), b.dtype());
  ctx.charge_vector(static_cast<std::uint64_t>(s.numel()));
  Tile r = ctx.make_tile(s, out);
  if (!compute_values(ctx, r, {&mask, &a, &b})) return r;
  const auto m = mask.to_mask();
  const std::int64_t rows = s.rows(), cols = s.cols();
  if (out == DType::i32) {
    const auto av = a.to_i32(), bv = b.to_i32();
    std::vector<std::int32_t> rv(static_cast<std::size_t>(s.numel()));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        rv[static_cast<std::size_t>(i * cols + j)] =
            m[static_cast<std::size_t>(bindex(mask.shape(), i, j))]
                ? av[static_cast<std::size_t>(bindex(a.shape(), i, j))]
                : bv[static_cast<std::size_t>(bindex(b.shape(), i, j))];
    from_i32(rv, r);
  } else {
    const auto av = a.to_f32(), bv = b.to_f32();
    std::vector<float> rv(static_cast<std::size_t>(s.numel()));
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        rv[static_cast<std::size_t>(i * cols + j)] =
            m[static_cast<std::size_t>(bindex(mask.shape(), i, j))]
                ? av[static_cast<std::size_t>(bindex(a.shape(), i, j))]
                : bv[static_cast<std::size_t>(bindex(b.shape(), i, j))];
    from_f32(rv, r);
  }
  return r;
}

Tile where(const Tile& mask, const Tile& a, double b) {
  Context& ctx = context_of(mask, a);
  return where(mask, a, ctx.full(Shape{1}, b, a.dtype()));
}

Tile sum(const Tile& a, int axis) {
  return reduce(a, axis, "sum", 0.0f, [](float x, float y) { return x + y; });
}
Tile max(const Tile& a, int axis) {
  return reduce(a, axis, "max", -std::numeric_limits<float>::infinity(),
                [](float x, float y) { return std::max(x, y); });
}
Tile min(const Tile& a, int axis) {
  return reduce(a, axis, "min", std::numeric_limits<float>::infinity(),
                [](float x, float y) { return std::min(x, y); });
}

Tile dot(const Tile& a, const Tile& b) {
  Context& ctx = context_of(a, b);
  if (a.shape().rank != 2 || b.shape().rank != 2 || a.shape()[1] != b.shape()[0])
    ctx.fault("dot: needs (M x K) . (K x N) tiles, got " + a.shape().str() + " . " +
              b.shape().str());
  if ((a.dtype() == DType::i32) != (b.dtype() == DType::i32))
    ctx.fault("dot: both tiles must be integer (i32) or both floating point");
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  const DType out = a.dtype() == DType::i32 ? DType::i32 : DType::f32;
  ctx.charge_vector(static_cast<std::uint64_t>(m * n * k));
  Tile r = ctx.make_tile(Shape{m, n}, out);
  if (!compute_values(ctx, r, {&a, &b})) return r;
  if (out == DType::i32) {
    const auto av = a.to_i32(), bv = b.to_i32();
    std::vector<std::int32_t> rv(static_cast<std::size_t>(m * n));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += std::int64_t{av[static_cast<std::size_t>(i * k + p)]} *
                 bv[static_cast<std::size_t>(p * n + j)];
        rv[static_cast<std::size_t>(i * n + j)] = wrap(acc);
      }
    from_i32(rv, r);
  } else {
    const auto av = a.to_f32(), bv = b.to_f32();
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const Mat> am(av.data(), m, k), bm(bv.data(), k, n);
    std::vector<float> rv(static_cast<std::size_t>(m * n));
    Eigen::Map<Mat>(rv.data(), m, n).noalias() = am * bm;
    from_f32(rv, r);
  }
  return r;
}

}  // namespace cubesim::tl
