#include "components/cache/cube_cache.hpp"

#include <stdexcept>

namespace cubesim::components {

namespace {

std::uint64_t set_count(const CacheConfig& c) {
  const std::uint64_t set_bytes = std::uint64_t{c.ways} * c.line_bytes;
  if (c.ways == 0 || c.line_bytes == 0 || c.size_bytes < set_bytes || c.size_bytes % set_bytes)
    throw std::invalid_argument(
        "CubeCaches: system.cube.cache.size_MiB must be a whole number of sets (ways x "
        "line_bytes)");
  return c.size_bytes / set_bytes;
}

}  // namespace

CubeCaches::CubeCaches(const CacheConfig& config, std::uint32_t cubes)
    : ways_(config.ways),
      line_bytes_(config.line_bytes),
      sets_(set_count(config)),
      tags_(cubes),
      used_(cubes),
      clock_(cubes, 0) {}

std::uint64_t* CubeCaches::tags(std::uint32_t cube, std::uint64_t set) {
  std::vector<std::uint64_t>& t = tags_[cube];
  if (t.empty()) {
    t.assign(sets_.value() * ways_, 0);
    used_[cube].assign(t.size(), 0);
  }
  return t.data() + set * ways_;
}

int CubeCaches::find(std::uint32_t cube, std::uint64_t set, std::uint64_t line) {
  const std::uint64_t* t = tags(cube, set);
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (t[w] == line + 1) {
      used_[cube][set * ways_ + w] = ++clock_[cube];
      return static_cast<int>(w);
    }
  return -1;
}

void CubeCaches::allocate(std::uint32_t cube, std::uint64_t set, std::uint64_t line) {
  std::uint64_t* t = tags(cube, set);
  std::uint64_t* used = used_[cube].data() + set * ways_;
  std::uint32_t victim = 0;
  for (std::uint32_t w = 1; w < ways_; ++w)
    if (used[w] < used[victim]) victim = w;  // empty ways have stamp 0: taken first
  if (t[victim] != 0) ++stats_.evictions;
  t[victim] = line + 1;
  used[victim] = ++clock_[cube];
}

bool CubeCaches::read(std::uint32_t cube, std::uint64_t line) {
  const std::uint64_t set = sets_.rem(line);
  if (find(cube, set, line) >= 0) {
    ++stats_.read_hits;
    return true;
  }
  ++stats_.read_misses;
  allocate(cube, set, line);
  return false;
}

void CubeCaches::write(std::uint32_t cube, std::uint64_t line, bool whole) {
  const std::uint64_t set = sets_.rem(line);
  if (find(cube, set, line) >= 0) {
    ++stats_.write_hits;
    return;
  }
  ++stats_.write_misses;
  if (whole) allocate(cube, set, line);
}

void CubeCaches::clear() {
  for (auto& t : tags_) t.clear();
  for (auto& u : used_) u.clear();
  clock_.assign(clock_.size(), 0);
}

}  // namespace cubesim::components
