#pragma once
// What a PE measured during one launch, declared once: every statistic is a member of
// PeStatistics and a row of kPeStatistics beside it (its report key, unit and meaning). The
// table drives the report's per-PE keys (`stats.pes[]` of `cubesim run --json`), their
// documentation (docs/cli.md, from pe_statistics_markdown()) and `cubesim list --stats`.
// Resetting is `= {}`. A member without its row does not compile (the checks below).
//
// Adding a statistic: a member and its row here, and the line that measures it where the thing
// happens (a counter the programming model adds to, or Pe::statistics() for one a PE part
// keeps itself).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cubesim::components {

struct PeStatistics {
  std::uint64_t finish_ps = 0;
  std::uint64_t vector_busy_ps = 0;
  std::uint64_t gemm_busy_ps = 0;
  std::uint64_t memory_wait_ps = 0;
  std::uint64_t load_wait_ps = 0;
  std::uint64_t store_wait_ps = 0;
  std::uint64_t atomic_wait_ps = 0;
  std::uint64_t gemm_wait_ps = 0;
  std::uint64_t send_wait_ps = 0;
  std::uint64_t recv_wait_ps = 0;
  std::uint64_t dispatch_wait_ps = 0;
  std::uint64_t barrier_wait_ps = 0;
  std::uint64_t programs = 0;
  std::uint64_t flops = 0;
  std::uint64_t bytes_loaded = 0;
  std::uint64_t bytes_stored = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t sram_peak_bytes = 0;
  std::uint64_t vector_elements = 0;
  std::uint64_t issue_busy_ps = 0;
};

struct PeStatistic {
  std::string_view name;  // the report key
  std::uint64_t PeStatistics::*member;
  std::string_view unit;
  std::string_view description;
};

inline constexpr PeStatistic kPeStatistics[] = {
    {"finish_ps", &PeStatistics::finish_ps, "ps",
     "when its last program ended, from the start of the launch"},
    {"vector_busy_ps", &PeStatistics::vector_busy_ps, "ps",
     "busy time of its vector unit (tile math)"},
    {"gemm_busy_ps", &PeStatistics::gemm_busy_ps, "ps",
     "busy time of its GEMM engine, each job from start to end"},
    {"memory_wait_ps", &PeStatistics::memory_wait_ps, "ps",
     "time its programs were blocked on transfers (load, store, waiting for async copies, "
     "atomics): the sum of the three below"},
    {"load_wait_ps", &PeStatistics::load_wait_ps, "ps",
     "of it, waiting for loads (and for async loads in wait)"},
    {"store_wait_ps", &PeStatistics::store_wait_ps, "ps",
     "of it, waiting for stores' responses (and for async stores in wait)"},
    {"atomic_wait_ps", &PeStatistics::atomic_wait_ps, "ps", "of it, waiting for atomics' replies"},
    {"gemm_wait_ps", &PeStatistics::gemm_wait_ps, "ps",
     "time its programs were blocked waiting for composite GEMMs"},
    {"send_wait_ps", &PeStatistics::send_wait_ps, "ps",
     "time blocked sending a message: no free slot at the receiver"},
    {"recv_wait_ps", &PeStatistics::recv_wait_ps, "ps",
     "time blocked receiving: the message not yet readable"},
    {"dispatch_wait_ps", &PeStatistics::dispatch_wait_ps, "ps",
     "time waiting for the launch (system.dispatch.launch_ns) and, on a logical grid, for the "
     "dispatcher to start a program"},
    {"barrier_wait_ps", &PeStatistics::barrier_wait_ps, "ps",
     "time from arriving at a barrier to its release"},
    {"programs", &PeStatistics::programs, "programs",
     "programs it ran (one; several on a logical grid of several waves)"},
    {"flops", &PeStatistics::flops, "FLOP", "FLOPs its GEMM engine executed"},
    {"bytes_loaded", &PeStatistics::bytes_loaded, "bytes", "bytes its programs loaded from memory"},
    {"bytes_stored", &PeStatistics::bytes_stored, "bytes", "bytes its programs stored to memory"},
    {"messages_sent", &PeStatistics::messages_sent, "messages", "messages its programs sent"},
    {"bytes_sent", &PeStatistics::bytes_sent, "bytes", "payload bytes of those messages"},
    {"messages_received", &PeStatistics::messages_received, "messages",
     "messages its programs received"},
    {"bytes_received", &PeStatistics::bytes_received, "bytes", "payload bytes of those messages"},
    {"sram_peak_bytes", &PeStatistics::sram_peak_bytes, "bytes",
     "the most SRAM held at once during the launch"},
    {"vector_elements", &PeStatistics::vector_elements, "elements",
     "elements its vector unit processed (tile math), summed over operations"},
    {"issue_busy_ps", &PeStatistics::issue_busy_ps, "ps",
     "time its control core spent issuing TL calls (system.pe.issue_ns each)"},
};

// Every member has its row, and no row names a member twice.
static_assert(sizeof(PeStatistics) == std::size(kPeStatistics) * sizeof(std::uint64_t),
              "every PeStatistics member needs its row in kPeStatistics");
consteval bool pe_statistics_rows_distinct() {
  for (std::size_t i = 0; i < std::size(kPeStatistics); ++i)
    for (std::size_t j = i + 1; j < std::size(kPeStatistics); ++j)
      if (kPeStatistics[i].member == kPeStatistics[j].member ||
          kPeStatistics[i].name == kPeStatistics[j].name)
        return false;
  return true;
}
static_assert(pe_statistics_rows_distinct(), "two kPeStatistics rows name the same statistic");

// The table as the Markdown list docs/cli.md holds (between its GENERATED markers).
std::string pe_statistics_markdown();

}  // namespace cubesim::components
