#pragma once
// Every cube's shared cache in front of its HBM (system.cube.cache, model lru): a
// set-associative array of tags with least-recently-used replacement, one per cube, indexed by
// the line's offset inside the cube's memory. It is a memory-side cache: every access to a
// cube's memory, from any PE of the system, passes through it, so a line has one home and
// there is no coherence to keep. Timing only: the data always comes from memory.
//
//  - A read looks each line up; a miss allocates the line (evicting the set's least recently
//    used) and goes on to HBM, a hit is served by the cache.
//  - Writes go through to HBM (write-through). A write that covers a whole line allocates it;
//    one that covers part of a line refreshes the line when it is there, and allocates nothing
//    (the rest of the line was never fetched).
//  - A line counts as there from the moment its miss is issued: a second request for it while
//    the fill is on its way hits, as it would merge with the miss in hardware, but is served at
//    the hit latency rather than when the fill arrives.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "components/memory/divisor.hpp"
#include "components/system_config.hpp"

namespace cubesim::components {

struct CacheStats {
  std::uint64_t read_hits = 0, read_misses = 0;  // lines looked up by reads
  std::uint64_t write_hits = 0,
                write_misses = 0;  // lines written (a miss allocates only whole lines)
  std::uint64_t evictions = 0;     // valid lines replaced
  std::uint64_t reads() const { return read_hits + read_misses; }
  // Of the lines read, the share that hit; 0 when none were read.
  double hit_rate() const {
    return reads() == 0 ? 0.0 : static_cast<double>(read_hits) / static_cast<double>(reads());
  }
  CacheStats& operator+=(const CacheStats& o) {
    read_hits += o.read_hits;
    read_misses += o.read_misses;
    write_hits += o.write_hits;
    write_misses += o.write_misses;
    evictions += o.evictions;
    return *this;
  }
};

class CubeCaches {
 public:
  // Caches of `cube_bytes` of memory each; std::invalid_argument when the geometry is not
  // whole sets of whole lines, or a set's tags would need more than 32 bits (kMaxTag).
  CubeCaches(const CacheConfig& config, std::uint32_t cubes, std::uint64_t cube_bytes);
  // The most lines of memory per set a cache can tell apart: a tag is 32 bits (a set's 16
  // tags fill one host cache line, what a lookup waits for).
  static constexpr std::uint64_t kMaxTag = 0xFFFF'FFFEULL;

  std::uint32_t line_bytes() const { return line_bytes_; }
  std::uint64_t sets() const { return sets_.value(); }

  // Line `line` (offset in the cube's memory / line_bytes) of cube `cube`: true on a hit. A
  // miss allocates it.
  bool read(std::uint32_t cube, std::uint64_t line);
  // A write to the line, covering all of it or part.
  void write(std::uint32_t cube, std::uint64_t line, bool whole);

  const CacheStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  // Forgets every line (an empty cache, as after power-on).
  void clear();
  // Moves a cube's stamp clock on to `last` (no earlier than now), as a run of that many
  // accesses would: for testing what happens when stamps run out.
  void advance_clock(std::uint32_t cube, std::uint32_t last) {
    clock_[cube] = std::max(clock_[cube], last);
  }

 private:
  // The way holding tag `tag` (a line's index over the sets, plus one) in its set, or -1;
  // touches it when found.
  int find(std::uint32_t cube, std::uint64_t set, std::uint32_t tag);
  void allocate(std::uint32_t cube, std::uint64_t set, std::uint32_t tag);
  std::uint32_t* tags(std::uint32_t cube, std::uint64_t set);

  std::uint32_t ways_, line_bytes_;
  Divisor sets_;
  // Per cube, allocated on first use: ways tags per set (line / sets + 1; 0 = empty) and the
  // stamp of each way's last use.
  std::vector<std::vector<std::uint32_t>> tags_;
  std::vector<std::vector<std::uint32_t>> used_;
  std::vector<std::uint32_t> clock_;  // per cube: the last stamp handed out
  // The next stamp of a cube; when they run out, every set's stamps are renumbered 1..ways in
  // the same order first (the order is all LRU needs).
  std::uint32_t stamp(std::uint32_t cube);
  CacheStats stats_;
};

}  // namespace cubesim::components
