#include "triton_emu/tile/tile_owner.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>

#include "triton_emu/errors.hpp"
#include "triton_emu/tile/element_codec.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::tl {

namespace {

// Out of line, so that making a tile stays a short path.
[[noreturn, gnu::cold, gnu::noinline]] void sram_overflow(const std::string& pe_name,
                                                          const components::Sram& sram,
                                                          const Shape& shape, DType dtype,
                                                          std::uint64_t bytes) {
  throw KernelFault("SRAM overflow on " + pe_name + ": a " + std::string(dtype_name(dtype)) +
                    " tile of shape " + shape.str() + " needs " + std::to_string(bytes) +
                    " bytes but only " + std::to_string(sram.available()) + " of " +
                    std::to_string(sram.capacity()) +
                    " bytes are free; work on smaller blocks, let tiles go out of scope, or "
                    "raise system.pe.sram_KiB");
}

}  // namespace

void TileOwner::fault(const std::string& what) const {
  throw KernelFault(what);
}

std::uint64_t TileOwner::tile_bytes(const char* what, const Shape& shape, DType dtype) const {
  std::int64_t rows = shape.rows();
  const std::int64_t cols = shape.cols();
  std::uint64_t n = 0, bytes = 0;
  if (shape.rank == 3 && (shape[0] < 0 || shape[1] < 0 ||
                          __builtin_mul_overflow(shape[0], shape[1], &rows))) [[unlikely]]
    bad_shape(what, shape, dtype);
  if ((rows | cols) < 0 ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols),
                             &n) ||
      __builtin_mul_overflow(n, std::uint64_t{dtype_size(dtype)}, &bytes) ||
      bytes > static_cast<std::uint64_t>(INT64_MAX)) [[unlikely]]
    bad_shape(what, shape, dtype);
  return bytes;
}

void TileOwner::bad_shape(const char* what, const Shape& shape, DType dtype) const {
  if (shape[0] < 0 || (shape.rank > 1 && shape[1] < 0) || (shape.rank > 2 && shape[2] < 0))
    fault(std::string(what) + ": shape " + shape.str() +
          " has a negative dimension; dimensions are element counts (0 or more)");
  fault(std::string(what) + ": a " + std::string(dtype_name(dtype)) + " tile of shape " +
        shape.str() + " has more than 2^63 bytes; no PE's SRAM (" +
        std::to_string(pe_.sram().capacity()) + " bytes on " + pe_name_ +
        ") holds it: work on smaller blocks");
}

Tile TileOwner::make_tile(Shape shape, DType dtype, bool values) {
  return make_tile(shape, dtype, tile_bytes("make_tile", shape, dtype), values);
}

Tile TileOwner::make_tile(Shape shape, DType dtype, std::uint64_t bytes, bool values) {
  auto& sram = pe_.sram();
  if (!sram.allocate(bytes)) [[unlikely]]
    sram_overflow(pe_name_, sram, shape, dtype, bytes);
  // Timing-only runs keep values of integer and bool tiles only (index math and masks; see
  // tile.cpp).
  const bool keep = values && (!timing_only_ || is_integer(dtype));
  return TileAccess::make(*this, shape, dtype, pe_.shared_sram(), bytes, sram.tenant,
                          keep ? bytes : 0);
}

void TileOwner::check_fill_value(const char* what, double value, DType dtype) const {
  if (!is_integer(dtype)) return;
  const double lo = dtype == DType::boolean ? 0
                    : dtype == DType::i8    ? -128
                    : dtype == DType::i32   ? INT32_MIN
                                            : -0x1p63;
  const double hi = dtype == DType::boolean ? 1
                    : dtype == DType::i8    ? 127
                    : dtype == DType::i32   ? INT32_MAX
                                            : 0x1p63;
  if (!(std::nearbyint(value) == value && value >= lo &&
        (dtype == DType::i64 ? value < hi : value <= hi)))
    fault(
        fmt::format("{}: {} is not a {} value (an integer in {} .. {}); use a float tile or an "
                    "integer in range",
                    what, value, dtype_name(dtype), lo,
                    dtype == DType::i64 ? "2^63-1" : fmt::format("{}", hi)));
}

Tile TileOwner::filled(const char* what, Shape shape, double value, DType dtype) {
  check_fill_value(what, value, dtype);
  Tile t = make_tile(shape, dtype, tile_bytes(what, shape, dtype), true);
  charge_vector(static_cast<std::uint64_t>(shape.numel()));
  if (std::byte* p = TileAccess::raw(t)) fill_f64(p, shape.numel(), dtype, value);
  return t;
}

}  // namespace cubesim::tl
