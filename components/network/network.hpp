#pragma once
// Moves bytes between PEs and memory over the links of a Topology, in simulated time: the
// interface the programming model drives, with two models chosen by name.
//
//  - packet (packet_network.hpp, the reference): every packet and every hop, virtual
//    cut-through, with the spec's input buffers and credit flow control.
//  - flow (flow_network.hpp, for what-if studies of large systems): one reservation per
//    transfer and link; approximate when transfers contend (docs/hardware-model.md compares).
//
// A transfer is cut into packets at packet_bytes boundaries of its memory address (and at HBM
// channel and interleave granules, so each packet has one source and one destination). Both
// models keep the link statistics (link.hpp) and the link trace (link_trace.hpp) the same way.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "components/cache/cube_cache.hpp"
#include "components/memory/address_map.hpp"
#include "components/network/input_buffers.hpp"
#include "components/network/link_stats.hpp"
#include "components/network/link_trace.hpp"
#include "components/network/topology.hpp"
#include "components/network/transfer.hpp"
#include "emu/name_table.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components {

class Network;

enum class NetworkModel : std::uint8_t { packet, flow };
struct NetworkModelEntry {
  NetworkModel model;
  std::unique_ptr<Network> (*make)(emu::Scheduler&, Topology&, const AddressMap&);
  friend bool operator==(const NetworkModelEntry&, const NetworkModelEntry&) = default;
};
// The models by name (emu/name_table.hpp), in the order the CLI's --network lists them.
const emu::NameTable<NetworkModelEntry>& network_models();
const std::string& network_model_name(NetworkModel m);

class Network {
 public:
  using Done = Transfer::Done;

  // The model `model` over the topology's links.
  static std::unique_ptr<Network> make(NetworkModel model, emu::Scheduler& scheduler,
                                       Topology& topology, const AddressMap& map);
  virtual ~Network() = default;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // `done` runs (as a simulation callback) when the last byte has arrived. PEs are global
  // indices (global_cube * pes_per_cube + PE within the cube). Address ranges are checked
  // first (AddressError). A transfer of zero bytes completes at once. With a cube cache
  // (system.cube.cache), a read's lines are looked up as it is asked for: each run of hits is
  // served by the cache slices, each run of misses by HBM, and `done` runs when all are in; a
  // write goes through to HBM and allocates the lines it covers whole (cube_cache.hpp).
  void read(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  // A write completes when the responses of its last bytes are back at the PE (each packet's
  // response, system.cube.noc.response_bytes, crosses the reverse route), and its packets hold
  // their DMA slots until then. A posted write completes when its last byte has landed (an
  // atomic's operands: the atomic unit's reply is its response).
  void write(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  void write_posted(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  void send(std::uint32_t src_pe, std::uint32_t dst_pe, std::uint64_t bytes, Done done);
  // In-network reduction: `bytes` from `pe` up to the switch of `level` (done when the last
  // byte is in the switch), and from that switch down to `pe` over link `connection` (sent by
  // the switch, so no PE's DMA window holds it back). The level must be a switch.
  void to_switch(std::uint32_t pe, SwitchLevel level, std::uint64_t bytes, Done done);
  // From the controller of HBM channel `channel` of global cube `cube` back to `pe` (an atomic
  // unit's reply): the controller's router to the PE, not over the channel; no DMA window.
  void reply(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe, std::uint64_t bytes,
             Done done);
  void from_switch(SwitchLevel level, std::uint32_t connection, std::uint32_t pe,
                   std::uint64_t bytes, Done done);

  // Link slices go to `trace` (one track per link that carries traffic), as `mode` says;
  // `busy_gap` is the longest idle gap inside a busy period. flush_trace() writes the slices
  // still open.
  void set_trace(emu::TraceWriter* trace, LinkTrace mode = LinkTrace::all, emu::Tick busy_gap = 0) {
    tracer_.start(trace, mode, busy_gap);
  }
  void flush_trace() { tracer_.flush(); }
  // While `id` is not 0, the transfers issued carry trace flow `id`: the first time one of them
  // occupies a link, it adds a step of the flow on that link's slice.
  void set_trace_flow(std::uint64_t id) { trace_flow_ = id; }

  // Zeroes the link and packet statistics (a new launch measures from here).
  void reset_stats();
  // Forgets every transfer in flight or queued and frees every link and DMA engine, as on a new
  // network. For a run that stopped early, once the scheduler has dropped the events those
  // transfers were waiting for: their callbacks are destroyed without being called.
  void abandon_in_flight();

  NetworkModel model() const { return model_; }
  // The cubes' caches; null when the spec has none.
  const CubeCaches* cache() const { return cache_.get(); }
  // Empties every cube's cache (a cold start).
  void clear_cache() {
    if (cache_) cache_->clear();
  }
  Topology& topology() { return topology_; }
  const Topology& topology() const { return topology_; }
  // In the flow model: packets the transfers would have been cut into, and link reservations.
  std::uint64_t packets() const { return packets_; }
  std::uint64_t packet_hops() const { return packet_hops_; }
  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t in_flight_transfers() const { return live_transfers_; }

  // The links' statistics (link_stats.hpp) and the transfer and packet counts above,
  // utilisation measured over `elapsed`.
  LinkStats link_stats(emu::Tick elapsed) const;

 protected:
  Network(NetworkModel model, emu::Scheduler& scheduler, Topology& topology, const AddressMap& map);

  // Moves a transfer of at least one byte; complete(t) when its last byte has arrived.
  virtual void start(Transfer& t) = 0;
  // What abandon_in_flight() forgets of the model's own state.
  virtual void forget_in_flight() = 0;
  // Whether link statistics include credit waits (the packet model with bounded buffers).
  virtual bool counts_credit_waits() const { return false; }
  // What the HBM channels' controllers did (the banked model, where the network schedules
  // them); none otherwise. reset_stats() zeroes it through reset_dram_stats().
  virtual std::optional<DramStats> dram_stats() const { return std::nullopt; }
  virtual void reset_dram_stats() {}
  // The last byte is delivered: recycles the record, then calls its Done.
  void complete(Transfer& t);

  // Simulated time would pass emu::kTickMax: emu::TimeOverflow naming the link or PE, the spec
  // field behind it and what would fix it. A run cannot go on past the end of time.
  [[noreturn]] void busy_overflow(LinkId id, std::uint64_t bytes, emu::Tick from) const;
  [[noreturn]] void arrival_overflow(LinkId id, emu::Tick from, emu::Tick latency) const;
  [[noreturn]] void window_overflow(std::uint32_t pe, std::uint64_t packets, emu::Tick from,
                                    emu::Tick round_trip) const;
  [[noreturn]] void request_overflow(std::uint32_t pe, emu::Tick from, emu::Tick delay) const;

  NetworkModel model_;
  emu::Scheduler& sched_;
  Topology& topology_;
  const AddressMap& map_;
  std::vector<Link>& links_;
  std::uint32_t packet_bytes_;
  std::uint32_t window_;  // system.pe.dma.max_outstanding_packets
  InputBuffers buffers_;
  LinkTracer tracer_;
  std::uint64_t packets_ = 0, packet_hops_ = 0, transfers_ = 0, live_transfers_ = 0;

 private:
  void begin(TransferKind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
             std::uint64_t bytes, Done done, bool acknowledged = false);
  Transfer* new_transfer();
  // A read through the cube cache: one transfer per run of hits or misses.
  void read_cached(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done);
  void write_cached(std::uint64_t addr, std::uint64_t bytes);

  struct Run {
    TransferKind kind;
    std::uint64_t addr, bytes;
  };
  std::unique_ptr<CubeCaches> cache_;
  std::vector<Run> runs_;

  std::deque<Transfer> transfer_store_;
  Transfer* free_transfers_ = nullptr;
  std::uint64_t trace_flow_ = 0;
};

}  // namespace cubesim::components
