#pragma once
// One processing element: its SRAM account, its GEMM engine, the vector unit it computes tile
// math on (every PE's is alike: the system's one) and what it measured during the current
// launch. What runs on it, and how, is the programming model's (triton_emu): it charges the
// PE's parts and adds to its counters; the PE resets them when a launch begins and gives them,
// with what its parts measured themselves, as one PeStatistics.

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <cstdint>

#include "components/pe/gemm_engine.hpp"
#include "components/pe/pe_statistics.hpp"
#include "components/pe/sram.hpp"
#include "components/pe/vector_unit.hpp"

namespace cubesim::components {

class Pe {
 public:
  // `global_pe`: the PE as the network numbers it.
  // `issue`: its control core's time per TL call (system.pe.issue_ns).
  Pe(emu::Scheduler& scheduler, Network& network, const GemmTimingModel& gemm_timing,
     const VectorUnit& vector, std::uint64_t sram_bytes, std::uint32_t global_pe,
     emu::Tick issue = 0);
  Pe(Pe&&) = default;  // only before its engine has jobs (GemmEngine's events hold it)

  std::uint32_t global_pe() const { return global_pe_; }
  Sram& sram() { return *sram_; }
  const Sram& sram() const { return *sram_; }
  // For what holds bytes of the SRAM and may outlive the PE (sram.hpp).
  const boost::intrusive_ptr<Sram>& shared_sram() const { return sram_; }
  GemmEngine& gemm() { return gemm_; }
  const VectorUnit& vector() const { return vector_; }
  emu::Tick issue_time() const { return issue_; }

  // The counters of the current launch, added to by whoever measures them; the statistics its
  // parts keep themselves (the engine's busy time and FLOPs, the SRAM's peak) are read from
  // them by statistics().
  PeStatistics& counters() { return counters_; }
  PeStatistics statistics() const;
  // A launch begins: every statistic from zero, the SRAM's peak from what is held now.
  void reset_statistics();

 private:
  std::uint32_t global_pe_;
  boost::intrusive_ptr<Sram> sram_;
  GemmEngine gemm_;
  const VectorUnit& vector_;
  emu::Tick issue_;
  PeStatistics counters_;
};

}  // namespace cubesim::components
