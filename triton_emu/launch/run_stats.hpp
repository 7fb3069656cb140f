#pragma once
// What a launch measured, typed: filled by KernelRunner (launch/kernel_runner.hpp), summed
// over launches run one after another by kernels::sum_runs, read by the CLI's summary and
// sweeps. run_report() is the one place it becomes report JSON (RunResult::report, the
// simulation's keys of `cubesim run --json`; docs/cli.md lists them).

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "components/energy/energy_model.hpp"
#include "components/network/link_stats.hpp"
#include "components/network/network.hpp"
#include "components/pe/pe_statistics.hpp"
#include "emu/time.hpp"

namespace cubesim {

// One PE's launch: what it measured (components/pe/pe_statistics.hpp declares each figure,
// its report key, unit and meaning) and its name.
struct PeStats : components::PeStatistics {
  std::string pe;  // "sip0.cube1.pe5"
};

// tl.send / tl.recv over a launch (or launches summed): messages, payload bytes, and the time
// programs spent blocked on them, summed over programs.
struct MessageTotals {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  emu::Tick send_wait_ps = 0;
  emu::Tick recv_wait_ps = 0;
  // One PE's share: what its programs sent and their time blocked sending and receiving.
  static MessageTotals of(const components::PeStatistics& pe) {
    return {pe.messages_sent, pe.bytes_sent, pe.send_wait_ps, pe.recv_wait_ps};
  }
  MessageTotals& operator+=(const MessageTotals& o) {
    messages += o.messages;
    bytes += o.bytes;
    send_wait_ps += o.send_wait_ps;
    recv_wait_ps += o.recv_wait_ps;
    return *this;
  }
};

struct RunStats {
  // What ran on what.
  std::uint32_t sips = 0;
  std::uint32_t cubes_per_sip = 0;
  std::uint32_t pes_per_cube = 0;
  std::array<std::int64_t, 3> grid{};  // programs per axis
  // How the programs were placed: "hardware" (one per PE at its coordinates) or the dispatch
  // policy of a logical grid, which runs in `waves` (the most programs one PE ran).
  std::string dispatch = "hardware";
  std::uint64_t programs = 0;
  std::uint64_t waves = 1;
  bool timing_only = false;
  components::NetworkModel network_model = components::NetworkModel::packet;
  std::string backend;  // what computed the GEMM numbers: "none" when timing-only

  // What it measured.
  emu::Tick sim_time_ps = 0;
  std::uint64_t flops = 0;
  std::uint64_t events = 0;
  double wall_seconds = 0;        // host time the simulation took
  std::vector<PeStats> pes;       // the PEs of the launch's programs, in program order
  MessageTotals messages;         // over every launch summed into this one
  components::LinkStats network;  // utilisation over sim_time_ps
  // What it cost, with energy figures in the spec (system.energy); none without.
  std::optional<components::EnergyReport> energy;
  std::vector<RunStats> launches;  // the launches summed into this one, if several

  // A PE of the launch, after those added before: its statistics, its FLOPs and its messages
  // into the launch's totals.
  void add_pe(std::string name, const components::PeStatistics& pe);

  std::uint64_t total_pes() const { return std::uint64_t{sips} * cubes_per_sip * pes_per_cube; }
  double flops_per_second() const;
  double events_per_second() const;  // of host time
};

// The report of a launch: sim_time_ps, system, grid, stats (flops, bytes by kind of link,
// events, packets, per-PE and per-link figures, the busiest link and the one held back most),
// the host's wall time and rate, and how it ran (timing_only, network, backend); `launches`
// holds the report of each launch summed into this one.
nlohmann::json run_report(const RunStats& stats);

}  // namespace cubesim
