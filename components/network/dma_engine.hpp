#pragma once
// A PE's DMA engine in the packet model: it keeps at most `window` packets in flight
// (system.pe.dma.max_outstanding_packets) over all its transfers; when one is delivered the
// next leaves, taken round-robin from the transfers that still have packets to send, so
// concurrent transfers share the engine fairly.

#include <cstdint>
#include <deque>

#include "components/network/transfer.hpp"

namespace cubesim::components {

class DmaEngine {
 public:
  explicit DmaEngine(std::uint32_t window = 1) : window_(window) {}

  // Nothing queued and room for a packet: a new transfer's first packet may leave at once.
  bool free() const { return ready_.empty() && in_flight_ < window_; }
  // A queued transfer's packet may leave now.
  bool can_issue() const { return in_flight_ < window_ && !ready_.empty(); }
  // The transfer whose turn it is; queue() it again while it has packets left.
  Transfer& take() {
    Transfer& t = *ready_.front();
    ready_.pop_front();
    return t;
  }
  void queue(Transfer& t) { ready_.push_back(&t); }
  // A packet takes a slot of the window until it is delivered.
  void sent() { ++in_flight_; }
  void delivered() { --in_flight_; }
  // Forgets every packet and transfer (a run that stopped early).
  void clear() {
    in_flight_ = 0;
    ready_.clear();
  }

 private:
  std::uint32_t window_;
  std::uint32_t in_flight_ = 0;
  std::deque<Transfer*> ready_;  // transfers with packets left to send, round-robin
};

}  // namespace cubesim::components
