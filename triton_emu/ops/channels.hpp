#pragma once
// Messages between the programs of a launch (tl.send / tl.recv; DESIGN.md "Communication").
//
// Each (sender, receiver) pair of programs has one channel: an in-order queue of slots in the
// receiver's memory (its PE's SRAM, its cube's shared SRAM, or its cube's HBM), as many and as
// large as the window of the channel's class (system.messages.mesh, .ucie, .inter_sip). A send
// takes a credit (a free slot as the sender knows it), waiting while there is none, and moves the
// payload over the network: PE to PE for the SRAM kinds, a write into the slot's HBM address for
// hbm. The message is visible to the receiver when its payload is in the slot (the network's
// delivery plus the slot's write latency): payload and arrival notice together. A recv claims the
// next message in order, reads it out of its slot once it is visible (SRAM: latency + bytes /
// bandwidth on the PE; HBM: a read over the network) and frees the slot, which sends a credit of
// credit_bytes back to the sender over the network; the sender may use the slot again when the
// credit arrives.
//
// Channels are per ordered pair, so a channel never has two senders. A launch that ends with
// messages nobody received fails (every send needs its recv); a deadlock report names every
// program blocked on a channel and a cycle of them when there is one.

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "components/system/system.hpp"
#include "emu/waitable.hpp"
#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::detail {

struct PeState;
struct LaunchState;

// What a recv's program waits on until its message has been read out of its slot. Named only
// when a deadlock report asks (a recv is a hot path: no name is built per message).
class ReceiptDone final : public emu::Waitable {
 public:
  ReceiptDone(emu::Scheduler& s, const std::string& channel, std::uint64_t seq)
      : emu::Waitable(s, {}), channel_(channel), seq_(seq) {}
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
  const std::string& channel_;  // the channel's name, which outlives its recvs
  std::uint64_t seq_;
  bool done_ = false;
};

// A recv in flight: done once its message has been read out of its slot.
struct Receipt {
  Receipt(emu::Scheduler& s, const std::string& channel_name, std::uint64_t message)
      : done(s, channel_name, message) {}
  ReceiptDone done;
  tl::Tile tile;                  // made (and its SRAM taken) when the recv was posted
  std::vector<std::byte> values;  // the payload, copied into `tile` by wait()
  std::string error;              // the message did not match the recv (wait() faults)
  bool taken = false;             // a wait() has returned its tile
  std::uint32_t channel = 0;
  std::uint32_t owner = 0;  // the program that posted it
  std::uint32_t from = 0;   // the program that sends its message
  std::uint64_t seq = 0;    // its message's place on the channel, 0 first
};

class Messages {
 public:
  // `alloc_hbm(cube, bytes)`: an HBM buffer on a global cube for a channel's slots (hbm slots).
  Messages(components::System& sys,
           std::function<std::uint64_t(std::uint32_t cube, std::uint64_t bytes)> alloc_hbm);
  Messages(const Messages&) = delete;
  Messages& operator=(const Messages&) = delete;

  // A launch starts: `programs[i]` is the PE of program i, `coords[i]` its grid coordinates.
  void begin(const std::int64_t grid[3], const std::vector<PeState*>& programs);
  // The launch's programs all finished: "" or what was sent and never received.
  std::string leftovers() const;
  // The launch is over (either way): slot memory given back, channels forgotten.
  void end();
  // For a deadlock report: what the program on each PE blocked on a channel waits for (by PE
  // name), and every cycle of programs each waiting on the next (they are disjoint: a blocked
  // program waits on one other).
  std::map<std::string, std::string> blocked_by_pe() const;
  std::vector<std::string> blocked_cycles() const;

  // The program that `peer` names as seen from program `self` (a fault of `caller` if none).
  std::uint32_t resolve(Program& caller, std::uint32_t self, const tl::Peer& peer,
                        const char* call) const;
  // `trace`: the launch when the sender's PE is traced (the transfer gets a slice on a DMA lane
  // and flow arrows), else null.
  void send(Program& caller, std::uint32_t from, std::uint32_t to, const tl::Tile& tile,
            LaunchState* trace);
  // For traces and messages: the PE that runs a program, and a channel's name.
  const std::string& pe_name(std::uint32_t program) const;
  const std::string& channel_name(std::uint32_t channel) const { return channels_[channel].name; }
  // Posts a recv of the next message of channel from -> to into `tile` (made by the caller).
  std::shared_ptr<Receipt> recv(Program& caller, std::uint32_t to, std::uint32_t from,
                                tl::Tile tile);
  // The HBM slot buffer of the channel between two global PEs, if one was made.
  std::optional<std::uint64_t> hbm_slots(std::uint32_t from_pe, std::uint32_t to_pe) const {
    const auto it = hbm_slots_.find({from_pe, to_pe});
    if (it == hbm_slots_.end()) return std::nullopt;
    return it->second.address;
  }
  // Channels made from now on take at most `most` slots (0: their class's window).
  void limit_slots(std::uint32_t most) { slot_limit_ = most; }
  // Blocks program `self` until `r` is done.
  void wait(std::uint32_t self, Receipt& r);

 private:
  struct Entry {  // one message of a channel, from the first of send and recv that names it
    bool sent = false, arrived = false, read = false;
    std::uint32_t channel = 0;
    std::uint64_t seq = 0;
    emu::Tick visible_at = 0;  // once arrived: when its payload is in the slot
    std::uint64_t bytes = 0;
    tl::Shape shape;
    DType dtype = DType::f32;
    std::vector<std::byte> payload;
    std::shared_ptr<Receipt> receipt;
  };
  // A sender waits here for a credit.
  class CreditGate final : public emu::Waitable {
   public:
    CreditGate(emu::Scheduler& s, std::string name, const std::uint32_t& credits,
               std::uint32_t slots)
        : emu::Waitable(s, std::move(name)), credits_(credits), slots_(slots) {}
    void wait() { block(); }
    void open() { wake_all(); }
    std::string describe() const override;

   private:
    const std::uint32_t& credits_;
    std::uint32_t slots_;
  };
  struct Channel {
    std::uint32_t from = 0, to = 0;  // programs
    components::ChannelClass kind = components::ChannelClass::mesh;
    std::uint32_t slots = 0;  // its class's window
    std::uint64_t slot_bytes = 0;
    std::uint32_t credits = 0;
    std::uint64_t first = 0;             // sequence number of entries.front()
    std::uint64_t sent = 0, posted = 0;  // messages sent, recvs posted
    std::deque<Entry> entries;
    std::uint64_t slot_base = 0;    // hbm slots: the buffer's address
    std::uint64_t slot_stride = 0;  // hbm slots: from one slot to the next
    std::unique_ptr<CreditGate> gate;
    std::string name;  // "sip0.cube0.pe0 -> sip0.cube0.pe1"
    // Entries stay where they are until read (a deque: callbacks in flight hold them).
    Entry& entry(std::uint32_t id, std::uint64_t seq) {
      while (first + entries.size() <= seq) {
        Entry& e = entries.emplace_back();
        e.channel = id;
        e.seq = first + entries.size() - 1;
      }
      return entries[seq - first];
    }
  };
  struct Blocked {  // what a program waits for, while it does
    bool on = false;
    bool sending = false;
    std::uint32_t channel = 0;
  };

  // The channel from -> to (made on first use, its slot memory taken): its index.
  std::uint32_t channel(Program& caller, std::uint32_t from, std::uint32_t to);
  // The same, through the last channel `self` used to send (or receive) on, which a program
  // talking to one peer at a time reuses without a lookup.
  std::uint32_t channel_used(Program& caller, std::uint32_t self, bool sending, std::uint32_t peer);
  std::uint32_t pe_of(std::uint32_t program) const;
  // Puts the payload of message `seq` of channel `c` on the network.
  void post(std::uint32_t from, std::uint32_t to, const Channel& c, std::uint64_t seq,
            std::uint64_t bytes, std::function<void()> done);
  // The network delivered e's payload: it is visible once the slot's memory has taken it.
  void arrived(Entry& e);
  // e has arrived and its recv is posted: it is read out from when it is visible, and the
  // read's end is one event (the slot's write and read follow each other with nothing between).
  void read_out(Entry& e);
  void was_read(Entry& e);
  static std::string mismatch(const Entry& e, const Receipt& r, const Channel& c);

  components::System& sys_;
  const components::MessagesConfig& cfg_;
  std::uint32_t slot_limit_ = 0;
  std::function<std::uint64_t(std::uint32_t, std::uint64_t)> alloc_hbm_;
  std::int64_t grid_[3] = {1, 1, 1};
  std::vector<PeState*> programs_;
  std::vector<std::int64_t> program_of_pe_;  // global PE -> program, -1 when none
  std::deque<Channel> channels_;             // a deque: gates hold references into their channel
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> channel_of_;  // programs
  std::vector<Blocked> blocked_;                                                 // per program
  struct LastChannel {
    std::uint32_t peer = ~std::uint32_t{0};
    std::uint32_t id = 0;
  };
  std::vector<std::array<LastChannel, 2>> last_used_;  // per program: [sending]
  std::vector<components::Sram> cube_sram_;            // per global cube: cube_sram slots
  // Slot memory taken for the launch, given back by end(): (PE SRAM account or cube, bytes).
  std::vector<std::pair<PeState*, std::uint64_t>> pe_sram_taken_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> cube_sram_taken_;
  // HBM slot buffers, kept across launches: (sender PE, receiver PE) -> address and size.
  struct HbmSlots {
    std::uint64_t address = 0, bytes = 0;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, HbmSlots> hbm_slots_;
  std::map<std::uint32_t, std::uint64_t> hbm_buffers_;  // per cube: the HBM slot buffers made
};

}  // namespace cubesim::detail
