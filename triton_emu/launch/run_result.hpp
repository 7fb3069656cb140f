#pragma once
// What a launch returns: its simulated time, its statistics and report, and the access log
// the sharding checks read (coverage, races, message hazards).

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "triton_emu/checks/access_log.hpp"
#include "triton_emu/checks/message_hazards.hpp"
#include "triton_emu/launch/run_stats.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim {

struct RunResult {
  std::uint64_t sim_time_ps = 0;  // launch to the end of its last program and operation
  RunStats stats;                 // what it measured (run_stats.hpp)
  nlohmann::json report;          // run_report(stats): as `cubesim run --json` (simulation fields)
  std::shared_ptr<const AccessLog> accesses;
  std::vector<ProgramCoord> programs;

  // Sharding checks (need SimOptions::record_accesses).
  Coverage coverage(Ptr region, std::uint64_t bytes) const;
  std::vector<Race> races() const;
  MessageHazards message_hazards() const;
  std::string describe(const Coverage& c, Ptr region) const;
  std::string describe(const std::vector<Race>& r) const;
  std::string describe(const MessageHazards& h) const;
};

}  // namespace cubesim
