#pragma once
// The credit loop of a message channel (triton_emu/ops/channels.hpp) on an idle system, per
// class of channel (mesh, UCIe, inter-SIP), and the window that covers it.
//
// A channel sends at its path's rate only while the bytes of its slots cover one round trip of
// a slot: its message crossing the path, the slot's write, the receiver reading it out, and the
// credit crossing back. That is the bandwidth-delay product a collective library sizes its
// buffers by. A class's loop is that of its farthest pair of PEs, bounded from the spec:
//   one way    = D_mesh x hop                                        (mesh)
//              + D_ucie x (ucie latency + D_mesh x hop) + D_mesh x hop    (UCIe)
//   inter-SIP  = 2 x UCIe one way + D_sip x (inter-SIP latency + D_mesh x hop)
// with D the diameters of the cube's mesh, the SIP's UCIe graph and the SIPs' graph (a route
// crosses at most that many links of each kind and at most a mesh's width between two of them),
//   rate       = min(the slowest link of the class, the slots' read rate)
//   round trip = one way + S / path rate + slot write + slot read (+ S / read rate) + one way
//                + credit / path rate
// for slots of S bytes: PE or cube SRAM are written and read at their latency and bandwidth;
// HBM slots are a write into the receiving cube's HBM (its latency) and a read over the cube's
// mesh (a request and the data back across it, the HBM latency, at the channel's rate).
// Slots needed = ceil(round trip x rate / S), at least 2 (one being read, one arriving).

#include <algorithm>
#include <cstdint>

#include "components/system_config.hpp"

namespace cubesim::components {

struct CreditLoop {
  Tick one_way = 0;     // the farthest pair's path, head latency (a bound)
  Tick round_trip = 0;  // from a slot's message leaving to its credit being back
  std::uint64_t path_bytes_per_s = 0;
  std::uint64_t read_bytes_per_s = 0;
  std::uint64_t slot_bytes = 0;

  std::uint64_t rate() const { return std::min(path_bytes_per_s, read_bytes_per_s); }
  // The bytes in flight that keep the channel at its rate.
  std::uint64_t bdp_bytes() const;
  // The slots of slot_bytes that cover them (at least 2).
  std::uint32_t slots_needed() const;
  // The share of the rate a window of `slots` slots sustains: min(1, slots x S / bdp).
  double covered(std::uint32_t slots) const;
};

// Whether the system has channels of class c at all (UCIe: several cubes per SIP; inter-SIP:
// several SIPs).
bool has_channel_class(const SystemConfig& config, ChannelClass c);
// The fewest slots a channel of the system has (over the classes it has; mesh when it has none).
std::uint32_t fewest_slots(const SystemConfig& config);
// The credit loop of class c with slots of `slot_bytes`.
CreditLoop credit_loop(const SystemConfig& config, ChannelClass c, std::uint64_t slot_bytes);
// From a PE's DMA engine issuing an access of `bytes` to an HBM channel of its cube to its
// completion, on an idle cube: across the mesh and back (its diameter each way, a bound), the
// HBM's latency and the bytes at one channel's rate. What loads issued ahead and stores in
// flight must cover to keep up with a channel's messages.
Tick hbm_round_trip(const SystemConfig& config, std::uint64_t bytes);
// The slots a class gets when the spec does not say: those that cover its loop, at most 1024
// (the spec's limit) and no more than a quarter of the memory they take from: a PE's SRAM
// (pe_sram), a PE's share of its cube's shared SRAM (cube_sram); the rest is for tiles and other
// channels; where that holds fewer than the loop's 2, as few as 1. `cubesim info` says where the
// cap leaves a loop uncovered.
std::uint32_t default_slots(const SystemConfig& config, ChannelClass c, std::uint64_t slot_bytes);

}  // namespace cubesim::components
