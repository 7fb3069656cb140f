#pragma once
// Which program read and wrote which bytes during a launch, and the checks built on it: an
// output region written exactly once (gaps and overlaps, with program coordinates), and races
// (two programs writing the same bytes, or one reading bytes another writes, with nothing
// ordering them). This is what users' sharding unit tests lean on.
//
// An access happens within an interval of epochs (barriers its program had passed) and of
// segments (its program's sends, recv completions and barriers: sync_log.hpp): a load or store
// within one, an asynchronous operation (a composite or an asynchronous copy) anywhere from the one
// it was issued in to the one its program waited on it in, or to the end of the launch if it never
// did. Two accesses of different programs are ordered when one's interval ends before the other's
// begins.
//
// Barriers alone are checked by epochs, counting the barriers that synchronise those two
// programs: every barrier for two programs of one cube, barrier(sip) and barrier(all) for two
// of one SIP, barrier(all) only otherwise (a program's epoch counts every barrier it passed;
// barrier() keeps, per program, how many of them were of SIP or wider scope and how many were
// of all). Pairs the epochs leave unordered, in a launch that sent messages, go to the
// happens-before graph of segments (happens_before.hpp): a send orders what its program did
// before it with what the receiver does after its recv returned, transitively through chains
// of messages and barriers. Atomics never race with each other (that is what they are for),
// and stores are what coverage counts, not atomics.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "triton_emu/checks/sync_log.hpp"
#include "triton_emu/memory/ptr.hpp"

namespace cubesim {

struct ProgramCoord {
  std::int64_t id[3] = {0, 0, 0};  // program_id(0), (1), (2)
  std::string str() const;         // "program (3, 1, 0)": program_id(0), (1), (2)
};

class AccessLog {
 public:
  static constexpr std::uint32_t kInFlight = UINT32_MAX;  // `until` of an operation not waited on

  struct Access {
    std::uint32_t program;
    std::uint32_t epoch;  // barriers the program had passed when the access (or operation) began
    std::uint32_t until;  // the last epoch it may happen in: `epoch` unless asynchronous
    std::uint32_t segment, segment_until;  // the same in its program's segments
    std::uint32_t op;  // the asynchronous operation (from begin_async()), 0 for a load/store
    std::uint64_t begin, end;
    bool write;
    bool atomic = false;  // a read-modify-write by tl.atomic_*
  };

  // The most records the log keeps (0: no limit). One more is a kernel fault (KernelFault,
  // thrown from the access that would add it): a kernel that loads or stores without end must
  // not fill the host's memory.
  void set_limit(std::uint64_t records) { limit_ = records; }
  // The launch's programs, for which barriers synchronise which pairs, and the slots of its
  // message channels (the spec's).
  void set_programs(std::vector<ProgramCoord> coords, std::uint32_t message_slots);
  // Program `program` arrives at a barrier of `scope` (0 cube, 1 SIP, 2 all): the instance
  // `generation` of that scope in `group` (its cube, its SIP, 0), which `members` programs pass.
  void barrier(std::uint32_t program, int scope, std::int64_t group, std::uint32_t generation,
               std::uint32_t members);
  // Messages: `program` sends to `to`, posts a recv from `from`, waits for message `seq` (0
  // first) of the channel from `from` (tl.recv, or tl.wait on a RecvHandle).
  void sent(std::uint32_t program, std::uint32_t to) { sync_.send(program, to); }
  void recv_posted(std::uint32_t program, std::uint32_t from) { sync_.recv_posted(program, from); }
  void recv_done(std::uint32_t program, std::uint32_t from, std::uint64_t seq) {
    sync_.recv_done(program, from, seq);
  }
  // The recv completion or barrier `program` was blocked in returned.
  void returned(std::uint32_t program) { sync_.returned(program); }
  // Every program ran to its end (the launch may still fail, on messages nobody received).
  void finished() { sync_.set_finished(); }
  // A load or store (or an atomic read-modify-write), done within `epoch`.
  void record(std::uint32_t program, std::uint32_t epoch, std::uint64_t begin, std::uint64_t end,
              bool write, bool atomic = false);
  // An asynchronous operation's accesses: begin_async() names it, record_async() logs what it
  // reads and writes (in flight until waited on), waited() says its program waited on it, and
  // on every earlier operation of that program (a PE's engine runs them in order).
  std::uint32_t begin_async() { return ++ops_; }
  void record_async(std::uint32_t program, std::uint32_t epoch, std::uint32_t op,
                    std::uint64_t begin, std::uint64_t end, bool write);
  void waited(std::uint32_t program, std::uint32_t op, std::uint32_t epoch);
  // An asynchronous copy's accesses (tl.load_async, tl.store_async; `op` from begin_async()).
  // Copies land in any order, so each is waited on by itself: record_copy adds the indices of
  // its records to `records`, and copy_waited closes those.
  void record_copy(std::uint32_t program, std::uint32_t epoch, std::uint32_t op,
                   std::uint64_t begin, std::uint64_t end, bool write,
                   std::vector<std::size_t>& records);
  void copy_waited(const std::vector<std::size_t>& records, std::uint32_t program,
                   std::uint32_t epoch);

  const std::vector<Access>& accesses() const { return accesses_; }
  const std::vector<ProgramCoord>& programs() const { return coords_; }
  const SyncLog& sync() const { return sync_; }
  // `epoch` (barriers `program` had passed) counted in the barriers that order `program` with
  // `other`: see above.
  std::uint32_t epoch_between(std::uint32_t program, std::uint32_t other,
                              std::uint32_t epoch) const;

 private:
  void append(const Access& a);

  std::vector<Access> accesses_;
  std::uint64_t limit_ = 0;
  std::uint32_t ops_ = 0;
  std::vector<std::vector<std::size_t>> in_flight_;  // per program: its open records, in order
  std::vector<std::size_t> in_flight_head_;          // per program: the first still open
  std::vector<ProgramCoord> coords_;
  SyncLog sync_;
  // Per program, after each barrier it passed (index: its epoch): how many of its barriers so
  // far were of SIP or wider scope, and how many of all. Empty: only barrier(all) so far.
  struct Wider {
    std::uint32_t sip = 0, all = 0;
  };
  std::vector<std::vector<Wider>> wider_;
  bool scoped_ = false;  // some barrier was not barrier(all)
};

struct ByteRange {
  std::uint64_t begin, end;  // [begin, end) as absolute addresses
};

struct Coverage {
  struct Overlap {
    ByteRange range;
    std::vector<std::uint32_t> programs;  // every program that wrote it (a program may repeat)
  };
  // Bytes of the region nobody wrote, with the programs whose writes end where a gap begins and
  // begin where it ends (none at the region's edges): the shares it lies between.
  struct Gap : ByteRange {
    std::optional<std::uint32_t> after_write_of, before_write_of;
  };
  std::vector<Gap> gaps;
  std::vector<Overlap> overlaps;  // bytes written more than once
  bool exactly_once() const { return gaps.empty() && overlaps.empty(); }
};

struct Race {
  ByteRange range;
  std::uint32_t first, second;  // programs
  bool write_write;             // else one reads what the other writes
  // One of the two is an asynchronous operation its program waited on only after a barrier,
  // send or recv that followed its issue (or never).
  bool in_flight;
  // Messages or barriers order other accesses of the two programs, only not these: program
  // `missed_by` made its access before the recv (or barrier) after which the other's is ordered
  // before it, or after the last send (or barrier) that orders it before the other's.
  enum class Missed : std::uint8_t { nothing, before_recv, after_send };
  Missed missed = Missed::nothing;
  std::uint32_t missed_by = 0;
};

// The checks; program coordinates come from `coords` (indexed by program).
Coverage coverage(const AccessLog& log, Ptr region, std::uint64_t bytes);
std::vector<Race> races(const AccessLog& log, std::size_t max_reported = 64);
std::string describe(const Coverage& c, Ptr region, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items = 10);
std::string describe(const std::vector<Race>& r, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items = 10);

}  // namespace cubesim
