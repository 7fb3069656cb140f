#include "triton_emu/memory/host_memory.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "components/hbm/banked_hbm.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim {

namespace {

// A floor, so that no system that fits is refused: below the resident size of the lightest
// launch measured, timing-only vector_add with a program on every PE from 512 to 1,048,576 PEs
// (docs/performance.md, "Host memory"). Per PE: its state, its fiber stack's touched pages, its
// events and launch bookkeeping. Per link (mesh, PE ports, HBM channels, UCIe, inter-SIP): its
// state and counters.
constexpr std::uint64_t kPerPe = 12 * 1024;
constexpr std::uint64_t kPerLink = 128;
constexpr std::uint64_t kPerCube = 16 * 1024;
constexpr std::uint64_t kFixed = 8 << 20;
// Fiber stacks reserve address space (never backed unless touched); user space is 128 TiB on
// x86-64 and arm64 with 4-level page tables. Leave half of it to everything else.
constexpr std::uint64_t kStackAddressSpace = std::uint64_t{64} << 40;

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 40))
    return fmt::format("{:.1f} TiB", static_cast<double>(bytes) / static_cast<double>(1ULL << 40));
  if (bytes >= (std::uint64_t{1} << 30))
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (std::uint64_t{1} << 20))
    return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / (1 << 10));
}

// A "Key: N kB" line of /proc/meminfo, in bytes; 0 when absent.
std::uint64_t meminfo(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      std::uint64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  return 0;
}

// A cgroup v2 file holding one number ("max" and absence: none).
std::uint64_t cgroup_number(const std::string& file) {
  std::ifstream in("/sys/fs/cgroup/" + file);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;
  }
}

// A cube cache's tags: a line's tag and its last use, 4 bytes each (components/cache/).
std::uint64_t cache_tag_bytes(const components::CacheConfig& c) {
  return c.enabled() ? c.size_bytes / c.line_bytes * 8 : 0;
}

// The banked HBM's channels: their banks and queues (components/hbm/banked_hbm.hpp).
std::uint64_t dram_bytes(const components::HbmConfig& h) {
  return h.model == "banked"
             ? std::uint64_t{h.channels} * components::DramChannel::state_bytes(h.banked)
             : 0;
}

}  // namespace

HostMemoryEstimate estimate_host_memory(const components::SystemConfig& config,
                                        std::uint64_t stack_size) {
  HostMemoryEstimate e;
  e.pes = config.total_pes();
  e.cubes = config.total_cubes();
  const std::uint64_t x = config.cube.noc.mesh_x, y = config.cube.noc.mesh_y;
  const components::CacheConfig& cache = config.cube.cache;
  const std::uint64_t slices = cache.enabled() ? config.cube.hbm.channels : 0;
  const std::uint64_t links_per_cube =
      2 * (2 * x * y - x - y) + 2 * std::uint64_t{config.cube.pes} + config.cube.hbm.channels +
      slices + 2 * config.cubes_per_sip + 2;
  e.per_pe = kPerPe;
  e.per_cube =
      kPerCube + kPerLink * links_per_cube + cache_tag_bytes(cache) + dram_bytes(config.cube.hbm);
  e.fixed = kFixed;
  e.bytes = e.fixed + e.pes * e.per_pe + e.cubes * e.per_cube;
  const std::uint64_t page = 4096;
  e.stack_reservation = e.pes * ((stack_size + page - 1) / page * page + page);  // + guard page
  return e;
}

HostMemoryLimit host_memory_limit(std::uint64_t limit) {
  if (limit != 0) return {limit, "CUBESIM_MEMORY_LIMIT"};
  HostMemoryLimit l{meminfo("MemAvailable"), "MemAvailable in /proc/meminfo"};
  if (const std::uint64_t max = cgroup_number("memory.max"); max != 0) {
    const std::uint64_t used = cgroup_number("memory.current");
    const std::uint64_t room = max > used ? max - used : 0;
    if (l.bytes == 0 || room < l.bytes) l = {room, "the room left under the cgroup's memory.max"};
  }
  return l;
}

void check_host_memory(const components::SystemConfig& config, std::uint64_t stack_size,
                       std::uint64_t limit) {
  const HostMemoryEstimate e = estimate_host_memory(config, stack_size);
  std::string fields = fmt::format(
      "reduce system.sips.count ({}), system.sips.cubes_per_sip ({}) or system.cube.pes ({})",
      config.sips, config.cubes_per_sip, config.cube.pes);
  if (const std::uint64_t tags = cache_tag_bytes(config.cube.cache); tags > 0)
    fields += fmt::format(
        ", or the cube cache's tags ({} per cube): reduce system.cube.cache.size_MiB or raise "
        "its line_bytes",
        size_text(tags));
  if (const std::uint64_t dram = dram_bytes(config.cube.hbm); dram > 0)
    fields += fmt::format(
        ", or the banked HBM's banks and queues ({} per cube): reduce "
        "system.cube.hbm.banked.bank_groups, banks_per_group or queue_depth",
        size_text(dram));
  if (e.stack_reservation > kStackAddressSpace)
    throw UsageError(fmt::format(
        "this system's {} programs would reserve {} of address space for fiber stacks of {} "
        "bytes, more than the {} a process can spare; lower --stack-size "
        "(SimOptions::stack_size) or {}",
        e.pes, size_text(e.stack_reservation), stack_size, size_text(kStackAddressSpace), fields));
  const HostMemoryLimit l = host_memory_limit(limit);
  if (l.bytes == 0 || e.bytes <= l.bytes) return;
  const bool env = limit != 0;
  throw UsageError(fmt::format(
      "this system needs at least {} of host memory to simulate before a kernel stores any "
      "data ({} PEs x {} KiB, {} cubes x {} KiB, {} MiB fixed), and {} is available ({}); {}, "
      "{}",
      size_text(e.bytes), e.pes, e.per_pe / 1024, e.cubes, e.per_cube / 1024, e.fixed >> 20,
      size_text(l.bytes), l.source, fields,
      env ? "or raise CUBESIM_MEMORY_LIMIT"
          : "or free memory; CUBESIM_MEMORY_LIMIT=BYTES (K/M/G/T suffixes) sets the limit "
            "when the machine has more to give (swap)"));
}

}  // namespace cubesim
