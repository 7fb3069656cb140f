// A run's energy (system.energy) from what it did: each part is the run's own count of that
// action times the spec's figure, static power is every PE's over the run, a spec without
// figures reports none, and runs summed by a harness add their energy.
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>

#include "kernel_test_support.hpp"

namespace cubesim::kernels {
namespace {

using components::EnergyPart;
using components::LinkKind;

Spec with_energy(const Spec& base) {
  return base.with({{"system.energy.noc_pJ_per_byte", 1.5},
                    {"system.energy.ucie_pJ_per_byte", 4},
                    {"system.energy.hbm_pJ_per_byte", 30},
                    {"system.energy.sram_pJ_per_byte", 0.5},
                    {"system.energy.vector_pJ_per_element", 3},
                    {"system.energy.gemm_pJ_per_flop.f16", 0.25},
                    {"system.energy.static_W_per_pe", 0.75}});
}

TEST(Energy, EachPartIsTheRunsCountTimesTheSpecsFigure) {
  const Spec spec = with_energy(testing::tiny());
  const Outcome o = testing::run_kernel("gemm_2d", spec, {"M=64", "K=48", "N=64"}, true, 3);
  const RunStats& s = o.run.stats;
  ASSERT_TRUE(s.energy.has_value());
  const components::EnergyReport& e = *s.energy;
  const double pj = 1e-12;
  const auto bytes = [&s](LinkKind k) { return static_cast<double>(s.network.bytes(k)); };
  std::uint64_t sram = 0, elements = 0;
  for (const PeStats& pe : s.pes) {
    sram += pe.bytes_loaded + pe.bytes_stored + pe.bytes_sent + pe.bytes_received;
    elements += pe.vector_elements;
  }
  EXPECT_GT(bytes(LinkKind::hbm_channel), 0);
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::hbm), bytes(LinkKind::hbm_channel) * 30 * pj);
  EXPECT_DOUBLE_EQ(
      e.of(EnergyPart::noc),
      (bytes(LinkKind::noc) + bytes(LinkKind::inject) + bytes(LinkKind::eject)) * 1.5 * pj);
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::ucie), bytes(LinkKind::ucie) * 4 * pj);
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::sram), static_cast<double>(sram) * 0.5 * pj);
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::vector), static_cast<double>(elements) * 3 * pj);
  // Every FLOP is an f16 GEMM's: 2 M N K.
  EXPECT_EQ(s.flops, 2u * 64 * 48 * 64);
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::gemm), 2.0 * 64 * 48 * 64 * 0.25 * pj);
  // Static power: every PE of the system (8 on tiny), over the whole run.
  EXPECT_DOUBLE_EQ(e.of(EnergyPart::static_power),
                   0.75 * 8 * static_cast<double>(o.run.sim_time_ps) * 1e-12);
  EXPECT_EQ(e.elapsed, o.run.sim_time_ps);
  // The report carries it.
  const auto& j = o.run.report["stats"]["energy"];
  EXPECT_DOUBLE_EQ(j["total_J"].get<double>(), e.total());
  EXPECT_DOUBLE_EQ(j["parts"]["hbm"]["J"].get<double>(), e.of(EnergyPart::hbm));
  EXPECT_DOUBLE_EQ(j["average_W"].get<double>(), e.average_watts());
}

TEST(Energy, AVectorKernelPaysPerElementOfTileMath) {
  const Outcome o =
      testing::run_kernel("vector_add", with_energy(testing::tiny()), {"n=4096"}, true, 3);
  std::uint64_t elements = 0;
  for (const PeStats& pe : o.run.stats.pes) elements += pe.vector_elements;
  EXPECT_GE(elements, 4096u);  // x + y: one element-op per element at least
  EXPECT_DOUBLE_EQ(o.run.stats.energy->of(EnergyPart::vector),
                   static_cast<double>(elements) * 3e-12);
}

TEST(Energy, ASpecWithoutFiguresReportsNone) {
  const Outcome o = testing::run_kernel("vector_add", testing::tiny(), {"n=1024"}, true, 3);
  EXPECT_FALSE(o.run.stats.energy.has_value());
  EXPECT_FALSE(o.run.report["stats"].contains("energy"));
}

}  // namespace
}  // namespace cubesim::kernels
