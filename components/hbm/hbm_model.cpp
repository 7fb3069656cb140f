#include "components/hbm/hbm_model.hpp"

#include <stdexcept>

#include "components/hbm/banked_hbm.hpp"
#include "components/hbm/simple_hbm.hpp"

namespace cubesim::components {
namespace {

template <class Model>
std::unique_ptr<HbmModel> make(const HbmConfig& config) {
  return std::make_unique<Model>(config);
}

}  // namespace

Bandwidth channel_share(const HbmConfig& c) {
  if (c.channels == 0 || c.bandwidth.bytes_per_s() < c.channels)
    throw std::invalid_argument(
        "system.cube.hbm.bandwidth_GBps gives each of the channels less than 1 B/s");
  return Bandwidth::from_bytes_per_s(c.bandwidth.bytes_per_s() / c.channels);
}

const emu::NameTable<MakeHbmModel>& hbm_models() {
  static const emu::NameTable<MakeHbmModel> table(
      "HBM model",
      {{"simple", &make<SimpleHbm>, "every channel an even share after a fixed latency"},
       {"banked", &make<BankedHbm>,
        "banks, rows, refresh and turnaround per channel, scheduled FR-FCFS"}});
  return table;
}

std::unique_ptr<HbmModel> make_hbm_model(const HbmConfig& config) {
  return hbm_models().at(config.model, "system.cube.hbm.model")(config);
}

}  // namespace cubesim::components
