#pragma once
// `cubesim probe`: the latency and bandwidth of every class of path a system has, each
// simulated alone (a fresh system per transfer) and set beside its zero-load bound
// (components/network/path_bound.hpp): the longest way's latency plus the most loaded
// resource's serialisation. What the simulation adds to the bound is the packets, the DMA and
// message windows and queueing. docs/cli.md, "cubesim probe", lists the cases.

#include <cstdint>
#include <string>
#include <vector>

#include "components/network/network.hpp"
#include "components/spec/spec.hpp"
#include "emu/time.hpp"

namespace cubesim::cli {

struct ProbePoint {
  std::uint64_t bytes = 0;
  emu::Tick simulated = 0;
  emu::Tick bound = 0;          // latency + serialisation
  emu::Tick latency = 0;        // the bound's parts
  emu::Tick serialisation = 0;  // of the bottleneck
  std::string bottleneck;
  double achieved_GBps() const;
  double peak_GBps() const;    // bytes / serialisation: what the bottleneck allows
  double utilisation() const;  // achieved / peak
};

struct ProbeCase {
  std::string name;         // "hbm.own_slice"
  std::string description;  // what moves where
  std::string formula;      // the bound's terms, as docs/hardware-model.md writes them
  // The way of the smallest transfer: links by kind (mesh, UCIe, inter-SIP, ports), and their
  // head latencies; a read's request and HBM access before its data leaves.
  std::uint32_t mesh_hops = 0, ucie_hops = 0, inter_sip_hops = 0, ports = 0;
  emu::Tick mesh_ps = 0, ucie_ps = 0, inter_sip_ps = 0, ports_ps = 0, request_ps = 0;
  ProbePoint latency;             // one small transfer (64 bytes)
  ProbePoint reference;           // 32 KiB (or the largest that fits)
  std::vector<ProbePoint> sweep;  // 4 KiB to 1 MiB, as far as the PE's SRAM or slots allow
  std::uint64_t max_bytes = 0;    // why the sweep stops where it does
  std::string limit;
};

struct ProbeCheck {
  std::string name;
  bool pass = true;
  std::string detail;
};

struct ProbeResult {
  std::vector<ProbeCase> cases;
  std::vector<ProbeCheck> checks;
  bool passed() const;
};

// Every case the system has (or the one named `only`; UsageError naming the cases when it has
// none of that name).
ProbeResult run_probe(const components::Spec& spec, components::NetworkModel network,
                      const std::string& only);

}  // namespace cubesim::cli
