// Energy from activity: each part is its count times the spec's energy per action, static power
// is per PE over the whole run, and runs add.
#include <gtest/gtest.h>

#include "components/energy/energy_model.hpp"

namespace cubesim::components {
namespace {

EnergyConfig figures() {
  EnergyConfig c;
  c.on = true;
  c.noc_pj_per_byte = 1.5;
  c.ucie_pj_per_byte = 4;
  c.inter_sip_pj_per_byte = 40;
  c.hbm_pj_per_byte = 30;
  c.cache_pj_per_byte = 2;
  c.sram_pj_per_byte = 0.5;
  c.vector_pj_per_element = 3;
  c.gemm_pj_per_flop[static_cast<int>(DType::f16)] = 0.25;
  c.gemm_pj_per_flop[static_cast<int>(DType::f32)] = 1.25;
  c.static_w_per_pe = 0.75;
  return c;
}

TEST(EnergyModel, EachPartIsItsCountTimesItsEnergyPerAction) {
  EnergyActivity a;
  const auto at = [&a](LinkKind k) -> std::uint64_t& {
    return a.link_bytes[static_cast<std::size_t>(k)];
  };
  at(LinkKind::noc) = 1000;
  at(LinkKind::inject) = 300;
  at(LinkKind::eject) = 200;
  at(LinkKind::ucie) = 700;
  at(LinkKind::inter_sip) = 50;
  at(LinkKind::hbm_channel) = 4096;
  at(LinkKind::cache) = 512;
  a.cache_fill_bytes = 256;
  a.sram_bytes = 10000;
  a.vector_elements = 777;
  a.gemm_flops[static_cast<int>(DType::f16)] = 1'000'000;
  a.gemm_flops[static_cast<int>(DType::f32)] = 2'000;
  a.gemm_flops[static_cast<int>(DType::bf16)] = 5'000;  // no figure for bf16: costs nothing
  a.pes = 64;
  a.elapsed = emu::us(2);

  const EnergyReport r = energy_of(figures(), a);
  const double pj = 1e-12;
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::noc), 1500 * 1.5 * pj);  // mesh links and both ports
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::ucie), 700 * 4 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::inter_sip), 50 * 40 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::hbm), 4096 * 30 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::cache), (512 + 256) * 2 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::sram), 10000 * 0.5 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::vector), 777 * 3 * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::gemm), (1e6 * 0.25 + 2000 * 1.25) * pj);
  EXPECT_DOUBLE_EQ(r.of(EnergyPart::static_power), 0.75 * 64 * 2e-6);
  double sum = 0;
  for (double j : r.joules) sum += j;
  EXPECT_DOUBLE_EQ(r.total(), sum);
  EXPECT_DOUBLE_EQ(r.average_watts(), sum / 2e-6);
  EXPECT_DOUBLE_EQ(r.watts(EnergyPart::static_power), 0.75 * 64);

  // Another run after it: energies and times add, the average follows.
  EnergyReport twice = r;
  twice += r;
  EXPECT_DOUBLE_EQ(twice.total(), 2 * sum);
  EXPECT_EQ(twice.elapsed, emu::us(4));
  EXPECT_DOUBLE_EQ(twice.average_watts(), r.average_watts());
}

TEST(EnergyModel, NoTimeGivesNoPowerAndEveryPartHasAName) {
  const EnergyReport r = energy_of(figures(), EnergyActivity{});
  EXPECT_EQ(r.total(), 0.0);
  EXPECT_EQ(r.average_watts(), 0.0);
  EXPECT_EQ(energy_part_name(EnergyPart::static_power), "static");
  EXPECT_EQ(energy_part_name(EnergyPart::hbm), "hbm");
  for (std::size_t i = 0; i < kEnergyParts; ++i)
    EXPECT_NE(energy_part_name(static_cast<EnergyPart>(i)), "?");
}

}  // namespace
}  // namespace cubesim::components
