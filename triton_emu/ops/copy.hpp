#pragma once
// One load's or store's transfers between memory and a tile (tl.load / tl.store and their
// _async forms; internal). A blocking copy lives on its program's stack for the call; an
// asynchronous one on the heap, owned by its handle and by its program's list of copies in
// flight until its last transfer lands. Each transfer's callback points into the copy, which
// therefore stays put until every transfer has landed (or the launch is given up).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "emu/time.hpp"
#include "emu/waitable.hpp"
#include "triton_emu/ops/program.hpp"
#include "triton_emu/tile/tile.hpp"

namespace cubesim::detail {

class FunctionalMemory;

struct Copy {
  Copy(emu::Scheduler& sched, const char* name, bool is_write)
      : done(sched, name, 1), what(name), write(is_write) {}

  emu::Completion done;       // fired when the last transfer has landed
  std::size_t in_flight = 0;  // transfers not yet landed
  const char* what;           // "load", "store", "load_async", "store_async"
  bool write;
  bool async = false;
  Program* owner = nullptr;             // the program that issued it
  tl::Tile tile;                        // loaded into, or stored from
  std::vector<AccessSegment> segments;  // the transfers
  FunctionalMemory* memory = nullptr;
  const std::byte* src = nullptr;  // store: the tile's values; nullptr when there are none
  std::byte* dst = nullptr;        // load: the tile's storage; nullptr when there is none
  bool deferred = false;           // a load whose copy waits until its values are used
  std::uint64_t bytes = 0;
  emu::Tick start = 0;
  std::uint64_t flow = 0;       // the trace flow of its transfers
  std::uint32_t logged_op = 0;  // its accesses in the access log (async; 0: not logged)
  std::vector<std::size_t> records;
  std::size_t index = 0;  // async: its place in the owner's copies in flight
  int lane = -1;          // async: its trace lane (-1: not traced)
};

}  // namespace cubesim::detail
