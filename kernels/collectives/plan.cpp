#include "kernels/collectives/plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "components/network/message_window.hpp"
#include "kernels/collectives/ring_order.hpp"
#include "kernels/harness/message_slots.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels::collectives {

using components::collectives::Buffer;
using components::collectives::Op;
using components::collectives::OpKind;
using components::collectives::Schedule;
using components::collectives::Step;

namespace {

// The algorithm's own channels times `channels`; UsageError past what it places.
int checked_channels(const Algorithm& a, int channels) {
  const int total = a.channels * channels;
  if (channels < 1 || total > a.max_channels)
    throw UsageError(
        "channels=" + std::to_string(channels) + ": algorithm=" + a.name + " places at most " +
        std::to_string(a.max_channels / a.channels) + " (" + a.placed + "); use channels=" +
        (a.max_channels / a.channels > 1 ? "1 to " + std::to_string(a.max_channels / a.channels)
                                         : std::string("1")));
  return total;
}

}  // namespace

MessageWindows message_windows(const components::SystemConfig& cfg, GridShape grid,
                               std::uint32_t slot_cap) {
  const auto capped = [slot_cap](std::uint32_t slots) {
    return slot_cap > 0 ? std::min(slots, slot_cap) : slots;
  };
  // The classes the grid's channels can be of: mesh between PEs of a cube, UCIe between
  // cubes, inter-SIP between SIPs (one program per SIP, as ranks=sips plans, has inter-SIP
  // channels only); every class where the grid has one program.
  const auto spans = [&](components::ChannelClass k) {
    switch (k) {
      case components::ChannelClass::mesh:
        return grid.pes > 1;
      case components::ChannelClass::ucie:
        return grid.cubes > 1;
      default:
        return grid.sips > 1;
    }
  };
  const bool one = grid.total() <= 1;
  MessageWindows w{
      .fewest_slots = UINT32_MAX, .most_slots = 0, .smallest_slot = UINT64_MAX, .largest_bytes = 0};
  w.slot_cap = slot_cap;
  for (components::ChannelClass k : components::kAllChannelClasses) {
    const bool mesh = k == components::ChannelClass::mesh;
    if (!mesh && !components::has_channel_class(cfg, k)) continue;
    if (!one && !spans(k)) continue;
    const components::MessageWindow& m = cfg.messages.window(k);
    w.smallest_slot = std::min(w.smallest_slot, m.slot_bytes);
    w.fewest_slots = std::min(w.fewest_slots, capped(m.slots));
    w.fastest_bytes_per_s =
        std::max(w.fastest_bytes_per_s, components::credit_loop(cfg, k, m.slot_bytes).rate());
    w.most_slots = std::max(w.most_slots, capped(m.slots));
    w.largest_bytes = std::max(w.largest_bytes, std::uint64_t{capped(m.slots)} * m.slot_bytes);
  }
  if (w.most_slots == 0) throw std::logic_error("message_windows: the grid spans no channel class");
  return w;
}

Plan make_plan(const components::SystemConfig& cfg, GridShape grid, Collective collective,
               const std::string& algorithm, std::int64_t bytes, int channels) {
  const Algorithm& a = find_algorithm(algorithm, collective);
  const int total = checked_channels(a, channels);
  Plan p = a.schedule(PlanInput{.config = cfg,
                                .grid = grid,
                                .collective = collective,
                                .elems = bytes / 4,
                                .order = ring_order(cfg, grid),
                                .channels = total});
  p.directions = total;
  p.grid = grid;
  p.windows = message_windows(cfg, grid);
  p.traffic = components::collectives::memory_traffic(*p.schedule);
  p.piece =
      std::min<std::int64_t>(static_cast<std::int64_t>(p.windows.smallest_slot / 4), p.segment);
  return p;
}

std::int64_t element_multiple(Collective collective, const std::string& algorithm, GridShape grid,
                              int channels) {
  const Algorithm& a = find_algorithm(algorithm, collective);
  const std::int64_t per_channel = a.element_multiple(collective, grid);
  return per_channel > 1 ? per_channel * checked_channels(a, channels) : 1;
}

std::vector<Groups> hierarchy_levels(
    GridShape grid,
    const std::function<std::int64_t(std::int64_t, std::int64_t, std::int64_t)>& at) {
  Groups in_cube, in_sip, across;
  for (std::int64_t s = 0; s < grid.sips; ++s)
    for (std::int64_t c = 0; c < grid.cubes; ++c) {
      auto& g = in_cube.emplace_back();
      for (std::int64_t q = 0; q < grid.pes; ++q) g.push_back(at(s, c, q));
    }
  for (std::int64_t s = 0; s < grid.sips; ++s)
    for (std::int64_t q = 0; q < grid.pes; ++q) {
      auto& g = in_sip.emplace_back();
      for (std::int64_t c = 0; c < grid.cubes; ++c) g.push_back(at(s, c, q));
    }
  for (std::int64_t c = 0; c < grid.cubes; ++c)
    for (std::int64_t q = 0; q < grid.pes; ++q) {
      auto& g = across.emplace_back();
      for (std::int64_t s = 0; s < grid.sips; ++s) g.push_back(at(s, c, q));
    }
  return {std::move(in_cube), std::move(in_sip), std::move(across)};
}

Plan ring_plan(const PlanInput& in, std::vector<Groups> candidates, int channels,
               std::vector<int> switched) {
  std::vector<Groups> levels;
  std::vector<int> kept;
  switched.resize(candidates.size(), -1);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].front().size() > 1) {
      levels.push_back(std::move(candidates[i]));
      kept.push_back(switched[i]);
    }
  if (levels.empty()) {  // one program
    levels.push_back({in.order});
    kept.push_back(-1);
  }
  Plan p;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const auto m = static_cast<std::int64_t>(levels[i].front().size());
    p.levels.push_back(m);
    // From the one or two ring neighbours; a switch is no channel.
    if (kept[i] < 0) p.channels_in += m > 2 ? channels : 1;
  }
  p.block = in.elems / in.grid.total();
  p.segment = p.block / channels;
  // The first level's step: a ring's chunk, or the whole vector up to a switch.
  p.step_bytes = in.elems * 4 / (kept.front() < 0 ? p.levels.front() : 1);
  p.schedule = rings(in.collective, std::move(levels), p.block, channels, std::move(kept));
  return p;
}

Plan tree_plan(const PlanInput& in, std::vector<std::vector<std::int64_t>> parents,
               std::int64_t channels_in) {
  Plan p;
  const auto n = static_cast<std::int64_t>(parents.size());
  p.block = in.elems;
  p.segment = (in.elems + n - 1) / n;
  p.step_bytes = in.elems * 4;
  p.schedule = trees(in.collective, std::move(parents), in.elems);
  p.channels_in = channels_in;
  return p;
}

Plan all_to_all_plan(const PlanInput& in, bool direct) {
  Plan p;
  p.block = in.elems / in.grid.total();
  p.segment = p.block;
  p.step_bytes = direct ? in.elems * 4 : p.block * 4;
  p.schedule = all_to_all(in.order, p.block, direct);
  p.channels_in = in.grid.total() - 1;
  return p;
}

components::collectives::Pipelining pipelining(const components::SystemConfig& cfg,
                                               const Plan& plan, std::int64_t chunk, Buffer buffer,
                                               std::uint32_t depth, int staging_halved) {
  components::collectives::Pipelining p;
  const MessageWindows& windows = plan.windows;
  const std::int64_t slot = static_cast<std::int64_t>(windows.smallest_slot / 4);
  const std::int64_t segment = std::max<std::int64_t>(plan.segment, 1);
  p.chunk = std::min(chunk > 0 ? chunk : buffer == Buffer::sram ? segment : slot, segment);
  p.piece = std::min(plan.piece, p.chunk);
  p.message = std::max(slot, p.piece);
  // A step's sends run ahead of its receives by no more than the smallest window (more could
  // fill a channel whose receiver waits to send in turn); rows in flight cover the deepest.
  p.window = windows.fewest_slots;
  depth = depth > 0 ? std::min(depth, windows.most_slots) : windows.most_slots;
  std::int64_t steps = 0;
  for (std::int64_t g = 0; g < plan.schedule->programs(); ++g)
    steps = std::max(steps, plan.schedule->steps(g));
  p.depth = depth;
  components::collectives::keep_in_flight(p, steps, depth);
  for (std::int64_t g = 0; g < plan.schedule->programs(); ++g)
    p.span = std::max(p.span, components::collectives::row_span(*plan.schedule, g, p));
  // Loads and stores in flight: the bytes that keep them up with the fastest channel (its
  // credit loop's rate) over an HBM access's round trip, times the share of the messages'
  // bytes the schedule loads (stores), and at least one pair's worth, as a DMA queue of that
  // depth would. Loads go at most half as many pairs ahead as the PE's DMA engine keeps packets
  // in flight (a ring's pair loads one piece; a pair that loads many, as a direct all-to-all's,
  // can fill the window), stores are at most a quarter of it (the messages need the rest, and
  // the model does not see the DMA window). Neither takes more than an eighth of the SRAM,
  // unless one pair needs more.
  const std::uint64_t row = std::max<std::uint64_t>(row_step_bytes(plan, p), 1);
  const long double covered =
      static_cast<long double>(windows.fastest_bytes_per_s) *
      static_cast<long double>(components::hbm_round_trip(cfg, windows.smallest_slot)) /
      static_cast<long double>(emu::kPsPerSecond);
  const auto staged = [&](double share) {
    const auto bytes = static_cast<std::uint64_t>(covered * static_cast<long double>(share)) >>
                       std::min(staging_halved, 63);
    return std::max(std::min(bytes, cfg.pe.sram_bytes / 8), row);
  };
  const std::uint64_t half = std::max<std::uint64_t>(1, cfg.pe.dma.max_outstanding_packets / 2);
  p.lookahead = static_cast<std::int64_t>(
      std::clamp<std::uint64_t>(staged(plan.traffic.loads) / row, 1, half));
  p.store_budget = staged(plan.traffic.stores);
  p.max_stores = std::max<std::uint64_t>(1, half / 2);
  return p;
}

FittedPipelining fit_pipelining(const components::SystemConfig& cfg, Plan& plan,
                                Collective collective, Buffer buffer, std::int64_t bytes,
                                std::int64_t chunk) {
  FittedPipelining f;
  plan.windows = message_windows(cfg, plan.grid);  // unlimited, whatever an earlier fit set
  // As many rows in flight as the deepest window spanned and loads and stores in flight that
  // cover an HBM round trip; while they do not fit the PE's SRAM, fewer rows where that needs
  // less (a ring's many steps: rows in flight are most of it), else less in flight to memory (a
  // tree's few steps lie as far apart as its depth, whatever the rows), else fewer rows anyway;
  // rows no fewer than `fewest`, loads ahead and stores in flight halved no lower than
  // `staged_floor` bytes each.
  const auto fit_depth = [&](std::uint32_t fewest, std::uint64_t staged_floor) {
    const auto at = [&](std::uint32_t d, int h) {
      FittedPipelining t;
      t.pipelining = pipelining(cfg, plan, chunk, buffer, d, h);
      t.sram_bytes = plan_sram_bytes(cfg, plan, collective, buffer, bytes, t.pipelining);
      return t;
    };
    int halved = 0;
    f = at(0, halved);
    std::uint32_t depth = f.pipelining.depth;
    while (f.sram_bytes > cfg.pe.sram_bytes) {
      const std::uint32_t fewer = std::max(depth / 2, fewest);
      if (fewer < depth)
        if (FittedPipelining t = at(fewer, halved); t.sram_bytes < f.sram_bytes) {
          f = t;
          depth = fewer;
          continue;
        }
      const auto ahead = [&](const FittedPipelining& x) {
        return static_cast<std::uint64_t>(x.pipelining.lookahead) *
               row_step_bytes(plan, x.pipelining);
      };
      if (FittedPipelining t = at(depth, halved + 1);
          (t.pipelining.store_budget < f.pipelining.store_budget ||
           t.pipelining.lookahead < f.pipelining.lookahead) &&
          t.pipelining.store_budget >= std::min(staged_floor, f.pipelining.store_budget) &&
          ahead(t) >= std::min(staged_floor, ahead(f))) {
        f = t;
        ++halved;
        continue;
      }
      if (fewer == depth) break;
      depth = fewer;
      f = at(depth, halved);
    }
    return f.sram_bytes <= cfg.pe.sram_bytes;
  };
  // First with at least as many rows as the fewest slots of a channel, and loads ahead and
  // stores in flight of at least that window's bytes each (what a channel keeps in flight);
  // then, with slots in the PE for more channels than its SRAM holds at their classes' windows
  // (an all-to-all receives from every other program), the most slots per channel that fit
  // (the SRAM needed grows with them), as a library sizes its per-peer buffers down; then
  // fewer rows and less in flight to memory, down to one row and a pair's worth (slots in HBM
  // as deep as a long link's loop need not all be filled by rows of a PE's SRAM). What still
  // does not fit the caller's check refuses.
  const auto window = [&] {
    return std::min(std::uint64_t{plan.windows.fewest_slots} * plan.windows.smallest_slot,
                    cfg.pe.sram_bytes / 8);
  };
  if (fit_depth(plan.windows.fewest_slots, window())) return f;
  if (cfg.messages.memory == components::SlotMemory::pe_sram && plan.windows.most_slots > 2) {
    const auto with_cap = [&](std::uint32_t cap) {
      plan.windows = message_windows(cfg, plan.grid, cap);
      return fit_depth(plan.windows.fewest_slots, window());
    };
    if (with_cap(most_slots_that_fit(plan.windows.most_slots - 1, with_cap))) return f;
  }
  fit_depth(1, 0);
  return f;
}

std::uint64_t row_step_bytes(const Plan& plan, const components::collectives::Pipelining& p) {
  if (plan.segment <= 0) return 0;
  const std::int64_t rows = (plan.segment + p.chunk - 1) / p.chunk;
  return static_cast<std::uint64_t>((plan.step_bytes + rows - 1) / rows);
}

std::uint64_t plan_sram_bytes(const components::SystemConfig& cfg, const Plan& plan,
                              Collective collective, Buffer buffer, std::int64_t bytes,
                              const components::collectives::Pipelining& p) {
  const auto& m = cfg.messages;
  // Every channel in as large as the largest window the launch spans (a bound: a program's
  // channels in are of one class or a few).
  const std::uint64_t slots_in_sram =
      m.memory == components::SlotMemory::pe_sram
          ? static_cast<std::uint64_t>(plan.channels_in) * plan.windows.largest_bytes
          : 0;
  // The rows held (pipeline.hpp's rows_held): each holds what a pair sends and what it
  // receives; the loads issued ahead; a few pieces being added.
  // (and a row more: the one being received while the last is being stored)
  const auto rows = static_cast<std::uint64_t>(std::min<std::int64_t>(
      (plan.segment + p.chunk - 1) / p.chunk, components::collectives::rows_held(p, p.span) + 1));
  const std::uint64_t row = row_step_bytes(plan, p);
  // Loads and stores in flight never hold more than the vector.
  const auto vector =
      static_cast<std::uint64_t>(collective == Collective::all_to_all ? 2 * bytes : bytes);
  const std::uint64_t ahead =
      buffer == Buffer::hbm ? std::min(static_cast<std::uint64_t>(p.lookahead) * row, vector) : 0;
  // Final values wait `lookahead` pairs for their stores (the executor defers them so as not
  // to wait for their receives at once).
  const std::uint64_t deferred = buffer == Buffer::hbm ? ahead : 0;
  // A message of several pieces (at most a pair's row) is gathered into a tile of its own
  // before it goes, and one received is held while it is cut into its pieces.
  const std::uint64_t gathers =
      p.message > p.piece ? 2 * std::min(static_cast<std::uint64_t>(p.message) * 4, row) : 0;
  const auto working = std::min(rows * 2 * row, 2 * vector) + ahead + deferred + gathers +
                       static_cast<std::uint64_t>(4 * p.piece * 4 * plan.directions);
  // Each store is one message-sized piece.
  const std::uint64_t stores =
      std::min({p.store_budget, p.max_stores * static_cast<std::uint64_t>(p.piece) * 4, vector});
  const std::uint64_t resident = buffer == Buffer::sram ? vector : stores;
  return resident + working + slots_in_sram;
}

std::uint64_t most_channels_into_a_cube(const Schedule& schedule, std::int64_t pes_per_cube) {
  std::vector<std::int64_t> peers;
  Step step;
  std::uint64_t most = 0, cube_channels = 0;
  for (std::int64_t g = 0; g < schedule.programs(); ++g) {
    if (g % pes_per_cube == 0) cube_channels = 0;
    peers.clear();
    for (std::int64_t k = 0; k < schedule.steps(g); ++k) {
      schedule.step(g, k, step);
      for (const Op& op : step)
        if (op.kind == OpKind::recv || op.kind == OpKind::recv_add) peers.push_back(op.peer);
    }
    std::sort(peers.begin(), peers.end());
    cube_channels +=
        static_cast<std::uint64_t>(std::unique(peers.begin(), peers.end()) - peers.begin());
    most = std::max(most, cube_channels);
  }
  return most;
}

}  // namespace cubesim::kernels::collectives
