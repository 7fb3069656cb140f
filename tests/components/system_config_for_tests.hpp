#pragma once
// Hand-built SystemConfigs for component tests, so they do not depend on the spec loader. Round
// figures make the expected times easy to compute by hand in each test.

#include "components/system_config.hpp"

namespace cubesim::components::testing {

inline SystemConfig small_config(std::uint32_t sips = 1, std::uint32_t cubes_per_sip = 2,
                                 std::uint32_t mesh = 4) {
  SystemConfig c;
  c.name = "test";
  c.description = "component tests";
  c.sips = sips;
  c.cubes_per_sip = cubes_per_sip;
  c.cube.pes = mesh * mesh;
  c.cube.noc.mesh_x = mesh;
  c.cube.noc.mesh_y = mesh;
  c.cube.noc.link_bandwidth = Bandwidth::from_GBps(64);  // 4096 B in 64 ns
  c.cube.noc.hop_latency = emu::ns(2);
  c.cube.noc.packet_bytes = 4096;
  c.cube.noc.hbm_nodes = {{0, 0}};
  c.cube.noc.ucie_nodes = {{mesh - 1, 0}, {0, mesh - 1}};
  c.cube.noc.inter_sip_nodes = {{0, 0}};
  c.cube.hbm.capacity_bytes = std::uint64_t{1} << 30;
  c.cube.hbm.bandwidth = Bandwidth::from_GBps(512);  // 8 channels of 64 GB/s
  c.cube.hbm.channels = 8;
  c.cube.hbm.latency = emu::ns(100);
  c.cube.hbm.channel_interleave_bytes = 4096;
  c.pe.clock = Frequency::from_GHz(1.0);
  c.pe.sram_bytes = 1 << 20;
  c.pe.gemm.startup = emu::ns(50);
  c.pe.gemm.peak_flops = {32e12, 32e12, 8e12, 16e12};
  c.pe.dma.max_outstanding_packets = 32;
  c.ucie.topology = GraphKind::ring;
  c.ucie.latency = emu::ns(10);
  c.ucie.bandwidth = Bandwidth::from_GBps(32);  // 4096 B in 128 ns
  c.inter_sip.topology = GraphKind::ring;
  c.inter_sip.port_cube = 0;
  c.inter_sip.latency = emu::ns(500);
  c.inter_sip.bandwidth = Bandwidth::from_GBps(16);  // 4096 B in 256 ns
  c.memory.interleave_bytes = 4096;
  c.memory.page_bytes = 65536;
  return c;
}

}  // namespace cubesim::components::testing
