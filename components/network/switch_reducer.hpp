#pragma once
// In-network reduction (system.{ucie,inter_sip}.switch_reduction), as NVLink SHARP (NVLS) or
// InfiniBand SHARP do it: the members of a reduction each send their part up to a switch, the
// switch adds the parts and sends the sum down to every member.
//
// Time of one reduction of b bytes by n members:
//   1. each part goes up to the switch (Network::to_switch: the member's way to its port and
//      the link up, over the connection a crossing from the member takes);
//   2. the adder of the link it came up on adds it, one part after another in order of arrival,
//      each for b / switch_reduction.bandwidth_GBps (a link's adder serves every reduction
//      whose parts come up that link);
//   3. once every part has been added, the switch sends the sum down to each member over the
//      connection its part came up on (Network::from_switch), to every member at once.
// So a member's link up carries b and its link down b, where a ring all-reduce moves
// 2 (n - 1) / n x b each way over the same links.
//
// The caller names reductions by a key and says how many members each has; this counts the
// parts and times them, the values are the caller's.

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "components/network/network.hpp"
#include "emu/scheduler.hpp"

namespace cubesim::components {

class SwitchReducer {
 public:
  using Done = std::function<void()>;
  SwitchReducer(emu::Scheduler& scheduler, Network& network);

  // `pe`'s part of reduction `key` (of `members` parts, each `bytes`) through the switch of
  // `level`: `delivered` runs when the sum is back at `pe`. std::logic_error when the level has
  // no reducing switch or the part does not match the reduction's others.
  void contribute(SwitchLevel level, std::uint64_t key, std::uint32_t members, std::uint32_t pe,
                  std::uint64_t bytes, Done delivered);
  // Forgets every reduction whose parts are not all in (a launch that ends or fails).
  void clear();

 private:
  struct Member {
    std::uint32_t pe;
    std::uint32_t connection;
    Done delivered;
  };
  struct Group {
    SwitchLevel level = SwitchLevel::inter_sip;
    std::uint32_t members = 0;
    std::uint32_t arrived = 0;
    std::uint64_t bytes = 0;
    emu::Tick summed = 0;  // when the last part added so far is added
    std::vector<Member> parts;
  };
  void arrived(std::uint64_t key, LinkId up);

  emu::Scheduler& sched_;
  Network& network_;
  std::unordered_map<std::uint64_t, Group> groups_;
  std::vector<emu::Tick> adder_free_;  // per link (only links up to a switch are used)
  // Per (PE, level): its link up to the switch and the connection it takes.
  std::unordered_map<std::uint64_t, std::pair<LinkId, std::uint32_t>> ports_;
};

}  // namespace cubesim::components
