#include "triton_emu/checks/access_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "components/memory/address_map.hpp"
#include "triton_emu/checks/happens_before.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim {

using components::hex_address;

std::string ProgramCoord::str() const {
  return "program (" + std::to_string(id[0]) + ", " + std::to_string(id[1]) + ", " +
         std::to_string(id[2]) + ")";
}

void AccessLog::append(const Access& a) {
  if (!accesses_.empty()) {  // extend the previous record when this one continues it
    Access& last = accesses_.back();
    if (last.program == a.program && last.epoch == a.epoch && last.until == a.until &&
        last.segment == a.segment && last.segment_until == a.segment_until && last.op == a.op &&
        last.write == a.write && last.atomic == a.atomic && last.end == a.begin) {
      last.end = a.end;
      return;
    }
  }
  if (limit_ != 0 && accesses_.size() >= limit_)
    throw KernelFault(fmt::format(
        "the access log is full: {} records of loads and stores (about {} MB of host memory) "
        "in this launch; a kernel that never stops loading or storing? If it is meant to make "
        "that many, raise SimOptions::max_logged_accesses (0: no limit), or set "
        "SimOptions::record_accesses to false (no sharding checks)",
        limit_, limit_ * sizeof(Access) / 1'000'000));
  accesses_.push_back(a);
}

void AccessLog::set_programs(std::vector<ProgramCoord> coords, std::uint32_t message_slots) {
  sync_.begin(coords.size(), message_slots);
  coords_ = std::move(coords);
}

void AccessLog::barrier(std::uint32_t program, int scope, std::int64_t group,
                        std::uint32_t generation, std::uint32_t members) {
  sync_.barrier(program, scope, group, generation, members);
  if (wider_.size() <= program) wider_.resize(program + 1);
  auto& w = wider_[program];
  if (w.empty()) w.push_back({});
  Wider next = w.back();
  if (scope >= 1) ++next.sip;
  if (scope >= 2) ++next.all;
  if (scope < 2) scoped_ = true;
  w.push_back(next);
}

std::uint32_t AccessLog::epoch_between(std::uint32_t program, std::uint32_t other,
                                       std::uint32_t epoch) const {
  if (!scoped_ || epoch == kInFlight || program >= coords_.size() || other >= coords_.size())
    return epoch;
  const auto& a = coords_[program].id;
  const auto& b = coords_[other].id;
  if (a[2] == b[2] && a[1] == b[1]) return epoch;  // one cube: every barrier orders them
  if (program >= wider_.size() || wider_[program].size() <= epoch) return 0;
  const Wider& w = wider_[program][epoch];
  return a[2] == b[2] ? w.sip : w.all;
}

void AccessLog::record(std::uint32_t program, std::uint32_t epoch, std::uint64_t begin,
                       std::uint64_t end, bool write, bool atomic) {
  if (begin >= end) return;
  const std::uint32_t segment = sync_.segment(program);
  append({program, epoch, epoch, segment, segment, 0, begin, end, write, atomic});
}

void AccessLog::record_async(std::uint32_t program, std::uint32_t epoch, std::uint32_t op,
                             std::uint64_t begin, std::uint64_t end, bool write) {
  if (begin >= end) return;
  const std::size_t before = accesses_.size();
  append({program, epoch, kInFlight, sync_.segment(program), kInFlight, op, begin, end, write});
  if (accesses_.size() == before) return;  // extended the operation's previous record
  if (in_flight_.size() <= program) {
    in_flight_.resize(program + 1);
    in_flight_head_.resize(program + 1, 0);
  }
  in_flight_[program].push_back(accesses_.size() - 1);
}

void AccessLog::waited(std::uint32_t program, std::uint32_t op, std::uint32_t epoch) {
  if (program >= in_flight_.size()) return;
  auto& open = in_flight_[program];
  std::size_t& head = in_flight_head_[program];
  for (; head < open.size() && accesses_[open[head]].op <= op; ++head) {
    accesses_[open[head]].until = epoch;
    accesses_[open[head]].segment_until = sync_.segment(program);
  }
}

void AccessLog::record_copy(std::uint32_t program, std::uint32_t epoch, std::uint32_t op,
                            std::uint64_t begin, std::uint64_t end, bool write,
                            std::vector<std::size_t>& records) {
  if (begin >= end) return;
  const std::size_t before = accesses_.size();
  append({program, epoch, kInFlight, sync_.segment(program), kInFlight, op, begin, end, write});
  if (accesses_.size() != before) records.push_back(accesses_.size() - 1);
}

void AccessLog::copy_waited(const std::vector<std::size_t>& records, std::uint32_t program,
                            std::uint32_t epoch) {
  for (const std::size_t i : records) {
    accesses_[i].until = epoch;
    accesses_[i].segment_until = sync_.segment(program);
  }
}

Coverage coverage(const AccessLog& log, Ptr region, std::uint64_t bytes) {
  const std::uint64_t lo = region.addr, hi = region.addr + bytes;
  // Sweep over the boundaries of every write that touches the region.
  struct Edge {
    std::uint64_t at;
    int delta;
    std::uint32_t program;
  };
  std::vector<Edge> edges;
  for (const auto& a : log.accesses()) {
    if (!a.write || a.atomic || a.end <= lo || a.begin >= hi) continue;
    edges.push_back({std::max(a.begin, lo), +1, a.program});
    edges.push_back({std::min(a.end, hi), -1, a.program});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    return x.at != y.at ? x.at < y.at : x.delta < y.delta;
  });
  Coverage c;
  std::multiset<std::uint32_t> active;
  std::uint64_t pos = lo;
  std::size_t i = 0;
  std::optional<std::uint32_t> ended;  // a program whose write ended at `pos`
  auto emit = [&](std::uint64_t from, std::uint64_t to) {
    if (from >= to) return;
    if (active.empty()) {
      if (!c.gaps.empty() && c.gaps.back().end == from)
        c.gaps.back().end = to;
      else
        c.gaps.push_back({{from, to}, ended, std::nullopt});
    } else if (active.size() > 1) {
      std::vector<std::uint32_t> progs(active.begin(), active.end());
      if (!c.overlaps.empty() && c.overlaps.back().range.end == from &&
          c.overlaps.back().programs == progs)
        c.overlaps.back().range.end = to;
      else
        c.overlaps.push_back({{from, to}, std::move(progs)});
    }
  };
  while (i < edges.size()) {
    const std::uint64_t at = edges[i].at;
    emit(pos, at);
    pos = at;
    ended.reset();
    for (; i < edges.size() && edges[i].at == at; ++i) {
      if (edges[i].delta > 0) {
        active.insert(edges[i].program);
        if (!c.gaps.empty() && c.gaps.back().end == at && !c.gaps.back().before_write_of)
          c.gaps.back().before_write_of = edges[i].program;
      } else {
        active.erase(active.find(edges[i].program));
        ended = edges[i].program;
      }
    }
  }
  emit(pos, hi);
  return c;
}

namespace {

// The sweep of races(): accesses in address order, each checked against the earlier ones it
// still overlaps; a pair of programs is reported once per kind (write/write, read/write).
class RaceFinder {
 public:
  RaceFinder(const AccessLog& log, std::size_t max_reported)
      : log_(log), max_reported_(max_reported) {}

  std::vector<Race> run() {
    std::vector<const AccessLog::Access*> order;
    order.reserve(log_.accesses().size());
    for (const auto& a : log_.accesses()) order.push_back(&a);
    std::sort(order.begin(), order.end(),
              [](const auto* x, const auto* y) { return x->begin < y->begin; });
    for (const auto* a : order) {
      prune(reads_, a->begin);
      prune(writes_, a->begin);
      if (check(*a, writes_)) break;
      if (a->write && check(*a, reads_)) break;
      (a->write ? writes_ : reads_).push_back(a);
    }
    return std::move(out_);
  }

 private:
  using Accesses = std::vector<const AccessLog::Access*>;

  static void prune(Accesses& v, std::uint64_t at) {
    v.erase(std::remove_if(v.begin(), v.end(), [at](const auto* a) { return a->end <= at; }),
            v.end());
  }

  // Ordered: same program, both atomic, or one's epochs all end before the other's begin
  // (counting the barriers that synchronise the two), or messages order them.
  bool ordered(const AccessLog::Access& x, const AccessLog::Access& y) {
    if (y.program == x.program || (x.atomic && y.atomic)) return true;
    if (log_.epoch_between(x.program, y.program, x.until) <
            log_.epoch_between(y.program, x.program, y.epoch) ||
        log_.epoch_between(y.program, x.program, y.until) <
            log_.epoch_between(x.program, y.program, x.epoch))
      return true;
    if (!log_.sync().has_messages()) return false;
    // Made for the first pair the epochs leave unordered in a launch that sent messages
    // (without messages the epochs say all that barriers order).
    if (!hb_) hb_.emplace(log_.sync());
    return before(x, y) || before(y, x);
  }

  bool before(const AccessLog::Access& x, const AccessLog::Access& y) {
    return x.segment_until != AccessLog::kInFlight &&
           hb_->ordered(x.program, x.segment_until, y.program, y.segment);
  }
  // Something after `y` orders `x` before it: y came too early.
  bool too_early(const AccessLog::Access& x, const AccessLog::Access& y) {
    return x.segment_until != AccessLog::kInFlight &&
           hb_->first_after(x.program, x.segment_until, y.program) != HappensBefore::kNever;
  }
  // Something before `x` (in its program) is ordered before `y`: x came too late.
  bool too_late(const AccessLog::Access& x, const AccessLog::Access& y) {
    return x.segment > 0 && hb_->first_after(x.program, 0, y.program) <= y.segment;
  }
  // An asynchronous operation its program waited on only after a barrier, send or recv that
  // followed its issue (or never).
  static bool spans(const AccessLog::Access& a) {
    return a.until != a.epoch || a.segment_until != a.segment;
  }

  // Which side's message came too early or too late, when messages are what could order them.
  void attribute(Race& race, const AccessLog::Access& x, const AccessLog::Access& y) {
    if (!hb_) return;
    const auto miss = [&race](Race::Missed how, std::uint32_t by) {
      race.missed = how;
      race.missed_by = by;
    };
    if (too_early(x, y))
      miss(Race::Missed::before_recv, y.program);
    else if (too_early(y, x))
      miss(Race::Missed::before_recv, x.program);
    else if (too_late(x, y))
      miss(Race::Missed::after_send, x.program);
    else if (too_late(y, x))
      miss(Race::Missed::after_send, y.program);
  }

  // Records the races of `x` with the accesses of `v`; true once enough are reported.
  bool check(const AccessLog::Access& x, const Accesses& v) {
    for (const auto* y : v) {
      if (ordered(x, *y)) continue;
      const bool ww = x.write && y->write;
      const auto key =
          std::make_tuple(std::min(x.program, y->program), std::max(x.program, y->program), ww);
      if (!seen_.insert(key).second) continue;
      Race& race = out_.emplace_back(Race{{std::max(x.begin, y->begin), std::min(x.end, y->end)},
                                          std::min(x.program, y->program),
                                          std::max(x.program, y->program),
                                          ww,
                                          spans(x) || spans(*y)});
      attribute(race, x, *y);
      if (out_.size() >= max_reported_) return true;
    }
    return false;
  }

  const AccessLog& log_;
  std::size_t max_reported_;
  Accesses reads_, writes_;  // still overlapping the sweep position
  std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> seen_;
  std::optional<HappensBefore> hb_;
  std::vector<Race> out_;
};

}  // namespace

std::vector<Race> races(const AccessLog& log, std::size_t max_reported) {
  return RaceFinder(log, max_reported).run();
}

namespace {
std::string range_str(ByteRange r, Ptr region) {
  return "[" + hex_address(r.begin) + ", " + hex_address(r.end) + ") (bytes " +
         std::to_string(r.begin - region.addr) + ".." + std::to_string(r.end - region.addr) +
         " of the region)";
}
std::string program_str(std::uint32_t p, const std::vector<ProgramCoord>& coords) {
  return p < coords.size() ? coords[p].str() : "program #" + std::to_string(p);
}
}  // namespace

std::string describe(const Coverage& c, Ptr region, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items) {
  if (c.exactly_once()) return "every byte written exactly once";
  std::string s;
  if (!c.gaps.empty()) {
    s += std::to_string(c.gaps.size()) + " gap(s) nobody wrote:";
    for (std::size_t i = 0; i < c.gaps.size() && i < max_items; ++i) {
      const auto& g = c.gaps[i];
      s += "\n  " + range_str(g, region);
      // Whose shares it lies between: a kernel's sharding usually leaves its gap at the edge
      // of one program's share.
      if (g.after_write_of && g.before_write_of)
        s += ", between the writes of " + program_str(*g.after_write_of, coords) + " and " +
             program_str(*g.before_write_of, coords);
      else if (g.after_write_of)
        s += ", after the write of " + program_str(*g.after_write_of, coords);
      else if (g.before_write_of)
        s += ", before the write of " + program_str(*g.before_write_of, coords);
    }
    if (c.gaps.size() > max_items) s += "\n  ...";
  }
  if (!c.overlaps.empty()) {
    if (!s.empty()) s += "\n";
    s += std::to_string(c.overlaps.size()) + " range(s) written more than once:";
    for (std::size_t i = 0; i < c.overlaps.size() && i < max_items; ++i) {
      s += "\n  " + range_str(c.overlaps[i].range, region) + " by";
      for (auto p : c.overlaps[i].programs) s += " " + program_str(p, coords) + ";";
      s.pop_back();
    }
    if (c.overlaps.size() > max_items) s += "\n  ...";
  }
  return s;
}

std::string describe(const std::vector<Race>& r, const std::vector<ProgramCoord>& coords,
                     std::size_t max_items) {
  if (r.empty()) return "no races";
  std::string s = std::to_string(r.size()) +
                  " race(s) between programs with nothing ordering them (no barrier, nor a chain "
                  "of messages, between the two accesses):";
  for (std::size_t i = 0; i < r.size() && i < max_items; ++i) {
    const Race& x = r[i];
    const std::uint32_t other = x.missed_by == x.first ? x.second : x.first;
    s += "\n  " + program_str(x.first, coords) + " and " + program_str(x.second, coords) +
         (x.write_write ? " both write" : ": one reads what the other writes") + " [" +
         hex_address(x.range.begin) + ", " + hex_address(x.range.end) + ")" +
         (x.in_flight ? " (through a composite still in flight: its program had not waited "
                        "on it before the barrier or send that would order it)"
                      : "");
    if (x.missed == Race::Missed::before_recv)
      s += "; the message does not order them: " + program_str(x.missed_by, coords) +
           " accessed the bytes before returning from the recv (or barrier) that orders " +
           program_str(other, coords) + "'s access before what follows it";
    else if (x.missed == Race::Missed::after_send)
      s += "; the message does not order them: " + program_str(x.missed_by, coords) +
           " accessed the bytes after the send (or barrier) that orders its earlier work before " +
           program_str(other, coords) + "'s access";
  }
  return s;
}

}  // namespace cubesim
