#pragma once
// The banked HBM model (system.cube.hbm.model = banked): each channel of a cube is a DRAM
// pseudo-channel with its own data bus, bank groups and banks (system.cube.hbm.banked), and a
// controller that schedules the requests waiting for it first-ready, first-come-first-served:
// the oldest request whose row is open goes first, else the oldest.
//
// Where a byte lies in its channel (the channel's own addresses, its granules laid end to end):
//   burst = address / burst_bytes    bank group = burst % bank_groups
//   column = burst / bank_groups % (row_bytes / burst_bytes)
//   span = burst / (bank_groups x row_bytes / burst_bytes)   row = span / banks_per_group
//   bank = (span's and the row's digits in base banks_per_group, summed) % banks_per_group
// so consecutive bursts rotate over the bank groups (spacing tCCD_L within a group, one burst
// time on the bus across groups) and a row of every bank group is bank_groups x row_bytes of
// consecutive bytes; the next such span lies in the next bank, which can be opened while the
// last one is read.
//
// A request (one packet: consecutive bytes of one channel) is served whole, its bursts back to
// back from when every bank it needs has its row open and the bus is free:
//   a bank's row: open and the same (hit): ready now; closed (miss): activate at
//     max(arrival, refresh over, bank precharged, last activate + tRRD), ready tRCD later;
//     another row open (conflict): precharge at max(activate + tRAS, last data, last write
//     data + tWR), activate tRP later, as a miss
//   data  = max(bus free [+ tRTW after a read, for a write], ready + tCL (read) or tCWL
//           (write) [, last write data + tWTR + tCL for a read]) for the span's bursts, no
//           faster than tCCD_L per bank group
// closed row policy: every access precharges its banks after it. Every tREFI (staggered over a
// cube's channels) an all-bank refresh falls due: it closes every row and holds the bus for
// tRFC. A busy channel postpones it (as JEDEC DRAMs allow), owing at most
// max_postponed_refreshes; it refreshes in idle time before a request when a refresh fits there,
// and before serving when it owes more. The requests the scheduler chooses among are the oldest
// queue_depth; the others wait in order behind them.

#include <cstdint>
#include <deque>
#include <vector>

#include "components/hbm/hbm_model.hpp"

namespace cubesim::components {

// What a channel's controller did, summed over channels by the network.
struct DramStats {
  std::uint64_t reads = 0, writes = 0;  // requests served
  // Per bank a request used: its row open already, opened in a closed bank, or opened after
  // closing another row.
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t refreshes = 0;
  std::uint64_t turnarounds = 0;  // the bus changed direction between two requests
  double row_hit_rate() const {
    const std::uint64_t n = row_hits + row_misses + row_conflicts;
    return n == 0 ? 0.0 : static_cast<double>(row_hits) / static_cast<double>(n);
  }
  DramStats& operator+=(const DramStats& o) {
    reads += o.reads;
    writes += o.writes;
    row_hits += o.row_hits;
    row_misses += o.row_misses;
    row_conflicts += o.row_conflicts;
    refreshes += o.refreshes;
    turnarounds += o.turnarounds;
    return *this;
  }
};

// One channel's banks, bus and scheduler.
class DramChannel {
 public:
  struct Request {
    std::uint64_t addr;  // in the channel's own address space
    std::uint32_t bytes;
    bool write;
    Tick arrival;  // when the controller has it (a write: with its data)
    void* tag;     // the caller's
  };
  struct Served {
    void* tag;
    Tick start, end;  // the request's data on the bus
  };

  // `index` of `channels` in its cube: where its refreshes fall in tREFI.
  DramChannel(const DramTiming& timing, Bandwidth bus, std::uint32_t index, std::uint32_t channels);

  void push(const Request& r);
  bool empty() const { return window_.empty(); }
  Tick bus_free() const { return bus_free_; }
  // Chooses a request that has arrived by `now` (FR-FCFS) and serves it; not when empty().
  Served serve(Tick now);

  const DramStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }
  // Host memory one channel of these timings takes (its banks and its queue's room), for the
  // host-memory check.
  static std::uint64_t state_bytes(const DramTiming& t);
  // Forgets the requests waiting (a failed launch); the banks stay as they are.
  void drop_requests();

 private:
  struct Bank {
    std::uint64_t row = 0;
    bool open = false;
    Tick activated = 0;  // its row's activate
    Tick ready = 0;      // a column command can issue (the row open)
    Tick data_end = 0;   // its last data on the bus
    Tick write_end = 0;  // its last write data (0: none yet)
    Tick closed_at = 0;  // precharged (closed row policy, or refresh)
  };
  std::uint32_t bank_of(std::uint64_t block) const;  // the bank of a row span
  bool row_open_for(const Request& r) const;
  void refresh_until(Tick now);
  void close_all(Tick over);  // a refresh over at `over` closed every row
  Bank& bank(std::uint32_t group, std::uint32_t bank) {
    return banks_[std::size_t{group} * t_.banks_per_group + bank];
  }

  DramTiming t_;
  Tick burst_;             // one burst on the bus
  std::uint64_t columns_;  // bursts per row
  std::vector<Bank> banks_;
  std::vector<Request> window_;  // the oldest queue_depth, in arrival order
  std::deque<Request> backlog_;
  Tick bus_free_ = 0;
  Tick last_act_ = 0;
  Tick refresh_over_ = 0;
  Tick next_refresh_;
  std::uint64_t owed_ = 0;  // refreshes due and not done
  bool any_served_ = false, last_write_ = false, activated_ = false;
  DramStats stats_;
};

class BankedHbm final : public HbmModel {
 public:
  // std::invalid_argument when a channel would get less than 1 B/s, or the timings cannot
  // work (checked in full by the spec's validation, which names the fields).
  explicit BankedHbm(const HbmConfig& config);

  Bandwidth channel_bandwidth() const override { return channel_bandwidth_; }
  Tick access_latency() const override { return latency_; }
  bool scheduled() const override { return true; }
  Bandwidth stream_bandwidth() const override { return stream_bandwidth_; }
  Tick stream_latency() const override { return timing_.trcd + timing_.tcl; }

  const DramTiming& timing() const { return timing_; }
  DramChannel make_channel(std::uint32_t index, std::uint32_t channels) const {
    return DramChannel(timing_, channel_bandwidth_, index, channels);
  }

  // The share of the bus a long sequential stream keeps: refresh (its tRFC and reopening a
  // row after it, per tREFI) and bank-group spacing (a row's bursts of one group no closer
  // than tCCD_L).
  static double stream_efficiency(const DramTiming& t, Bandwidth bus);

 private:
  DramTiming timing_;
  Bandwidth channel_bandwidth_;
  Bandwidth stream_bandwidth_;
  Tick latency_;
};

}  // namespace cubesim::components
