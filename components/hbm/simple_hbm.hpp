#pragma once
// The first HBM model: each channel serves an even share of the cube's bandwidth, and every
// request pays the same access latency, whatever its address or what came before it.

#include "components/hbm/hbm_model.hpp"

namespace cubesim::components {

class SimpleHbm final : public HbmModel {
 public:
  // Each channel its channel_share() (hbm_model.hpp).
  explicit SimpleHbm(const HbmConfig& config);

  Bandwidth channel_bandwidth() const override { return channel_bandwidth_; }
  Tick access_latency() const override { return latency_; }

 private:
  Bandwidth channel_bandwidth_;
  Tick latency_;
};

}  // namespace cubesim::components
