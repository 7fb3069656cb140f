#pragma once
// Usage errors for problem sizes a kernel cannot run, raised by its harness before the launch:
// what is wrong, why, and what would work.

#include <cstdint>
#include <string>

#include "components/system_config.hpp"

namespace cubesim::kernels {

// UsageError unless value % divisor == 0, e.g. "N = 1000 is not divisible by the 64 programs
// (4 cubes x 16 PEs); use a multiple of 64 (such as 960 or 1024)".
void require_divisible(const std::string& name, std::int64_t value, std::int64_t divisor,
                       const std::string& divisor_description);
// UsageError when `bytes` of SRAM per program exceed the PE's SRAM; `fix` says what would fit.
void require_sram(const components::SystemConfig& config, std::uint64_t bytes,
                  const std::string& what, const std::string& fix);
// UsageError when the message slots of `channels` channels into one cube (the most any cube
// receives on) do not fit where system.messages.memory puts them: the cube's shared SRAM, or
// its HBM beside `hbm_bytes` of the kernel's own buffers there. PE SRAM slots are counted by
// require_sram. Refusing up front spares a run that would fault when the channel is first used.
void require_message_slots(const components::SystemConfig& config, std::uint64_t channels,
                           std::uint64_t hbm_bytes, const std::string& what);

}  // namespace cubesim::kernels
