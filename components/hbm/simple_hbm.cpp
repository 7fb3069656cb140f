#include "components/hbm/simple_hbm.hpp"

namespace cubesim::components {

SimpleHbm::SimpleHbm(const HbmConfig& config)
    : channel_bandwidth_(channel_share(config)), latency_(config.latency) {}

}  // namespace cubesim::components
