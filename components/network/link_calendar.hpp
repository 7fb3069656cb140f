#pragma once
// When a link is busy, as disjoint intervals in time order: the reservations of a model that
// books a transfer's links when the transfer starts, not as its bytes reach them (the flow
// model, network/flow_network.hpp, and the collectives' alpha-beta model). A link serves what
// reaches it first, whatever order the model books it in: a transfer booked later may reach a
// link sooner (a PE's load, booked after a message from across an 800 ns link that will only
// get there later) and uses the time before it, as its packets would in the packet model.

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "emu/time.hpp"

namespace cubesim::components {

class LinkCalendar {
 public:
  // The earliest time from `from` on with `length` free after it.
  emu::Tick gap(emu::Tick from, emu::Tick length) const {
    if (busy_.empty() || from >= busy_.back().second) return from;  // past every booking
    // The bookings are disjoint and in order, so their ends are too: skip those ended by
    // `from` at once (a busy link has many booked ahead).
    const auto first = std::partition_point(
        busy_.begin() + static_cast<std::ptrdiff_t>(first_), busy_.end(),
        [from](const std::pair<emu::Tick, emu::Tick>& x) { return x.second <= from; });
    emu::Tick t = from;
    for (auto it = first; it != busy_.end(); ++it) {
      if (it->first >= t + length) return t;
      t = it->second;
    }
    return t;
  }
  // [a, b) is busy; what ended by `now` (no booking starts before it) is forgotten.
  void occupy(emu::Tick a, emu::Tick b, emu::Tick now) {
    if (b <= a) return;
    if (!busy_.empty() && a == busy_.back().second) {  // right after every booking, as most are
      busy_.back().second = b;
      return;
    }
    forget_before(now);
    if (busy_.empty() || a > busy_.back().second) {  // after every booking: no search
      busy_.push_back({a, b});
      return;
    }
    const auto from = busy_.begin() + static_cast<std::ptrdiff_t>(first_);
    auto it = std::lower_bound(from, busy_.end(), std::pair{a, a});
    if (it != from && std::prev(it)->second >= a) {
      --it;
      it->second = std::max(it->second, b);
    } else {
      it = busy_.insert(it, {a, b});
    }
    auto next = std::next(it);
    while (next != busy_.end() && next->first <= it->second) {
      it->second = std::max(it->second, next->second);
      next = busy_.erase(next);
    }
  }
  // The end of the last booking (0: none).
  emu::Tick last() const { return busy_.empty() ? 0 : busy_.back().second; }
  void clear() {
    busy_.clear();
    first_ = 0;
  }

 private:
  void forget_before(emu::Tick now) {
    while (first_ < busy_.size() && busy_[first_].second <= now) ++first_;
    if (first_ > 16 && first_ * 2 > busy_.size()) {
      busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
    }
  }

  std::vector<std::pair<emu::Tick, emu::Tick>> busy_;
  std::size_t first_ = 0;  // busy_[..first_) ended before any booking can start
};

}  // namespace cubesim::components
