#include "triton_emu/ops/debug.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "triton_emu/ops/launch_state.hpp"

namespace cubesim::ops {

using detail::LaunchState;
using detail::PeState;
using detail::Program;
using tl::Shape;
using tl::Tile;

namespace {
// "[[1, 2], [3, 4]]": the values of a tile, nested by its dimensions.
std::string tile_text(const Tile& t) {
  if (!t.valid()) return "<an empty tile (made by Tile())>";
  if (!t.has_values() && t.numel() > 0)
    return fmt::format("<{} {} tile: no values in a timing-only run>", t.shape().str(),
                       dtype_name(t.dtype()));
  const auto v = t.to_f64();
  const Shape& s = t.shape();
  std::string out;
  std::size_t next = 0;
  auto emit = [&](auto& self, int axis) -> void {
    out += '[';
    for (std::int64_t i = 0; i < s[axis]; ++i) {
      if (i) out += ", ";
      if (axis + 1 < s.rank)
        self(self, axis + 1);
      else
        out += fmt::format("{}", v[next++]);
    }
    out += ']';
  };
  emit(emit, 0);
  return out;
}
}  // namespace

void device_print(const Program& program, std::string_view prefix, const Tile& tile) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  const auto& id = launch.coords[program.index()].id;
  fmt::print("[program ({}, {}, {}) on {} at {}] {}: {}\n", id[0], id[1], id[2], pe.name,
             emu::format_time(program.now()), prefix, tile_text(tile));
  std::fflush(stdout);
}

void device_assert(const Program& program, const Tile& condition, std::string_view message) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  if (!condition.valid())
    program.fault("device_assert: the condition is an empty tile (made by Tile())");
  if (!condition.has_values()) {
    if (condition.numel() == 0) return;
    program.fault(
        fmt::format("device_assert(\"{}\"): the condition was computed from loaded values, "
                    "which a timing-only run does not have; run without --timing-only",
                    message));
  }
  const auto m = condition.to_mask();
  const auto bad = std::find(m.begin(), m.end(), 0);
  if (bad == m.end()) return;
  const auto flat = bad - m.begin();
  const Shape& s = condition.shape();
  std::string at;
  for (std::int64_t rest = flat, i = s.rank - 1; i >= 0; --i) {
    const std::int64_t d = s[static_cast<int>(i)];
    at = std::to_string(d ? rest % d : 0) + (at.empty() ? "" : ", ") + at;
    rest = d ? rest / d : 0;
  }
  const auto& id = launch.coords[program.index()].id;
  program.fault(
      fmt::format("device_assert failed: \"{}\" in program ({}, {}, {}) on {}: element ({}) "
                  "of the {} condition is false ({} of {} elements false)",
                  message, id[0], id[1], id[2], pe.name, at, s.str(),
                  std::count(m.begin(), m.end(), 0), m.size()));
}

}  // namespace cubesim::ops
