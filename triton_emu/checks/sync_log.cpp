#include "triton_emu/checks/sync_log.hpp"

namespace cubesim {

void SyncLog::begin(std::size_t programs, std::uint32_t slots) {
  ops_.assign(programs, {});
  segment_.assign(programs, 0);
  barriers_.clear();
  barrier_index_.clear();
  slots_ = slots;
  clock_ = 0;
  finished_ = messages_ = false;
}

void SyncLog::barrier(std::uint32_t program, int scope, std::int64_t group,
                      std::uint32_t generation, std::uint32_t members) {
  const auto [it, added] = barrier_index_.try_emplace({scope, group, generation},
                                                      static_cast<std::uint32_t>(barriers_.size()));
  if (added) barriers_.push_back({scope, group, generation, members});
  add(program, {SyncOp::Kind::barrier, it->second, 0});
}

}  // namespace cubesim
