#include "components/cache/cube_cache.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace cubesim::components {

namespace {

std::uint64_t set_count(const CacheConfig& c, std::uint64_t cube_bytes) {
  const std::uint64_t set_bytes = std::uint64_t{c.ways} * c.line_bytes;
  if (c.ways == 0 || c.line_bytes == 0 || c.size_bytes < set_bytes || c.size_bytes % set_bytes)
    throw std::invalid_argument(
        "CubeCaches: system.cube.cache.size_MiB must be a whole number of sets (ways x "
        "line_bytes)");
  const std::uint64_t sets = c.size_bytes / set_bytes;
  if (cube_bytes / c.line_bytes / sets > CubeCaches::kMaxTag)
    throw std::invalid_argument(
        "CubeCaches: more than 2^32 - 2 lines of memory per set; make "
        "system.cube.cache.size_MiB larger or its line_bytes longer");
  return sets;
}

// A line's set, and its tag there (its index over the sets, plus one: 0 marks an empty way).
std::pair<std::uint64_t, std::uint32_t> place(const Divisor& sets, std::uint64_t line) {
  return {sets.rem(line), static_cast<std::uint32_t>(sets.quot(line) + 1)};
}

}  // namespace

CubeCaches::CubeCaches(const CacheConfig& config, std::uint32_t cubes, std::uint64_t cube_bytes)
    : ways_(config.ways),
      line_bytes_(config.line_bytes),
      sets_(set_count(config, cube_bytes)),
      tags_(cubes),
      used_(cubes),
      clock_(cubes, 0) {}

std::uint32_t* CubeCaches::tags(std::uint32_t cube, std::uint64_t set) {
  std::vector<std::uint32_t>& t = tags_[cube];
  if (t.empty()) {
    t.assign(sets_.value() * ways_, 0);
    used_[cube].assign(t.size(), 0);
  }
  return t.data() + set * ways_;
}

int CubeCaches::find(std::uint32_t cube, std::uint64_t set, std::uint32_t tag) {
  const std::uint32_t* t = tags(cube, set);
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (t[w] == tag) {
      used_[cube][set * ways_ + w] = stamp(cube);
      return static_cast<int>(w);
    }
  return -1;
}

void CubeCaches::allocate(std::uint32_t cube, std::uint64_t set, std::uint32_t tag) {
  std::uint32_t* t = tags(cube, set);
  std::uint32_t* used = used_[cube].data() + set * ways_;
  std::uint32_t victim = 0;
  for (std::uint32_t w = 1; w < ways_; ++w)
    if (used[w] < used[victim]) victim = w;  // empty ways have stamp 0: taken first
  if (t[victim] != 0) ++stats_.evictions;
  t[victim] = tag;
  used[victim] = stamp(cube);
}

bool CubeCaches::read(std::uint32_t cube, std::uint64_t line) {
  const auto [set, tag] = place(sets_, line);
  if (find(cube, set, tag) >= 0) {
    ++stats_.read_hits;
    return true;
  }
  ++stats_.read_misses;
  allocate(cube, set, tag);
  return false;
}

void CubeCaches::write(std::uint32_t cube, std::uint64_t line, bool whole) {
  const auto [set, tag] = place(sets_, line);
  if (find(cube, set, tag) >= 0) {
    ++stats_.write_hits;
    return;
  }
  ++stats_.write_misses;
  if (whole) allocate(cube, set, tag);
}

std::uint32_t CubeCaches::stamp(std::uint32_t cube) {
  if (clock_[cube] == UINT32_MAX) {
    std::vector<std::uint32_t>& used = used_[cube];
    std::vector<std::uint32_t> order(ways_);
    for (std::size_t set = 0; set < used.size(); set += ways_) {
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(),
                [&](std::uint32_t a, std::uint32_t b) { return used[set + a] < used[set + b]; });
      for (std::uint32_t rank = 0; rank < ways_; ++rank)
        if (used[set + order[rank]] != 0) used[set + order[rank]] = rank + 1;
    }
    clock_[cube] = ways_;
  }
  return ++clock_[cube];
}

void CubeCaches::clear() {
  for (auto& t : tags_) t.clear();
  for (auto& u : used_) u.clear();
  clock_.assign(clock_.size(), 0);
}

}  // namespace cubesim::components
