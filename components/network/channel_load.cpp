#include "components/network/channel_load.hpp"

#include <limits>

namespace cubesim::components {

void ChannelLoad::add(const Route& route, double weight) {
  for (const LinkId id : route.links) load_[id] += weight;
}

ChannelLoad::Bound ChannelLoad::bound() const {
  Bound b{std::numeric_limits<double>::infinity(), 0, ""};
  for (const auto& [id, load] : load_) {
    const double rate = static_cast<double>(t_.link(id).bandwidth.bytes_per_s()) / load;
    if (rate < b.rate || (rate == b.rate && id < b.link)) b.rate = rate, b.link = id;
  }
  if (!load_.empty()) b.link_name = t_.link_name(b.link);
  return b;
}

}  // namespace cubesim::components
