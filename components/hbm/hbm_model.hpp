#pragma once
// A cube's HBM as the network sees it: how fast each channel serves bytes, and how long a
// request waits for its access. The network costs every transfer to or from memory through it:
// a channel is a link of the topology at channel_bandwidth(), and access_latency() is added
// once per request (a write lands after it, a read's data leaves after it).
//
// The spec picks the implementation by name (system.cube.hbm.model):
//   simple  every channel serves bandwidth_GBps / channels, after a fixed latency_ns
//   (simple_hbm.hpp)

#include <memory>
#include <string>
#include <vector>

#include "components/system_config.hpp"
#include "emu/name_table.hpp"

namespace cubesim::components {

class HbmModel {
 public:
  virtual ~HbmModel() = default;

  // Contract: every channel of every cube is alike, and neither value changes during a run
  // (the network keeps routes and their latencies).
  virtual Bandwidth channel_bandwidth() const = 0;
  virtual Tick access_latency() const = 0;
};

// The models by name (emu/name_table.hpp); their names are system.cube.hbm.model's allowed
// values, in the order the spec reference lists them.
using MakeHbmModel = std::unique_ptr<HbmModel> (*)(const HbmConfig&);
const emu::NameTable<MakeHbmModel>& hbm_models();

// The model `config.model` names; std::invalid_argument naming the known ones when there is
// none of that name.
std::unique_ptr<HbmModel> make_hbm_model(const HbmConfig& config);

}  // namespace cubesim::components
