#pragma once
// A cube's HBM as the network sees it: how fast each channel serves bytes, and how long a
// request waits for its access. The network costs every transfer to or from memory through it:
// a channel is a link of the topology at channel_bandwidth(), and access_latency() is added
// once per request (a write lands after it, a read's data leaves after it).
//
// The spec picks the implementation by name (system.cube.hbm.model):
//   simple  every channel serves bandwidth_GBps / channels, after a fixed latency_ns
//           (simple_hbm.hpp)
//   banked  latency_ns is the controller's and PHY's share; each channel's banks, rows,
//           refresh and bus turnaround are scheduled FR-FCFS by a DramChannel per channel
//           (banked_hbm.hpp) in the packet model; the flow model streams at the rate and
//           first-access latency those timings allow a long sequential access

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

  // Whether a packet network schedules each channel's requests itself (DramChannel); false:
  // a channel is a link at channel_bandwidth() and nothing more.
  virtual bool scheduled() const { return false; }
  // What the flow model, which moves whole flows, charges a channel instead: the rate a long
  // sequential stream sustains (refresh, bank-group spacing) and the latency its first
  // access adds to access_latency() (opening a row, the read latency).
  virtual Bandwidth stream_bandwidth() const { return channel_bandwidth(); }
  virtual Tick stream_latency() const { return 0; }
};

// bandwidth / channels, rounded down to whole bytes per second: what every model's channel
// carries at most. std::invalid_argument when there are no channels or a channel would get less
// than 1 B/s.
Bandwidth channel_share(const HbmConfig& config);

// The models by name (emu/name_table.hpp); their names are system.cube.hbm.model's allowed
// values, in the order the spec reference lists them.
using MakeHbmModel = std::unique_ptr<HbmModel> (*)(const HbmConfig&);
const emu::NameTable<MakeHbmModel>& hbm_models();

// The model `config.model` names; std::invalid_argument naming the known ones when there is
// none of that name.
std::unique_ptr<HbmModel> make_hbm_model(const HbmConfig& config);

}  // namespace cubesim::components
