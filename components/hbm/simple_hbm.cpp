#include "components/hbm/simple_hbm.hpp"

#include <stdexcept>

namespace cubesim::components {
namespace {

Bandwidth share(const HbmConfig& c) {
  if (c.channels == 0 || c.bandwidth.bytes_per_s() < c.channels)
    throw std::invalid_argument(
        "SimpleHbm: system.cube.hbm.bandwidth_GBps gives each of the channels less than 1 B/s");
  return Bandwidth::from_bytes_per_s(c.bandwidth.bytes_per_s() / c.channels);
}

}  // namespace

SimpleHbm::SimpleHbm(const HbmConfig& config)
    : channel_bandwidth_(share(config)), latency_(config.latency) {}

}  // namespace cubesim::components
