#pragma once
// tl.switch_reduce_async / tl.switch_reduce (launch/context.hpp): in-network reduction, timed by
// components::SwitchReducer (the parts up, the switch's adders, the sum down to each member).
//
// A reduction's members are the programs on the PEs at one place: the same cube and PE of
// every SIP (Scope::all, the inter-SIP switch) or the same PE of every cube of a SIP
// (Scope::sip, its UCIe switch). The n-th call at each PE of a place is that place's n-th
// reduction. Each member's values are copied when it calls (its tile stays its own); the sum
// is added in member order (SIP or cube order), in f32 for floats and i64 for integers, then
// rounded to the dtype once, so every member gets the same bits whatever the order of arrival.
// A launch that ends with a reduction some member never joined fails, naming it.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "components/network/switch_reducer.hpp"
#include "components/system/system.hpp"
#include "emu/waitable.hpp"
#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::detail {

struct SwitchSum;

// What a member's wait blocks on until the sum is back at its PE.
class SwitchDone final : public emu::Waitable {
 public:
  SwitchDone(emu::Scheduler& s, const SwitchSum& sum) : emu::Waitable(s, {}), sum_(sum) {}
  bool done() const { return done_; }
  void fire() {
    done_ = true;
    wake_all();
  }
  void wait() {
    if (!done_) block();
  }
  std::string describe() const override;

 private:
  const SwitchSum& sum_;
  bool done_ = false;
};

// One reduction: its members' values, and the sum once every member has given its part.
struct SwitchSum {
  std::string name;  // "inter-SIP switch reduction 3 of sip*.cube0.pe5"
  std::uint32_t members = 0;
  std::vector<std::string> member_names;
  std::vector<std::vector<std::byte>> parts;  // by member index (empty: not given, or no values)
  std::vector<char> given;
  std::uint32_t count = 0;
  tl::Shape shape;
  DType dtype = DType::f32;
  std::vector<std::byte> sum;  // made by the first member to take it
  bool summed = false;
};

// A member's part in flight.
struct SwitchReceipt {
  SwitchReceipt(emu::Scheduler& s, std::shared_ptr<SwitchSum> of)
      : sum(std::move(of)), done(s, *sum) {}
  std::shared_ptr<SwitchSum> sum;
  SwitchDone done;
  tl::Tile tile;  // the sum's tile, made (and its SRAM taken) at the call
  std::uint32_t owner = 0;
  bool taken = false;
};

class SwitchReductions {
 public:
  explicit SwitchReductions(components::System& sys);

  void begin();  // a launch starts: no reduction, every place's count at 0
  // The launch's programs all finished: "" or the reductions some member never joined.
  std::string leftovers() const;
  void end();  // forgets every reduction (also those in flight after a failed launch)

  std::shared_ptr<SwitchReceipt> contribute(Program& program, const tl::Tile& tile,
                                            tl::Scope scope);
  tl::Tile wait(Program& program, SwitchReceipt* receipt);

 private:
  // A reduction's record, made by its first member's call (the n-th at its place).
  std::shared_ptr<SwitchSum> new_sum(bool sips, const components::PeCoord& at, std::uint64_t n,
                                     const tl::Tile& tile) const;

  components::System& sys_;
  components::SwitchReducer reducer_;
  // By (level, place, count at the place): the reductions not yet summed everywhere.
  std::map<std::tuple<int, std::uint32_t, std::uint64_t>, std::shared_ptr<SwitchSum>> open_;
  std::map<std::pair<int, std::uint32_t>, std::uint64_t> calls_;  // per (level, PE)
};

}  // namespace cubesim::detail
