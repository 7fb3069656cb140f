#pragma once
// A system on a scheduler, for fabric tests: issue transfers, run, read the time.

#include <functional>

#include "components/network/fabric.hpp"
#include "components/system/system.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components::testing {

struct Bench {
  explicit Bench(const SystemConfig& c, SystemOptions options = {}) : sys(c, sched, options) {}
  emu::Scheduler sched;
  System sys;
  Fabric& fabric() { return sys.fabric(); }
  const SystemConfig& cfg() const { return sys.config(); }
  std::uint64_t addr(std::uint32_t cube, std::uint64_t off) const {
    return sys.address_map().direct_address({cube, off});
  }
  emu::Tick ser(Bandwidth b, std::uint64_t bytes) const { return b.transfer_time(bytes); }
};

// Issues one transfer through `issue` (given its completion callback), runs to the end and
// returns when it completed.
inline emu::Tick run_one(Bench& b, const std::function<void(Fabric::Done)>& issue) {
  emu::Tick done_at = 0;
  issue([&] { done_at = b.sched.now(); });
  b.sched.run();
  return done_at;
}

}  // namespace cubesim::components::testing
