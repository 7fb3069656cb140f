#pragma once
// A whole modelled system built from a SystemConfig: the topology and its links, the address
// map, the network (packet or flow model), functional memory (unless timing-only), and the GEMM
// timing model and vector unit that every PE shares (one each: the PEs are alike).
// Components know nothing of kernels; triton_emu drives them.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "components/memory/address_map.hpp"
#include "components/memory/sparse_memory.hpp"
#include "components/network/network.hpp"
#include "components/network/topology.hpp"
#include "components/pe/gemm_timing.hpp"
#include "components/pe/vector_unit.hpp"
#include "components/system/pe_coord.hpp"
#include "components/system_config.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components {

struct SystemOptions {
  bool timing_only = false;  // no functional bytes stored or moved; timing is identical
  NetworkModel network = NetworkModel::packet;  // see components/network/network.hpp
};

class System {
 public:
  System(const SystemConfig& config, emu::Scheduler& scheduler, SystemOptions options = {});
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  const SystemConfig& config() const { return config_; }
  emu::Scheduler& scheduler() { return scheduler_; }
  bool timing_only() const { return options_.timing_only; }

  const AddressMap& address_map() const { return map_; }
  AddressMap& address_map() { return map_; }  // the allocator maps frames
  Topology& topology() { return topology_; }
  const Topology& topology() const { return topology_; }
  Network& network() { return *network_; }
  const Network& network() const { return *network_; }
  SparseMemory* memory() { return memory_.get(); }  // nullptr when timing-only
  const SparseMemory* memory() const { return memory_.get(); }
  const GemmTimingModel& gemm_timing() const { return gemm_; }
  const VectorUnit& vector_unit() const { return vector_; }

  std::uint32_t total_pes() const { return topology_.total_pes(); }
  PeCoord pe_coord(std::uint32_t global_pe) const;
  std::uint32_t global_pe(PeCoord c) const;
  std::string pe_name(std::uint32_t global_pe) const;  // "sip0.cube1.pe5"

  // Topology, peak rates and bandwidths, for `cubesim info` and reports.
  nlohmann::json describe() const;

 private:
  SystemConfig config_;
  emu::Scheduler& scheduler_;
  SystemOptions options_;
  AddressMap map_;
  Topology topology_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SparseMemory> memory_;
  GemmTimingModel gemm_;
  VectorUnit vector_;
};

}  // namespace cubesim::components
