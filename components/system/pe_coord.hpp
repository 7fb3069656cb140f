#pragma once
// Where a PE sits in a system (ADR-0022's hardware axes).

#include <cstdint>

namespace cubesim::components {

// SIP, cube within the SIP, PE within the cube (ADR-0022's axes 2, 1, 0).
struct PeCoord {
  std::uint32_t sip = 0;
  std::uint32_t cube = 0;
  std::uint32_t pe = 0;
  friend constexpr bool operator==(PeCoord, PeCoord) = default;
};

}  // namespace cubesim::components
