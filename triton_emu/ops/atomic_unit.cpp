#include "triton_emu/ops/atomic_unit.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "triton_emu/memory/functional_memory.hpp"

namespace cubesim::detail {

const char* atomic_op_name(AtomicOp op) {
  switch (op) {
    case AtomicOp::add:
      return "atomic_add";
    case AtomicOp::max:
      return "atomic_max";
    case AtomicOp::min:
      return "atomic_min";
    case AtomicOp::xchg:
      return "atomic_xchg";
    case AtomicOp::cas:
      return "atomic_cas";
  }
  return "atomic";
}

const char* atomic_type_name(AtomicType t) {
  switch (t) {
    case AtomicType::f32:
      return "f32";
    case AtomicType::i32:
      return "i32";
    case AtomicType::i64:
      return "i64";
  }
  return "?";
}

Atomics::Atomics(components::System& sys)
    : sys_(sys),
      unit_time_(sys.config().cube.hbm.atomic_time),
      unit_free_(std::size_t{sys.address_map().cubes()} * sys.address_map().hbm_channels(), 0) {}

void Atomics::begin_launch() {
  std::fill(unit_free_.begin(), unit_free_.end(), emu::Tick{0});
}

namespace {

// The new value of one word. Integers wrap (two's complement), as hardware adders do; a float
// max/min with a NaN operand keeps the old value, and cas compares bit patterns.
template <class T>
T combine(AtomicOp op, T old, T v, T cmp) {
  switch (op) {
    case AtomicOp::add:
      if constexpr (std::is_integral_v<T>)
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) +
                              static_cast<std::make_unsigned_t<T>>(v));
      else
        return old + v;
    case AtomicOp::max:
      return v > old ? v : old;
    case AtomicOp::min:
      return v < old ? v : old;
    case AtomicOp::xchg:
      return v;
    case AtomicOp::cas:
      return std::memcmp(&old, &cmp, sizeof(T)) == 0 ? v : old;
  }
  return old;
}

template <class T>
void combine_all(AtomicOp op, std::byte* words, const std::byte* operand, const std::byte* compare,
                 std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    T old, v, cmp{};
    std::memcpy(&old, words + i * sizeof(T), sizeof(T));
    std::memcpy(&v, operand + i * sizeof(T), sizeof(T));
    if (compare) std::memcpy(&cmp, compare + i * sizeof(T), sizeof(T));
    const T now = combine(op, old, v, cmp);
    std::memcpy(words + i * sizeof(T), &now, sizeof(T));
  }
}

}  // namespace

void Atomics::apply(AtomicOp op, AtomicType type, std::uint64_t addr, std::uint64_t bytes,
                    const std::byte* operand, const std::byte* compare, std::byte* old,
                    FunctionalMemory* memory) {
  std::vector<std::byte> words(bytes);
  if (memory) {
    memory->read(addr, words.data(), bytes);
  } else {
    for (std::uint64_t i = 0; i < bytes; i += 4) {
      const auto it = shadow_.find(addr + i);
      const std::uint32_t w = it == shadow_.end() ? 0 : it->second;
      std::memcpy(words.data() + i, &w, 4);
    }
  }
  if (old) std::memcpy(old, words.data(), bytes);
  const std::uint64_t n = bytes / atomic_size(type);
  switch (type) {
    case AtomicType::f32:
      combine_all<float>(op, words.data(), operand, compare, n);
      break;
    case AtomicType::i32:
      combine_all<std::int32_t>(op, words.data(), operand, compare, n);
      break;
    case AtomicType::i64:
      combine_all<std::int64_t>(op, words.data(), operand, compare, n);
      break;
  }
  if (memory) {
    memory->write(addr, words.data(), bytes);
  } else {
    for (std::uint64_t i = 0; i < bytes; i += 4) {
      std::uint32_t w;
      std::memcpy(&w, words.data() + i, 4);
      shadow_[addr + i] = w;
    }
  }
}

void Atomics::issue(std::uint32_t pe, AtomicOp op, AtomicType type, std::uint64_t addr,
                    std::uint64_t bytes, const std::byte* operand, const std::byte* compare,
                    std::byte* old, FunctionalMemory* memory, std::function<void()> done) {
  const auto& map = sys_.address_map();
  const components::Location loc = map.decode(addr);
  const std::uint32_t channel = map.channel(loc);
  const std::size_t unit = std::size_t{loc.global_cube} * map.hbm_channels() + channel;
  auto& topo = sys_.network().topology();
  const emu::Tick busy =
      emu::checked_add(unit_time_, topo.hbm().channel_bandwidth().transfer_time(bytes), "atomic");
  // The operands (and cas's compare values: a second write of the same size) cross to the
  // controller as a write's data.
  auto arrived = [=, this, done = std::move(done), writes = compare ? 2 : 1]() mutable {
    if (--writes > 0) return;
    auto& sched = sys_.scheduler();
    const emu::Tick start = std::max(sched.now(), unit_free_[unit]);
    unit_free_[unit] = emu::checked_add(start, busy, "atomic");
    if (operand) apply(op, type, addr, bytes, operand, compare, old, memory);
    sched.schedule_at(
        unit_free_[unit],
        [this, pe, cube = loc.global_cube, channel, bytes, done = std::move(done)]() mutable {
          sys_.network().reply(cube, channel, pe, bytes, std::move(done));
        },
        0, "atomic reply");
  };
  auto shared = std::make_shared<decltype(arrived)>(std::move(arrived));
  sys_.network().write_posted(pe, addr, bytes, [shared] { (*shared)(); });
  if (compare) sys_.network().write_posted(pe, addr, bytes, [shared] { (*shared)(); });
}

}  // namespace cubesim::detail
