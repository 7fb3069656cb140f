#include "kernels/harness/requirements.hpp"

#include <fmt/format.h>

#include "components/network/message_window.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels {

// ---- Usage errors ------------------------------------------------------------------------------

void require_divisible(const std::string& name, std::int64_t value, std::int64_t divisor,
                       const std::string& divisor_description) {
  if (divisor <= 0 || value % divisor == 0) return;
  const std::int64_t below = value / divisor * divisor, above = below + divisor;
  std::string examples =
      below > 0 ? std::to_string(below) + " or " + std::to_string(above) : std::to_string(above);
  throw UsageError(name + " = " + std::to_string(value) + " is not divisible by the " +
                   divisor_description + "; use a multiple of " + std::to_string(divisor) +
                   " (such as " + examples + ")");
}

void require_sram(const components::SystemConfig& config, std::uint64_t bytes,
                  const std::string& what, const std::string& fix) {
  if (bytes <= config.pe.sram_bytes) return;
  throw UsageError(what + " needs " + std::to_string(bytes) +
                   " bytes of SRAM per program but a PE has " +
                   std::to_string(config.pe.sram_bytes) + " (system.pe.sram_KiB); " + fix);
}

void require_message_slots(const components::SystemConfig& config, std::uint64_t channels,
                           std::uint64_t hbm_bytes, const std::string& what) {
  const auto& m = config.messages;
  // Every channel as large as the largest window of the system's classes (a bound).
  components::ChannelClass largest = components::ChannelClass::mesh;
  for (components::ChannelClass k : components::kAllChannelClasses)
    if (components::has_channel_class(config, k) && m.window(k).bytes() > m.window(largest).bytes())
      largest = k;
  const components::MessageWindow& w = m.window(largest);
  const std::uint64_t per_channel = w.bytes();
  const std::uint64_t need = channels * per_channel;
  const std::string slots = fmt::format(
      "{} channels into one cube of {} slots of {} bytes (system.messages.{}.slots, slot_KiB) "
      "need {} bytes",
      channels, w.slots, w.slot_bytes, components::channel_class_name(largest), need);
  if (m.memory == components::SlotMemory::cube_sram && need > m.cube_sram_bytes)
    throw UsageError(
        fmt::format("{}: {} of the cube's shared SRAM, which holds {} "
                    "(system.messages.cube_sram.capacity_KiB); "
                    "use fewer or smaller slots, raise the capacity, or put the slots in HBM "
                    "(--set system.messages.memory=hbm)",
                    what, slots, m.cube_sram_bytes));
  // Each channel's slots are a buffer of their own, page-aligned.
  const std::uint64_t hbm_need = channels * ((per_channel + 4095) / 4096 * 4096);
  if (m.memory == components::SlotMemory::hbm &&
      hbm_need + hbm_bytes > config.cube.hbm.capacity_bytes)
    throw UsageError(fmt::format(
        "{}: {} of the cube's HBM beside the kernel's {} bytes there, more than its {} "
        "(system.cube.hbm.capacity_GiB); use fewer or smaller slots or less data per PE",
        what, slots, hbm_bytes, config.cube.hbm.capacity_bytes));
}

}  // namespace cubesim::kernels
