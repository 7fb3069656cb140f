#pragma once
// Which program read and wrote which bytes during a launch, and the checks built on it: an
// output region written exactly once (gaps and overlaps, with program coordinates), and races
// (two programs writing the same bytes, or one reading bytes another writes, with no barrier
// between them). This is what users' sharding unit tests lean on.

#include <cstdint>
#include <string>
#include <vector>

#include "triton_emu/ptr.hpp"

namespace cubesim {

struct ProgramCoord {
  std::int64_t id[3] = {0, 0, 0};  // program_id(0), (1), (2)
  std::string str() const;         // "program (3, 1, 0)": program_id(0), (1), (2)
};

class AccessLog {
 public:
  struct Access {
    std::uint32_t program;
    std::uint32_t epoch;  // barriers the program had passed
    std::uint64_t begin, end;
    bool write;
  };

  void record(std::uint32_t program, std::uint32_t epoch, std::uint64_t begin, std::uint64_t end,
              bool write);
  const std::vector<Access>& accesses() const { return accesses_; }
  void clear() { accesses_.clear(); }

 private:
  std::vector<Access> accesses_;
};

struct ByteRange {
  std::uint64_t begin, end;  // [begin, end) as absolute addresses
};

struct Coverage {
  struct Overlap {
    ByteRange range;
    std::vector<std::uint32_t> programs;  // every program that wrote it (a program may repeat)
  };
  std::vector<ByteRange> gaps;    // bytes of the region nobody wrote
  std::vector<Overlap> overlaps;  // bytes written more than once
  bool exactly_once() const { return gaps.empty() && overlaps.empty(); }
};

struct Race {
  ByteRange range;
  std::uint32_t first, second;  // programs
  bool write_write;             // else one reads what the other writes
};

// The checks; program coordinates come from `coords` (indexed by program).
Coverage coverage(const AccessLog& log, Ptr region, std::uint64_t bytes);
std::vector<Race> races(const AccessLog& log, std::size_t max_reported = 64);
std::string describe(const Coverage& c, Ptr region, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items = 10);
std::string describe(const std::vector<Race>& r, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items = 10);

}  // namespace cubesim
