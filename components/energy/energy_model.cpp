#include "components/energy/energy_model.hpp"

namespace cubesim::components {

namespace {

constexpr double kPico = 1e-12;

double seconds(emu::Tick t) {
  return static_cast<double>(t) * 1e-12;
}

}  // namespace

std::string_view energy_part_name(EnergyPart part) {
  switch (part) {
    case EnergyPart::static_power:
      return "static";
    case EnergyPart::gemm:
      return "gemm";
    case EnergyPart::vector:
      return "vector";
    case EnergyPart::sram:
      return "sram";
    case EnergyPart::noc:
      return "noc";
    case EnergyPart::ucie:
      return "ucie";
    case EnergyPart::inter_sip:
      return "inter_sip";
    case EnergyPart::hbm:
      return "hbm";
    case EnergyPart::cache:
      return "cache";
  }
  return "?";
}

double EnergyReport::total() const {
  double sum = 0;
  for (double j : joules) sum += j;
  return sum;
}

double EnergyReport::watts(EnergyPart p) const {
  return elapsed == 0 ? 0.0 : of(p) / seconds(elapsed);
}

double EnergyReport::average_watts() const {
  return elapsed == 0 ? 0.0 : total() / seconds(elapsed);
}

EnergyReport& EnergyReport::operator+=(const EnergyReport& o) {
  for (std::size_t i = 0; i < kEnergyParts; ++i) joules[i] += o.joules[i];
  elapsed += o.elapsed;
  return *this;
}

EnergyReport energy_of(const EnergyConfig& c, const EnergyActivity& a) {
  EnergyReport r;
  r.elapsed = a.elapsed;
  const auto set = [&r](EnergyPart p, double joules) {
    r.joules[static_cast<std::size_t>(p)] = joules;
  };
  const auto bytes = [&a](LinkKind k) {
    return static_cast<double>(a.link_bytes[static_cast<std::size_t>(k)]);
  };
  set(EnergyPart::static_power,
      c.static_w_per_pe * static_cast<double>(a.pes) * seconds(a.elapsed));
  double gemm = 0;
  for (std::size_t t = 0; t < kDTypeCount; ++t)
    gemm += static_cast<double>(a.gemm_flops[t]) * c.gemm_pj_per_flop[t];
  set(EnergyPart::gemm, gemm * kPico);
  set(EnergyPart::vector, static_cast<double>(a.vector_elements) * c.vector_pj_per_element * kPico);
  set(EnergyPart::sram, static_cast<double>(a.sram_bytes) * c.sram_pj_per_byte * kPico);
  // A PE's ports are router traversals like a mesh link's.
  set(EnergyPart::noc, (bytes(LinkKind::noc) + bytes(LinkKind::inject) + bytes(LinkKind::eject)) *
                           c.noc_pj_per_byte * kPico);
  set(EnergyPart::ucie, bytes(LinkKind::ucie) * c.ucie_pj_per_byte * kPico);
  set(EnergyPart::inter_sip, bytes(LinkKind::inter_sip) * c.inter_sip_pj_per_byte * kPico);
  set(EnergyPart::hbm, bytes(LinkKind::hbm_channel) * c.hbm_pj_per_byte * kPico);
  set(EnergyPart::cache, (bytes(LinkKind::cache) + static_cast<double>(a.cache_fill_bytes)) *
                             c.cache_pj_per_byte * kPico);
  return r;
}

}  // namespace cubesim::components
