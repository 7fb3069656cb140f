#include "components/network/message_window.hpp"

#include <algorithm>

#include "components/topology/graph.hpp"

namespace cubesim::components {

namespace {

__extension__ using u128 = unsigned __int128;

// Saturates: a loop past 2^64 ps (a spec of absurd sizes and rates) reads as endless.
std::uint64_t ceil_div(u128 a, u128 b) {
  const u128 q = (a + b - 1) / b;
  return q > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(q);
}

// Time to move `bytes` at `bytes_per_s`, in ps.
Tick serialise(std::uint64_t bytes, std::uint64_t bytes_per_s) {
  return ceil_div(u128{bytes} * 1'000'000'000'000ULL, bytes_per_s);
}

// Across a cube's mesh, corner to corner: its diameter in hops (a bound for any pair).
Tick across_cube_mesh(const NocConfig& noc) {
  return Tick{noc.mesh_x - 1 + noc.mesh_y - 1} * (noc.hop_latency + noc.router_timing.pipeline);
}

// One HBM channel's share of the cube's bandwidth.
std::uint64_t hbm_channel_rate(const HbmConfig& hbm) {
  return std::max<std::uint64_t>(1, hbm.bandwidth.bytes_per_s() / hbm.channels);
}

}  // namespace

std::uint64_t CreditLoop::bdp_bytes() const {
  return ceil_div(u128{round_trip} * rate(), 1'000'000'000'000ULL);
}

std::uint32_t CreditLoop::slots_needed() const {
  const std::uint64_t n = std::max<std::uint64_t>(2, ceil_div(bdp_bytes(), slot_bytes));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, UINT32_MAX));
}

double CreditLoop::covered(std::uint32_t slots) const {
  if (round_trip == emu::kTickMax) return 0.0;  // past what a Tick holds: nothing covers it
  const std::uint64_t bdp = bdp_bytes();
  if (bdp == 0) return 1.0;
  return std::min(
      1.0, static_cast<double>(slots) * static_cast<double>(slot_bytes) / static_cast<double>(bdp));
}

bool has_channel_class(const SystemConfig& config, ChannelClass c) {
  switch (c) {
    case ChannelClass::mesh:
      return config.cube.pes > 1;
    case ChannelClass::ucie:
      return config.cubes_per_sip > 1;
    case ChannelClass::inter_sip:
      return config.sips > 1;
  }
  return false;
}

std::uint32_t fewest_slots(const SystemConfig& config) {
  std::uint32_t n = config.messages.window(ChannelClass::mesh).slots;
  for (ChannelClass c : kAllChannelClasses)
    if (has_channel_class(config, c)) n = std::min(n, config.messages.window(c).slots);
  return n;
}

Tick hbm_round_trip(const SystemConfig& config, std::uint64_t bytes) {
  const u128 t = u128{2} * across_cube_mesh(config.cube.noc) + config.cube.hbm.latency +
                 serialise(bytes, hbm_channel_rate(config.cube.hbm));
  return t > emu::kTickMax ? emu::kTickMax : static_cast<Tick>(t);
}

CreditLoop credit_loop(const SystemConfig& config, ChannelClass c, std::uint64_t slot_bytes) {
  const NocConfig& noc = config.cube.noc;
  const MessagesConfig& m = config.messages;
  const Tick across_mesh = across_cube_mesh(noc);
  std::uint64_t path = noc.link_bandwidth.bytes_per_s();
  Tick one_way = across_mesh;
  const auto ucie_diameter = [&] {
    return Graph(config.ucie.topology, config.cubes_per_sip, config.ucie.mesh_x, config.ucie.mesh_y)
        .diameter();
  };
  // From any node of a SIP to any other: the UCIe crossings, each after a mesh's width.
  const auto across_sip = [&] {
    return Tick{ucie_diameter()} * (config.ucie.crossing() + across_mesh) + across_mesh;
  };
  if (c != ChannelClass::mesh && config.cubes_per_sip > 1)
    path = std::min(path, config.ucie.bandwidth.bytes_per_s());
  if (c == ChannelClass::ucie) one_way = across_sip();
  if (c == ChannelClass::inter_sip) {
    const Graph sips(config.inter_sip.topology, config.sips, config.inter_sip.grid_x,
                     config.inter_sip.grid_y);
    path = std::min(path, config.inter_sip.bandwidth.bytes_per_s());
    one_way =
        2 * across_sip() + Tick{sips.diameter()} * (config.inter_sip.crossing() + across_mesh);
  }

  CreditLoop loop;
  loop.one_way = one_way;
  loop.slot_bytes = slot_bytes;
  loop.path_bytes_per_s = path;
  const std::uint64_t hbm_channel = hbm_channel_rate(config.cube.hbm);
  Tick write = 0, read = 0;
  switch (m.memory) {
    case SlotMemory::pe_sram:
      loop.read_bytes_per_s = m.pe_sram_bandwidth.bytes_per_s();
      write = m.pe_sram_latency;
      read = m.pe_sram_latency;
      break;
    case SlotMemory::cube_sram:
      loop.read_bytes_per_s = m.cube_sram_bandwidth.bytes_per_s();
      write = m.cube_sram_latency;
      read = m.cube_sram_latency;
      break;
    case SlotMemory::hbm:
      // The payload goes into HBM at no more than a channel's rate; reading it back is a
      // request across the receiving cube's mesh, the access, and the data back.
      loop.path_bytes_per_s = std::min(path, hbm_channel);
      loop.read_bytes_per_s = std::min(noc.link_bandwidth.bytes_per_s(), hbm_channel);
      write = config.cube.hbm.latency;
      read = 2 * across_mesh + config.cube.hbm.latency;
      break;
  }
  const u128 round_trip = u128{one_way} + serialise(slot_bytes, loop.path_bytes_per_s) + write +
                          read + serialise(slot_bytes, loop.read_bytes_per_s) + one_way +
                          serialise(m.credit_bytes, path);
  loop.round_trip = round_trip > emu::kTickMax ? emu::kTickMax : static_cast<Tick>(round_trip);
  return loop;
}

std::uint32_t default_slots(const SystemConfig& config, ChannelClass c, std::uint64_t slot_bytes) {
  std::uint64_t slots =
      std::min<std::uint32_t>(credit_loop(config, c, slot_bytes).slots_needed(), kMaxMessageSlots);
  const MessagesConfig& m = config.messages;
  std::uint64_t memory = 0;
  if (m.memory == SlotMemory::pe_sram) memory = config.pe.sram_bytes;
  if (m.memory == SlotMemory::cube_sram) memory = m.cube_sram_bytes / config.cube.pes;
  if (memory != 0) slots = std::min(slots, std::max<std::uint64_t>(1, memory / 4 / slot_bytes));
  return static_cast<std::uint32_t>(slots);
}

}  // namespace cubesim::components
