#include "components/network/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "components/network/flow_network.hpp"
#include "components/network/packet_network.hpp"

namespace cubesim::components {

namespace {
constexpr const char* kEndOfTime = "simulated time (2^64 ps = 213 days)";

// The value of link_bandwidth_field(kind) in the spec, in GB/s.
double spec_GBps(const SystemConfig& c, LinkKind kind) {
  Bandwidth b = c.cube.noc.link_bandwidth;
  if (kind == LinkKind::ucie) b = c.ucie.bandwidth;
  if (kind == LinkKind::inter_sip) b = c.inter_sip.bandwidth;
  if (kind == LinkKind::hbm_channel) b = c.cube.hbm.bandwidth;
  if (kind == LinkKind::cache) b = c.cube.cache.bandwidth;
  return static_cast<double>(b.bytes_per_s()) / 1e9;
}
}  // namespace

namespace {
template <class Model>
std::unique_ptr<Network> make(emu::Scheduler& scheduler, Topology& topology,
                              const AddressMap& map) {
  return std::make_unique<Model>(scheduler, topology, map);
}
}  // namespace

const emu::NameTable<NetworkModelEntry>& network_models() {
  static const emu::NameTable<NetworkModelEntry> table(
      "network model",
      {{"packet",
        {NetworkModel::packet, &make<PacketNetwork>},
        "every packet and hop; the reference"},
       {"flow",
        {NetworkModel::flow, &make<FlowNetwork>},
        "one reservation per transfer and link: far faster on large systems, approximate "
        "when transfers contend"}});
  return table;
}

const std::string& network_model_name(NetworkModel m) {
  for (const auto& row : network_models().rows())
    if (row.entry.model == m) return row.name;
  throw std::logic_error("a network model without a name");
}

std::unique_ptr<Network> Network::make(NetworkModel model, emu::Scheduler& scheduler,
                                       Topology& topology, const AddressMap& map) {
  for (const auto& row : network_models().rows())
    if (row.entry.model == model) return row.entry.make(scheduler, topology, map);
  throw std::logic_error("a network model without an implementation");
}

Network::Network(NetworkModel model, emu::Scheduler& scheduler, Topology& topology,
                 const AddressMap& map)
    : model_(model),
      sched_(scheduler),
      topology_(topology),
      map_(map),
      links_(topology.links()),
      packet_bytes_(topology.config().cube.noc.packet_bytes),
      window_(topology.config().pe.dma.max_outstanding_packets),
      buffers_(topology),
      tracer_(topology) {
  if (topology.has_cache())
    cache_ = std::make_unique<CubeCaches>(topology.config().cube.cache, topology.cubes(),
                                          topology.config().cube.hbm.capacity_bytes);
}

void Network::read(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "read");
  if (cache_ && bytes > 0) {
    read_cached(pe, addr, bytes, std::move(done));
    return;
  }
  begin(TransferKind::read, pe, 0, addr, bytes, std::move(done));
}

void Network::write(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "write");
  if (cache_) write_cached(addr, bytes);
  begin(TransferKind::write, pe, 0, addr, bytes, std::move(done), true);
}

void Network::write_posted(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  map_.check_range(addr, bytes, "write");
  if (cache_) write_cached(addr, bytes);
  begin(TransferKind::write, pe, 0, addr, bytes, std::move(done));
}

void Network::read_cached(std::uint32_t pe, std::uint64_t addr, std::uint64_t bytes, Done done) {
  // Lines lie in one channel granule (the spec checks), so a piece cut at lines is one line of
  // one cube, and the runs' transfers are cut into packets as any read is.
  const std::uint64_t line = cache_->line_bytes();
  runs_.clear();
  while (bytes > 0) {
    // A piece is contiguous in one cube's memory: its lines follow one another there.
    const auto piece = map_.first_piece(addr, bytes, map_.frame_bytes());
    std::uint64_t offset = piece.loc.offset;
    const std::uint64_t end = offset + piece.len;
    while (offset < end) {
      const std::uint64_t len = std::min(end - offset, line - offset % line);
      const bool hit = cache_->read(piece.loc.global_cube, offset / line);
      const TransferKind kind = hit ? TransferKind::cache_read : TransferKind::read;
      if (!runs_.empty() && runs_.back().kind == kind)
        runs_.back().bytes += len;
      else
        runs_.push_back({kind, addr, len});
      addr += len;
      offset += len;
    }
    bytes -= piece.len;
  }
  if (runs_.size() == 1) {
    begin(runs_[0].kind, pe, 0, runs_[0].addr, runs_[0].bytes, std::move(done));
    return;
  }
  struct Join {
    std::size_t left;
    Done done;
  };
  auto join = std::make_shared<Join>(Join{runs_.size(), std::move(done)});
  const std::vector<Run> runs = runs_;  // begin() may read through the cache again
  for (const Run& r : runs)
    begin(r.kind, pe, 0, r.addr, r.bytes, [join] {
      if (--join->left == 0 && join->done) join->done();
    });
}

void Network::write_cached(std::uint64_t addr, std::uint64_t bytes) {
  const std::uint64_t line = cache_->line_bytes();
  while (bytes > 0) {
    const auto piece = map_.first_piece(addr, bytes, map_.frame_bytes());
    for (std::uint64_t offset = piece.loc.offset, end = offset + piece.len; offset < end;) {
      const std::uint64_t len = std::min(end - offset, line - offset % line);
      cache_->write(piece.loc.global_cube, offset / line, len == line);
      offset += len;
    }
    addr += piece.len;
    bytes -= piece.len;
  }
}

void Network::send(std::uint32_t src_pe, std::uint32_t dst_pe, std::uint64_t bytes, Done done) {
  if (dst_pe >= topology_.total_pes())
    throw std::out_of_range("Network::send: destination PE index out of range");
  begin(TransferKind::send, src_pe, dst_pe, 0, bytes, std::move(done));
}

void Network::to_switch(std::uint32_t pe, SwitchLevel level, std::uint64_t bytes, Done done) {
  begin(TransferKind::to_switch, pe, static_cast<std::uint32_t>(level), 0, bytes, std::move(done));
}

void Network::reply(std::uint32_t cube, std::uint32_t channel, std::uint32_t pe,
                    std::uint64_t bytes, Done done) {
  begin(TransferKind::reply, pe, channel, cube, bytes, std::move(done));
}

void Network::from_switch(SwitchLevel level, std::uint32_t connection, std::uint32_t pe,
                          std::uint64_t bytes, Done done) {
  begin(TransferKind::from_switch, pe, static_cast<std::uint32_t>(level), connection, bytes,
        std::move(done));
}

void Network::begin(TransferKind kind, std::uint32_t pe, std::uint32_t peer, std::uint64_t addr,
                    std::uint64_t bytes, Done done, bool acknowledged) {
  if (pe >= topology_.total_pes()) throw std::out_of_range("Network: PE index out of range");
  Transfer& t = *new_transfer();
  t.kind = kind;
  t.acknowledged = acknowledged;
  t.pe = pe;
  t.peer = peer;
  t.addr = addr;
  t.bytes = bytes;
  t.born = sched_.now();
  t.done = std::move(done);
  ++transfers_;
  ++live_transfers_;
  if (bytes == 0) {
    sched_.schedule_in(
        0, [this, &t] { complete(t); }, 0, "empty transfer");
    return;
  }
  start(t);
}

void Network::complete(Transfer& t) {
  // Recycle the record before the callback runs: it may start a transfer that reuses it.
  --live_transfers_;
  Done d = std::move(t.done);
  t.done = nullptr;
  t.next_free = free_transfers_;
  free_transfers_ = &t;
  if (d) d();
}

Transfer* Network::new_transfer() {
  Transfer* t = free_transfers_;
  if (!t) {
    t = &transfer_store_.emplace_back();
    t->trace_flow = trace_flow_;
    return t;
  }
  free_transfers_ = t->next_free;
  // Field by field: `*t = Transfer{}` zeroed a temporary with `rep stos` and moved it. The
  // caller sets what a transfer is; this resets its progress.
  if (t->done) t->done = nullptr;
  t->issued = 0;
  t->delivered = 0;
  t->in_flight = 0;
  t->next_free = nullptr;
  t->trace_flow = trace_flow_;
  if (!t->traced_links.empty()) t->traced_links.clear();
  return t;
}

void Network::reset_stats() {
  for (Link& l : links_) {
    l.busy = 0;
    l.credit_wait = 0;
    l.bytes = 0;
    l.packets = 0;
  }
  packets_ = packet_hops_ = transfers_ = 0;
  if (cache_) cache_->reset_stats();
  reset_dram_stats();
}

void Network::abandon_in_flight() {
  for (Link& l : links_) l.free_at = 0;
  buffers_.clear();
  forget_in_flight();
  free_transfers_ = nullptr;
  for (Transfer& t : transfer_store_) {
    t.done = nullptr;
    t.next_free = free_transfers_;
    free_transfers_ = &t;
  }
  live_transfers_ = 0;
}

void Network::busy_overflow(LinkId id, std::uint64_t bytes, emu::Tick from) const {
  const Link& l = links_[id];
  const char* field = link_bandwidth_field(l.kind);
  const std::string busy =
      from == 0 ? std::string() : fmt::format(" after being busy until {}", emu::format_time(from));
  throw emu::TimeOverflow(fmt::format(
      "the transfer time of {} bytes over {} = {} overflows {}: link {} would carry them at {} "
      "B/s{}. Raise {} or move fewer bytes over that link",
      bytes, field, spec_GBps(topology_.config(), l.kind), kEndOfTime, topology_.link_name(id),
      l.bandwidth.bytes_per_s(), busy, field));
}

void Network::arrival_overflow(LinkId id, emu::Tick from, emu::Tick latency) const {
  const Link& l = links_[id];
  const char* field = link_bandwidth_field(l.kind);
  throw emu::TimeOverflow(fmt::format(
      "a packet leaving link {} at {} would arrive {} later, past the end of {}: the links on its "
      "way ({} = {} here) are busy that long. Raise their bandwidth or move fewer bytes",
      topology_.link_name(id), emu::format_time(from), emu::format_time(latency), kEndOfTime, field,
      spec_GBps(topology_.config(), l.kind)));
}

void Network::window_overflow(std::uint32_t pe, std::uint64_t packets, emu::Tick from,
                              emu::Tick round_trip) const {
  throw emu::TimeOverflow(fmt::format(
      "the DMA engine of PE {} (global index) would still hold packets past the end of {}: from "
      "{}, {} packets, {} in flight at a time (system.pe.dma.max_outstanding_packets), each for "
      "a round trip of {}. Raise the bandwidths on the transfer's way or move fewer bytes",
      pe, kEndOfTime, emu::format_time(from), packets, window_, emu::format_time(round_trip)));
}

void Network::request_overflow(std::uint32_t pe, emu::Tick from, emu::Tick delay) const {
  throw emu::TimeOverflow(fmt::format(
      "a transfer of PE {} (global index) starting at {} would reach its first link {} later "
      "(the hop latencies and system.cube.hbm.latency_ns on the way), past the end of {}: the "
      "links before it are busy that long. Raise their bandwidth or move fewer bytes",
      pe, emu::format_time(from), emu::format_time(delay), kEndOfTime));
}

LinkStats Network::link_stats(emu::Tick elapsed) const {
  LinkStats s = measure_links(topology_, elapsed, counts_credit_waits());
  s.transfers = transfers_;
  s.packets = packets_;
  s.packet_hops = packet_hops_;
  if (cache_) s.cache = cache_->stats();
  s.dram = dram_stats();
  return s;
}

}  // namespace cubesim::components
