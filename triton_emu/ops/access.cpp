#include "triton_emu/ops/access.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "triton_emu/errors.hpp"
#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::ops {

using components::hex_address;
using tl::Shape;
using tl::Tile;

namespace {

using Segment = detail::AccessSegment;

struct Layout {
  std::int64_t rows, cols, row_stride, col_stride;
};

// Fills `out` (cleared first) with the transfers of an access.
void segments(const Layout& l, Ptr base, std::uint32_t size, const std::vector<std::int32_t>* mask,
              std::vector<Segment>& out) {
  out.clear();
  auto add = [&](std::uint64_t addr, std::uint64_t tile_off) {
    if (!out.empty() && out.back().addr + out.back().bytes == addr &&
        out.back().tile_offset + out.back().bytes == tile_off) {
      out.back().bytes += size;
      return;
    }
    out.push_back({addr, size, tile_off});
  };
  if (!mask && l.col_stride == 1) {  // whole rows: one segment per row at most
    for (std::int64_t i = 0; i < l.rows; ++i) {
      const std::uint64_t addr = base.addr + static_cast<std::uint64_t>(i * l.row_stride) * size;
      const std::uint64_t off = static_cast<std::uint64_t>(i * l.cols) * size;
      const std::uint64_t bytes = static_cast<std::uint64_t>(l.cols) * size;
      if (!out.empty() && out.back().addr + out.back().bytes == addr &&
          out.back().tile_offset + out.back().bytes == off)
        out.back().bytes += bytes;
      else if (bytes > 0)
        out.push_back({addr, bytes, off});
    }
    return;
  }
  for (std::int64_t i = 0; i < l.rows; ++i)
    for (std::int64_t j = 0; j < l.cols; ++j) {
      const std::int64_t e = i * l.cols + j;
      if (mask && !(*mask)[static_cast<std::size_t>(e)]) continue;
      const std::uint64_t addr =
          base.addr + static_cast<std::uint64_t>(i * l.row_stride + j * l.col_stride) * size;
      if (l.col_stride != 1) {
        out.push_back({addr, size, static_cast<std::uint64_t>(e) * size});  // a gather
        continue;
      }
      add(addr, static_cast<std::uint64_t>(e) * size);
    }
}

// The mask's values (empty: no mask, or one of no elements), checked against the tile.
std::vector<std::int32_t> mask_of(const detail::Program& program, const char* what, Ptr ptr,
                                  const Shape& shape, const Tile* mask) {
  std::vector<std::int32_t> mask_values;
  if (!mask) return mask_values;
  if (!(mask->shape() == shape))
    program.fault(std::string(what) + ": the mask has shape " + mask->shape().str() +
                  " but the tile " + shape.str() +
                  "; make the mask of the tile's shape (reshape() or broadcast_to())");
  if (mask->has_values()) {
    mask_values = mask->to_mask();
  } else if (mask->numel() > 0) {
    // Timing-only runs keep index math only; a mask computed from loaded values would be
    // guessed, and which elements move is what the time depends on.
    program.fault(
        std::string(what) + " at " + hex_address(ptr.addr) +
        ": the mask was computed from loaded values, which a timing-only run does not have, "
        "so it cannot tell which elements move (and the time depends on it); run without "
        "--timing-only (SimOptions::timing_only), or build the mask from index math only "
        "(arange, program_id, constants)");
  }
  return mask_values;
}

}  // namespace

void check_access(const detail::Program& program, Ptr ptr, std::uint64_t bytes, DType dtype,
                  const char* what) {
  if (ptr.addr % dtype_size(dtype) != 0)
    program.fault(std::string(what) + " at " + hex_address(ptr.addr) +
                  " is misaligned: " + std::string(dtype_name(dtype)) +
                  " elements need addresses that are multiples of " +
                  std::to_string(dtype_size(dtype)) +
                  " bytes; check the byte offsets of the pointer "
                  "arithmetic");
  try {
    program.launch().sys.address_map().check_range(ptr.addr, bytes, what);
  } catch (const components::AddressError& e) {
    program.fault(std::string(e.what()) +
                  "; check the offsets and shapes against the buffers allocated");
  }
  if (!program.launch().allocations.contains(ptr.addr, bytes))
    program.fault(program.launch().allocations.describe_miss(ptr.addr, bytes, what));
  first_touch(program, ptr.addr, bytes);
}

void first_touch(const detail::Program& program, std::uint64_t addr, std::uint64_t bytes) {
  detail::LaunchState& launch = program.launch();
  if (launch.placement == nullptr || !launch.sys.address_map().has_untouched()) return;
  const components::PeCoord at = program.pe().coord;
  try {
    launch.placement->touch(addr, bytes, at.sip * launch.sys.config().cubes_per_sip + at.cube,
                            [&](std::uint64_t frame, const std::vector<std::byte>& held) {
                              if (launch.memory != nullptr)
                                launch.memory->write(frame, held.data(), held.size());
                            });
  } catch (const UsageError& e) {
    program.fault(e.what());
  }
}

bool plan_access(detail::Program& program, const char* what, Ptr ptr, const Shape& shape,
                 DType dtype, std::int64_t row_stride, std::int64_t col_stride, const Tile* mask,
                 std::int64_t plane_stride) {
  auto& planned = program.segments();
  Layout l{shape.rows(), shape.cols(), row_stride ? row_stride : shape.cols(), col_stride};
  if (l.row_stride < 0 || l.col_stride < 1)
    program.fault(std::string(what) + ": strides must be positive (row_stride " +
                  std::to_string(l.row_stride) + ", col_stride " + std::to_string(l.col_stride) +
                  ")");
  if (plane_stride < 0 || (plane_stride != 0 && shape.rank != 3))
    program.fault(
        fmt::format("{}: plane_stride {} needs a 3D tile of planes 0 or more elements apart "
                    "(the shape is {})",
                    what, plane_stride, shape.str()));
  // Planes one after another are rows of one 2D layout; others are planned plane by plane.
  const std::int64_t planes =
      shape.rank == 3 && plane_stride != 0 && plane_stride != shape[1] * l.row_stride ? shape[0]
                                                                                      : 1;
  if (planes > 1) l.rows = shape[1];
  const std::vector<std::int32_t> mask_values = mask_of(program, what, ptr, shape, mask);
  const bool masked = !mask_values.empty();
  if (shape.numel() == 0) {
    planned.clear();
    return masked;
  }
  // The whole access must be addressable before it is cut into transfers. One contiguous row
  // spans the tile's own bytes, which tile_bytes() bounded; strides need the check.
  const std::uint32_t size = dtype_size(dtype);
  if (l.rows > 1 || l.col_stride != 1 || planes > 1) {
    std::uint64_t last = 0, span = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(planes - 1),
                               static_cast<std::uint64_t>(plane_stride), &last) ||
        __builtin_add_overflow(
            last, static_cast<std::uint64_t>(l.rows - 1) * static_cast<std::uint64_t>(l.row_stride),
            &last) ||
        __builtin_add_overflow(
            last, static_cast<std::uint64_t>(l.cols - 1) * static_cast<std::uint64_t>(l.col_stride),
            &last) ||
        __builtin_mul_overflow(last + 1, std::uint64_t{size}, &span) || ptr.addr + span < ptr.addr)
        [[unlikely]]
      program.fault(std::string(what) + " of shape " + shape.str() + " at " +
                    hex_address(ptr.addr) + " with row_stride " + std::to_string(l.row_stride) +
                    " and col_stride " + std::to_string(l.col_stride) +
                    " reaches past the end of the 64-bit address space");
  }
  if (planes == 1) {
    segments(l, ptr, size, masked ? &mask_values : nullptr, planned);
  } else {
    const std::int64_t per_plane = l.rows * l.cols;
    std::vector<Segment> plane;
    std::vector<std::int32_t> plane_mask;
    planned.clear();
    for (std::int64_t p = 0; p < planes; ++p) {
      if (masked)
        plane_mask.assign(mask_values.begin() + p * per_plane,
                          mask_values.begin() + (p + 1) * per_plane);
      segments(l, ptr + p * plane_stride * size, size, masked ? &plane_mask : nullptr, plane);
      for (Segment seg : plane) {
        seg.tile_offset += static_cast<std::uint64_t>(p * per_plane) * size;
        planned.push_back(seg);
      }
    }
  }
  for (const auto& s : planned) check_access(program, Ptr{s.addr}, s.bytes, dtype, what);
  return masked;
}

}  // namespace cubesim::ops
