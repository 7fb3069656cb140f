#pragma once
// A run's energy from what its parts did (system.energy): each byte a link, HBM, the cube cache
// or a PE's SRAM moved, each FLOP a GEMM engine executed and each element a vector unit
// processed, at the spec's energy per action, and every PE's static power over the run. The
// counts come from the statistics the parts keep anyway (link bytes by kind, the cache's
// misses, the PEs' transfer bytes and vector elements, the engines' FLOPs by dtype).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "components/dtype.hpp"
#include "components/network/link_stats.hpp"
#include "components/system_config.hpp"
#include "emu/time.hpp"

namespace cubesim::components {

enum class EnergyPart : std::uint8_t {
  static_power,
  gemm,
  vector,
  sram,
  noc,
  ucie,
  inter_sip,
  hbm,
  cache
};
inline constexpr std::size_t kEnergyParts = static_cast<std::size_t>(EnergyPart::cache) + 1;
// The part's name in reports ("static", "gemm", ..., "hbm", "cache").
std::string_view energy_part_name(EnergyPart part);

// What a run did that costs energy.
struct EnergyActivity {
  std::array<std::uint64_t, kLinkKinds> link_bytes{};  // LinkStats::bytes_by_kind
  std::uint64_t cache_fill_bytes = 0;  // lines read misses brought into the cube caches
  std::uint64_t sram_bytes = 0;        // transfers into and out of PE SRAM
  std::uint64_t vector_elements = 0;
  std::array<std::uint64_t, kDTypeCount> gemm_flops{};  // by input dtype
  std::uint64_t pes = 0;                                // every PE of the system
  emu::Tick elapsed = 0;
};

struct EnergyReport {
  std::array<double, kEnergyParts> joules{};
  emu::Tick elapsed = 0;

  double of(EnergyPart p) const { return joules[static_cast<std::size_t>(p)]; }
  double total() const;
  // Average power over `elapsed`; 0 over no time.
  double watts(EnergyPart p) const;
  double average_watts() const;
  // Another run after this one: energies and times add.
  EnergyReport& operator+=(const EnergyReport& o);
};

EnergyReport energy_of(const EnergyConfig& config, const EnergyActivity& activity);

}  // namespace cubesim::components
