#include "triton_emu/ops/program.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>

#include "triton_emu/errors.hpp"
#include "triton_emu/ops/copy.hpp"
#include "triton_emu/ops/creation.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::detail {

using tl::Shape;
using tl::Tile;

Program::Program(LaunchState& launch, PeState& pe, std::uint32_t index)
    : launch_(launch), pe_(pe), index_(index) {}

Program::~Program() = default;

const std::string& Program::pe_name() const {
  return pe_.name;
}

bool Program::timing_only() const {
  return launch_.sys.timing_only();
}

emu::Tick Program::now() const {
  return launch_.sched.now() + pending_;
}

void Program::fault(const std::string& what) const {
  throw KernelFault(what);
}

// ---- Tiles ------------------------------------------------------------------------------------

std::uint64_t Program::tile_bytes(const char* what, const Shape& shape, DType dtype) const {
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

void Program::bad_shape(const char* what, const Shape& shape, DType dtype) const {
  if (shape[0] < 0 || (shape.rank > 1 && shape[1] < 0) || (shape.rank > 2 && shape[2] < 0))
    fault(std::string(what) + ": shape " + shape.str() +
          " has a negative dimension; dimensions are element counts (0 or more)");
  fault(std::string(what) + ": a " + std::string(dtype_name(dtype)) + " tile of shape " +
        shape.str() + " has more than 2^63 bytes; no PE's SRAM (" +
        std::to_string(pe_.hw.sram().capacity()) + " bytes on " + pe_.name +
        ") holds it: work on smaller blocks");
}

Tile Program::make_tile(Shape shape, DType dtype, bool values) {
  return make_tile(shape, dtype, tile_bytes("make_tile", shape, dtype), values);
}

Tile Program::make_tile(Shape shape, DType dtype, std::uint64_t bytes, bool values) {
  auto& sram = pe_.hw.sram();
  if (!sram.allocate(bytes))
    fault("SRAM overflow on " + pe_.name + ": a " + std::string(dtype_name(dtype)) +
          " tile of shape " + shape.str() + " needs " + std::to_string(bytes) + " bytes but only " +
          std::to_string(sram.available()) + " of " + std::to_string(sram.capacity()) +
          " bytes are free; work on smaller blocks, let tiles go out of scope, or raise "
          "system.pe.sram_KiB");
  // Timing-only runs keep values of integer and bool tiles only (index math and masks; see
  // tile.cpp).
  const bool keep = values && (!timing_only() || is_integer(dtype));
  return tl::TileAccess::make(*this, shape, dtype, pe_.hw.shared_sram(), bytes, sram.tenant,
                              keep ? bytes : 0);
}

Tile Program::full(Shape shape, double value, DType dtype) {
  return ops::full(*this, shape, value, dtype);
}

void Program::check_fill_value(const char* what, double value, DType dtype) const {
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

// ---- Vector unit ------------------------------------------------------------------------------

void Program::charge_vector(std::uint64_t elements, components::VectorOp op) {
  pending_ += pe_.hw.vector().time(elements, op);
  pending_elements_ += elements;
  pending_ops_ |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(op));
}

void Program::sync() {
  if (pending_ == 0) return;
  const emu::Tick t = pending_;
  const emu::Tick start = launch_.sched.now();
  const std::uint64_t elements = pending_elements_;
  const std::uint8_t ops = pending_ops_;
  pending_ = 0;
  pending_elements_ = 0;
  pending_ops_ = 0;
  pe_.hw.counters().vector_busy_ps += t;
  launch_.sched.wait_for(t);
  if (launch_.tracing(pe_)) {
    // The work paid for since the last sync: its elements and the kinds of op among them.
    std::string names;
    for (const auto op : components::kAllVectorOps)
      if (ops & (1u << static_cast<unsigned>(op)))
        names += (names.empty() ? "" : ", ") + std::string(components::vector_op_name(op));
    launch_.trace_slice(pe_, false, "vector", start, start + t,
                        fmt::format(R"({{"elements":{},"ops":"{}"}})", elements, names));
  }
}

// ---- Checks shared by the operations ----------------------------------------------------------

void Program::require_one_wave(const std::string& what) const {
  if (launch_.waves <= 1) return;
  fault(fmt::format(
      "{} on {}: this launch runs its {} programs in {} waves on {} PEs, so programs of later "
      "waves start only as earlier ones end and cannot be waited for; barriers and messages "
      "need every program running at once: launch at most {} programs (a grid that fits one "
      "wave), or coordinate through memory and atomics",
      what, pe_.name, launch_.coords.size(), launch_.waves, launch_.pes_used, launch_.pes_used));
}

void Program::require_this_launch(const Tile& t, const char* handle, const char* call,
                                  const char* why) const {
  if (tl::TileAccess::launch(t) != pe_.hw.sram().tenant)
    fault(fmt::format("wait on {}: the {} comes from a {} of an earlier launch; {}", pe_.name,
                      handle, call, why));
}

bool Program::owns(const Tile& t) const {
  return &tl::TileAccess::owner(t) == this;
}

}  // namespace cubesim::detail
