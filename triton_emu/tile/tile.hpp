#pragma once
// Tiles: 1D, 2D or 3D blocks of values in a PE's SRAM, Triton-style. A tile occupies SRAM from
// the moment it exists until its last copy is gone; element-wise math, reductions, scans,
// where, casts, data movement (permute, cat, broadcast_to) and dot make new tiles and cost time
// on the PE's vector unit (charged to the program that owns the tile), each operation by its
// class (components::VectorOp: simple, convert, reduce, divide, sqrt, exp, transcendental).
// docs/writing-kernels.md, "Appendix: tile operations reference", lists every operation with its
// dtypes, cost class and errors.
//
// Types: float tiles (f16, bf16, f32, f8e4m3, f8e5m2) are computed in f32 and rounded to the
// tile's dtype once per operation, as a vector unit with f32 ALUs does. Integer tiles (i8, i32,
// i64) compute exactly and wrap modulo 2^bits. bool tiles are 1-byte masks (0 or 1);
// comparisons give bool. Mixed operands promote: two integer dtypes to the wider (bool < i8 <
// i32 < i64), an integer with a float to the float, two different floats to f32; arithmetic
// on bool computes in i32. Binary operations broadcast like NumPy: shapes align at their last
// dimension (a 1D tile of n is a 1 x n row), and a dimension of 1 stretches to match.
//
// In timing-only runs tiles carry shapes but no values; reading values is then an error.

#include <array>
#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "components/dtype.hpp"
#include "components/pe/sram.hpp"

namespace cubesim::detail {
class DeferredLoads;
}  // namespace cubesim::detail

namespace cubesim::tl {

class TileOwner;

// A tile's values in its dtype. Up to kInline bytes live inside the tile's shared record, so a
// small tile (the per-call case: a 16-element f32 load) costs one allocation, not two. Never
// zeroed: every tile operation writes all of its result, and zeroing large tiles first was 5 %
// of a functional 4096^3 sharded GEMM run (its programs load 2 GiB of A).
class TileBytes {
 public:
  static constexpr std::size_t kInline = 64;
  std::byte* data() { return size_ == 0 ? nullptr : heap_ ? heap_.get() : inline_; }
  const std::byte* data() const { return size_ == 0 ? nullptr : heap_ ? heap_.get() : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // `n` uninitialised bytes; what was held before is dropped.
  void assign_uninitialised(std::size_t n) {
    heap_.reset(n > kInline ? new std::byte[n] : nullptr);
    size_ = n;
  }
  void clear() {
    heap_.reset();
    size_ = 0;
  }

 private:
  std::unique_ptr<std::byte[]> heap_;
  std::size_t size_ = 0;
  alignas(16) std::byte inline_[kInline];
};

// The value of one element of `dtype` stored at `p` (no alignment needed), exactly, as double.
double element_value(DType dtype, const std::byte* p);

struct Shape {
  std::array<std::int64_t, 3> dims{1, 1, 1};
  int rank = 1;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> d);  // {n}, {rows, cols} or {d0, d1, d2}
  static Shape of(std::int64_t rows, std::int64_t cols) { return Shape{rows, cols}; }

  // The tile as rows of its last dimension: a 3D tile [d0, d1, d2] is d0 * d1 rows of d2.
  std::int64_t rows() const { return rank == 1 ? 1 : rank == 2 ? dims[0] : dims[0] * dims[1]; }
  std::int64_t cols() const { return dims[static_cast<std::size_t>(rank - 1)]; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[static_cast<std::size_t>(i)];
    return n;
  }
  std::int64_t operator[](int i) const { return dims[static_cast<std::size_t>(i)]; }
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[4, 8]"
};

// Tiles are shared by plain (not atomic) reference counts, as their PE's SRAM account is
// (components/pe/sram.hpp): only the simulation thread creates, copies and drops them (GEMM
// workers get raw pointers to values that the job keeps alive), and std::shared_ptr's locked
// increments and decrements are a large part of a small tl.load.
template <class T>
using SimThreadShared = boost::intrusive_ref_counter<T, boost::thread_unsafe_counter>;

class Tile {
 public:
  Tile() = default;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return shape_.numel(); }
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(numel()) * dtype_size(dtype_); }
  bool has_values() const { return data_ && (!data_->bytes.empty() || data_->deferred); }
  bool valid() const { return owner_ != nullptr; }

  // Values, converted; throws std::logic_error in timing-only runs.
  std::vector<float> to_f32() const;
  std::vector<double> to_f64() const;
  // Float to int saturates at the i32 range and NaN gives 0, as Tile::to(DType::i32) does;
  // so does an i64 value outside the i32 range.
  std::vector<std::int32_t> to_i32() const;
  // Exact for integer tiles; floats saturate at the i64 range, NaN gives 0.
  std::vector<std::int64_t> to_i64() const;
  // As a mask: 1 where the element is nonzero (NaN counts as nonzero, as in C and NumPy), else 0.
  std::vector<std::int32_t> to_mask() const;
  double at(std::int64_t i) const;  // flat index, row-major
  double at(std::int64_t row, std::int64_t col) const;
  double at(std::int64_t i, std::int64_t j, std::int64_t k) const;

  // Raw storage in the tile's dtype, row-major; empty in timing-only runs.
  const std::byte* raw() const {
    if (data_ && data_->deferred) copy_deferred();
    return data_ ? data_->bytes.data() : nullptr;
  }

  // Cast (cost class convert). To a float: round to nearest even (f8: components/float8.hpp).
  // Float to integer: truncate toward zero, saturate at the range, NaN gives 0. Integer to a
  // narrower integer: wrap (keep the low bits). To bool: nonzero (NaN included) is 1.
  Tile to(DType t) const;
  Tile reshape(Shape s) const;  // same number of elements; free (no data moves)
  Tile column() const;          // a 1D tile of n as an n x 1 tile
  Tile row() const;             // a 1D tile of n as a 1 x n tile

  // Where an unmasked load read this tile from, and the memory's write generation before the
  // load: while no write has touched those bytes since, memory still holds the tile's values
  // (which lets GEMMs share one converted copy of an operand many programs load).
  struct Source {
    std::uint64_t addr = 0;
    std::int64_t row_stride = 0;
    std::uint64_t as_of = 0;
  };
  const std::optional<Source>& source() const;

 private:
  friend class detail::DeferredLoads;
  friend struct TileAccess;
  struct Data : SimThreadShared<Data> {
    TileBytes bytes;
    boost::intrusive_ptr<components::Sram> sram;  // its PE's, which `held` bytes of it are
    std::uint64_t held = 0;
    // The launch it was made in (its SRAM's tenant then): a tile kept past its launch is told
    // apart from a live one although its program is gone.
    std::uint64_t launch = 0;
    std::optional<Source> source{};
    // Set while the values are still only in memory: a load deferred its copy (deferred_loads.hpp).
    detail::DeferredLoads* deferred = nullptr;
    ~Data();
    // A tile is made and dropped by nearly every TL call: records are recycled per thread
    // instead of going through malloc (tile.cpp).
    static void* operator new(std::size_t bytes);
    static void operator delete(void* p, std::size_t bytes) noexcept;
  };
  void copy_deferred() const;
  TileOwner* owner_ = nullptr;  // the program that made it
  Shape shape_;
  DType dtype_ = DType::f32;
  boost::intrusive_ptr<Data> data_;
};

// Element-wise arithmetic and comparisons (broadcasting), with scalars on either side. `/` is
// true division: integer operands give f32 (x / 0 gives +-inf or NaN). Comparisons give bool.
// A scalar keeps an integer tile integer when it is an integer itself, else the math is float.
Tile operator+(const Tile& a, const Tile& b);
Tile operator-(const Tile& a, const Tile& b);
Tile operator*(const Tile& a, const Tile& b);
Tile operator/(const Tile& a, const Tile& b);
Tile operator+(const Tile& a, double s);
Tile operator-(const Tile& a, double s);
Tile operator*(const Tile& a, double s);
Tile operator/(const Tile& a, double s);
Tile operator+(double s, const Tile& a);
Tile operator-(double s, const Tile& a);
Tile operator*(double s, const Tile& a);
Tile operator/(double s, const Tile& a);
Tile operator-(const Tile& a);
Tile operator<(const Tile& a, const Tile& b);
Tile operator<=(const Tile& a, const Tile& b);
Tile operator>(const Tile& a, const Tile& b);
Tile operator>=(const Tile& a, const Tile& b);
Tile operator==(const Tile& a, const Tile& b);
Tile operator!=(const Tile& a, const Tile& b);
Tile operator<(const Tile& a, double s);
Tile operator<=(const Tile& a, double s);
Tile operator>(const Tile& a, double s);
Tile operator>=(const Tile& a, double s);
Tile operator==(const Tile& a, double s);
Tile operator!=(const Tile& a, double s);

// Triton's `//` on integers: the quotient truncated toward zero (as C and Triton's sdiv, not
// Python's floor). `%` on integers: the remainder with the dividend's sign (C's %, Triton's
// srem), so a == floordiv(a, b) * b + a % b. A zero divisor is a kernel fault naming the
// element; INT_MIN // -1 wraps to INT_MIN (and INT_MIN % -1 is 0). `%` on floats is fmod;
// floordiv needs integer tiles.
Tile floordiv(const Tile& a, const Tile& b);
Tile floordiv(const Tile& a, double s);
Tile operator%(const Tile& a, const Tile& b);
Tile operator%(const Tile& a, double s);

// Bitwise on integer and bool tiles (bool & bool is bool). A float operand is read as a mask
// (nonzero is true) and the result is the logical and/or/xor as bool, so masks of any dtype
// combine. ~ is bitwise not (logical not on bool).
Tile operator&(const Tile& a, const Tile& b);
Tile operator|(const Tile& a, const Tile& b);
Tile operator^(const Tile& a, const Tile& b);
Tile operator~(const Tile& a);
// Shifts of integer tiles; >> is arithmetic (sign-filling). A shift count outside 0 ..
// bits - 1 of the result's dtype is a kernel fault (LLVM makes it poison).
Tile operator<<(const Tile& a, const Tile& b);
Tile operator>>(const Tile& a, const Tile& b);
Tile operator<<(const Tile& a, int s);
Tile operator>>(const Tile& a, int s);

// Element-wise maximum/minimum; a NaN operand gives NaN (as torch.maximum).
Tile maximum(const Tile& a, const Tile& b);
Tile minimum(const Tile& a, const Tile& b);
// Float functions: an integer tile gives f32. floor and ceil cost as simple ops.
Tile exp(const Tile& a);
Tile exp2(const Tile& a);
Tile log(const Tile& a);
Tile log2(const Tile& a);
Tile sqrt(const Tile& a);
Tile rsqrt(const Tile& a);
Tile tanh(const Tile& a);
Tile sigmoid(const Tile& a);
Tile erf(const Tile& a);
Tile pow(const Tile& a, const Tile& b);
Tile pow(const Tile& a, double s);
Tile floor(const Tile& a);
Tile ceil(const Tile& a);
Tile abs(const Tile& a);  // integer abs wraps: abs(INT_MIN) is INT_MIN
// mask ? a : b, element-wise with broadcasting; a and b promote to a common dtype.
Tile where(const Tile& mask, const Tile& a, const Tile& b);
Tile where(const Tile& mask, const Tile& a, double b);

// Reductions over an axis (any axis of a 1D, 2D or 3D tile) drop that axis; a 1D tile reduces
// to a 1D tile of 1. sum of bool or i8 gives i32 (as Triton), of other dtypes the same dtype
// (floats accumulate in f32). max/min: a NaN in the reduced elements gives NaN.
Tile sum(const Tile& a, int axis);
Tile max(const Tile& a, int axis);
Tile min(const Tile& a, int axis);
// i32 index of the largest/smallest element along the axis, the first one on ties; a NaN counts
// as larger (argmax) and smaller (argmin) than everything, so the first NaN wins (as torch).
Tile argmax(const Tile& a, int axis);
Tile argmin(const Tile& a, int axis);
// Inclusive running sum along an axis, same shape; dtype as sum.
Tile cumsum(const Tile& a, int axis);

// Data movement (cost class simple, per element of the result). permute: result dimension i is
// a's dimension dims[i]; trans: the transpose of a 2D tile. broadcast_to: a stretched to
// `shape` (NumPy rules). cat: a and b (same dtype and rank) joined along `axis`.
Tile permute(const Tile& a, std::initializer_list<int> dims);
Tile trans(const Tile& a);
Tile broadcast_to(const Tile& a, Shape shape);
Tile cat(const Tile& a, const Tile& b, int axis = 0);

// A small matrix product on the vector unit: (M x K) . (K x N), accumulating in f32 (i32 for
// integer tiles, i64 when either is i64); the result is f32, i32 or i64.
Tile dot(const Tile& a, const Tile& b);

}  // namespace cubesim::tl
