#pragma once
// A system on a scheduler, for network tests: issue transfers, run, read the time.

#include <functional>
#include <vector>

#include "components/network/network.hpp"
#include "components/system/system.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components::testing {

struct Bench {
  explicit Bench(const SystemConfig& c, SystemOptions options = {}) : sys(c, sched, options) {}
  emu::Scheduler sched;
  System sys;
  Network& network() { return sys.network(); }
  const SystemConfig& cfg() const { return sys.config(); }
  std::uint64_t addr(std::uint32_t cube, std::uint64_t off) const {
    return sys.address_map().direct_address({cube, off});
  }
  emu::Tick ser(Bandwidth b, std::uint64_t bytes) const { return b.transfer_time(bytes); }
};

// Issues one transfer through `issue` (given its completion callback), runs to the end and
// returns when it completed.
inline emu::Tick run_one(Bench& b, const std::function<void(Network::Done)>& issue) {
  emu::Tick done_at = 0;
  issue([&] { done_at = b.sched.now(); });
  b.sched.run();
  return done_at;
}

// 32 PEs each read 300000 bytes from the other cube of a two-cube config: when each read
// completed, in order of completion (for determinism checks).
inline std::vector<emu::Tick> reads_across_cubes(const SystemConfig& c) {
  Bench b(c);
  std::vector<emu::Tick> done;
  for (std::uint32_t pe = 0; pe < 32; ++pe)
    b.network().read(pe, b.addr((pe + 1) % 2, pe * 8192), 300000,
                     [&] { done.push_back(b.sched.now()); });
  b.sched.run();
  return done;
}

}  // namespace cubesim::components::testing
