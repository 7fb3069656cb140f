#include "components/hbm/banked_hbm.hpp"

#include <algorithm>
#include <stdexcept>

namespace cubesim::components {
namespace {

void check(const DramTiming& t) {
  if (t.bank_groups == 0 || t.banks_per_group == 0 || t.burst_bytes == 0 ||
      t.row_bytes % t.burst_bytes != 0 || t.row_bytes == 0 || t.queue_depth == 0)
    throw std::invalid_argument(
        "BankedHbm: system.cube.hbm.banked needs bank groups, banks, a queue and rows of whole "
        "bursts");
  if (t.trefi <= t.trfc)
    throw std::invalid_argument(
        "BankedHbm: system.cube.hbm.banked.trefi_ns must be longer than trfc_ns");
}

}  // namespace

DramChannel::DramChannel(const DramTiming& timing, Bandwidth bus, std::uint32_t index,
                         std::uint32_t channels)
    : t_(timing),
      burst_(bus.transfer_time(timing.burst_bytes)),
      columns_(timing.row_bytes / timing.burst_bytes),
      banks_(std::size_t{timing.bank_groups} * timing.banks_per_group),
      // Refreshes of a cube's channels are spread over the interval, not all at once.
      next_refresh_(timing.trefi / std::max<std::uint32_t>(channels, 1) * (index + 1)) {
  window_.reserve(t_.queue_depth);
}

std::uint64_t DramChannel::state_bytes(const DramTiming& t) {
  return sizeof(DramChannel) + std::uint64_t{t.bank_groups} * t.banks_per_group * sizeof(Bank) +
         std::uint64_t{t.queue_depth} * sizeof(Request);
}

void DramChannel::push(const Request& r) {
  if (window_.size() < t_.queue_depth)
    window_.push_back(r);
  else
    backlog_.push_back(r);
}

void DramChannel::drop_requests() {
  window_.clear();
  backlog_.clear();
}

std::uint32_t DramChannel::bank_of(std::uint64_t block) const {
  // The row's digits in base banks_per_group permute the banks: streams that start a whole
  // number of rows apart do not take the same banks in step (permutation-based interleaving).
  const std::uint64_t banks = t_.banks_per_group;
  std::uint64_t sum = block % banks;
  for (std::uint64_t row = block / banks; row != 0; row /= banks) sum += row % banks;
  return static_cast<std::uint32_t>(sum % banks);
}

bool DramChannel::row_open_for(const Request& r) const {
  const std::uint64_t burst = r.addr / t_.burst_bytes;
  const std::uint64_t block = burst / t_.bank_groups / columns_;
  const Bank& b =
      banks_[std::size_t{static_cast<std::uint32_t>(burst % t_.bank_groups)} * t_.banks_per_group +
             bank_of(block)];
  return b.open && b.row == block / t_.banks_per_group;
}

void DramChannel::refresh_until(Tick now) {
  // Refreshes fall due every tREFI. A busy channel postpones them, owing up to
  // max_postponed_refreshes; what it owes it does in idle time before a request (when a
  // refresh fits there) or, owing more than it may, before serving.
  if (next_refresh_ <= now) {
    const std::uint64_t due = (now - next_refresh_) / t_.trefi + 1;
    owed_ += due;
    next_refresh_ += due * t_.trefi;
  }
  if (owed_ == 0) return;
  Tick arrived = now;
  for (const Request& r : window_) arrived = std::min(arrived, r.arrival);
  if (arrived > bus_free_) {
    const std::uint64_t fit =
        t_.trfc == 0 ? owed_ : std::min<std::uint64_t>(owed_, (arrived - bus_free_) / t_.trfc);
    if (fit > 0) {
      owed_ -= fit;
      stats_.refreshes += fit;
      close_all(bus_free_ + fit * t_.trfc);
    }
  }
  while (owed_ > t_.max_postponed_refreshes) {  // an all-bank refresh now: every row closes
    const Tick over = std::max(now, bus_free_) + t_.trfc;
    bus_free_ = over;
    close_all(over);
    --owed_;
    ++stats_.refreshes;
  }
}

void DramChannel::close_all(Tick over) {
  refresh_over_ = std::max(refresh_over_, over);
  for (Bank& b : banks_) {
    b.open = false;
    b.closed_at = std::max(b.closed_at, over);
  }
}

DramChannel::Served DramChannel::serve(Tick now) {
  refresh_until(now);
  // First ready (its row open), then first come.
  std::size_t pick = 0;
  for (std::size_t i = 0; i < window_.size(); ++i)
    if (window_[i].arrival <= now && row_open_for(window_[i])) {
      pick = i;
      break;
    }
  const Request r = window_[pick];
  window_.erase(window_.begin() + static_cast<std::ptrdiff_t>(pick));
  if (!backlog_.empty()) {
    window_.push_back(backlog_.front());
    backlog_.pop_front();
  }

  Tick bus = std::max(now, bus_free_);
  Tick read_floor = 0;
  if (any_served_ && last_write_ != r.write) {
    ++stats_.turnarounds;
    if (r.write)
      bus = std::max(bus, bus_free_ + t_.trtw);
    else
      read_floor = bus_free_ + t_.twtr + t_.tcl;
  }
  const Tick cas = r.write ? t_.tcwl : t_.tcl;
  const Tick spacing = std::max(t_.tccd_l, burst_);
  const std::uint64_t span = std::uint64_t{t_.bank_groups} * columns_;  // bursts of one row span
  const std::uint64_t first = r.addr / t_.burst_bytes;
  const std::uint64_t last = (r.addr + std::max<std::uint32_t>(r.bytes, 1) - 1) / t_.burst_bytes;
  Tick start = emu::kTickMax;
  for (std::uint64_t block = first / span; block <= last / span; ++block) {
    const std::uint64_t lo = std::max(first, block * span),
                        hi = std::min(last, block * span + span - 1);
    const std::uint64_t bursts = hi - lo + 1;
    const std::uint32_t bank_index = bank_of(block);
    const std::uint64_t row = block / t_.banks_per_group;
    Tick data = 0, per_group = 0;
    const std::uint32_t groups =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(bursts, t_.bank_groups));
    for (std::uint32_t k = 0; k < groups; ++k) {
      const auto g = static_cast<std::uint32_t>((lo + k) % t_.bank_groups);
      // Bursts of this group in [lo, hi]: every bank_groups-th from lo + k.
      const std::uint64_t n = (bursts - k + t_.bank_groups - 1) / t_.bank_groups;
      Bank& b = bank(g, bank_index);
      Tick ready;
      if (b.open && b.row == row) {
        ++stats_.row_hits;
        ready = std::max(r.arrival, b.ready);
      } else {
        Tick at = std::max({r.arrival, refresh_over_, b.closed_at});
        if (b.open) {
          ++stats_.row_conflicts;
          at = std::max({at, b.activated + t_.tras, b.data_end,
                         b.write_end == 0 ? 0 : b.write_end + t_.twr}) +
               t_.trp;
        } else {
          ++stats_.row_misses;
        }
        if (activated_) at = std::max(at, last_act_ + t_.trrd);
        activated_ = true;
        last_act_ = std::max(last_act_, at);
        b.activated = at;
        b.open = true;
        b.row = row;
        ready = at + t_.trcd;
        b.ready = ready;
      }
      data = std::max(data, ready + cas);
      per_group = std::max(per_group, static_cast<Tick>(n - 1) * spacing + burst_);
    }
    const Tick from = std::max({bus, data, read_floor});
    const Tick end = from + std::max(static_cast<Tick>(bursts) * burst_, per_group);
    for (std::uint32_t k = 0; k < groups; ++k) {
      Bank& b = bank(static_cast<std::uint32_t>((lo + k) % t_.bank_groups), bank_index);
      b.data_end = end;
      if (r.write) b.write_end = end;
      if (t_.row_policy == RowPolicy::closed) {
        b.open = false;
        b.closed_at = std::max({end, b.activated + t_.tras, r.write ? end + t_.twr : 0}) + t_.trp;
      }
    }
    start = std::min(start, from);
    bus = end;
  }
  bus_free_ = bus;
  any_served_ = true;
  last_write_ = r.write;
  ++(r.write ? stats_.writes : stats_.reads);
  return {r.tag, start, bus};
}

double BankedHbm::stream_efficiency(const DramTiming& t, Bandwidth bus) {
  const double burst = static_cast<double>(bus.transfer_time(t.burst_bytes));
  const double columns = static_cast<double>(t.row_bytes / t.burst_bytes);
  const double span = burst * columns * t.bank_groups;
  const double spaced = (columns - 1) * std::max(static_cast<double>(t.tccd_l), burst) + burst;
  const double groups = span / std::max(span, spaced);
  const double refresh =
      static_cast<double>(t.trfc + t.trcd + t.tcl) / static_cast<double>(t.trefi);
  return groups * std::max(0.0, 1.0 - refresh);
}

BankedHbm::BankedHbm(const HbmConfig& config)
    : timing_(config.banked),
      channel_bandwidth_(channel_share(config)),
      stream_bandwidth_(channel_bandwidth_),
      latency_(config.latency) {
  check(timing_);
  const double rate = static_cast<double>(channel_bandwidth_.bytes_per_s()) *
                      stream_efficiency(timing_, channel_bandwidth_);
  stream_bandwidth_ =
      Bandwidth::from_bytes_per_s(std::max<std::uint64_t>(1, static_cast<std::uint64_t>(rate)));
}

}  // namespace cubesim::components
