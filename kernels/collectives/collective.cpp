#include "kernels/collectives/collective.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "components/topology/graph.hpp"
#include "kernels/collectives/algorithm.hpp"
#include "kernels/collectives/executor.hpp"
#include "kernels/collectives/plan.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/message_slots.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
#include "triton_emu/errors.hpp"

namespace cubesim::kernels::collectives {

using components::collectives::Buffer;

namespace {

constexpr std::int64_t kMaxBytes = std::int64_t{1} << 34;

// Element i of program g's input.
double input_value(std::uint64_t seed, std::int64_t g, std::int64_t i) {
  float v = 0;
  random_block(DType::f32, Fill::signed_unit, seed, static_cast<std::uint64_t>(g) + 1, i, 1,
               reinterpret_cast<std::byte*>(&v));
  return v;
}

const char* slot_memory(const components::MessagesConfig& m) {
  return components::slot_memory_name(m.memory);
}

// Who takes part in a collective: its n ranks, and the program of rank r on channel c. Ranks
// are the programs (one channel), or with ranks=sips the SIPs, the first `channels` PEs of each
// a channel (position c of rank r is global program r * positions + c).
struct Ranks {
  std::int64_t n = 1, channels = 1, positions = 1;
  std::int64_t program(std::int64_t rank, std::int64_t channel) const {
    return rank * positions + channel;
  }
  std::int64_t rank(std::int64_t g) const { return g / positions; }
  bool takes_part(std::int64_t g) const { return g % positions < channels; }
  // The programs taking part, and the i-th of them (by rank, then channel).
  std::int64_t programs() const { return n * channels; }
  std::int64_t nth(std::int64_t i) const { return program(i / channels, i % channels); }
};

// Element i of program g's output, from the inputs of the programs of its channel (regenerated
// from the seed: in place, the inputs are gone).
double expected(Collective c, std::uint64_t seed, const Ranks& r, std::int64_t block,
                std::int64_t g, std::int64_t i) {
  const std::int64_t n = r.n, me = r.rank(g);
  const auto of = [&](std::int64_t rank) { return r.program(rank, g % r.positions); };
  double ref = 0;
  switch (c) {
    case Collective::all_reduce:
      for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, of(q), i);
      break;
    case Collective::reduce_scatter:
      for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, of(q), me * block + i);
      break;
    case Collective::all_gather:
      ref = input_value(seed, of(i / block), i % block);
      break;
    case Collective::broadcast:
      ref = input_value(seed, of(0), i);
      break;
    case Collective::all_to_all:
      ref = input_value(seed, of(i / block), me * block + i % block);
      break;
  }
  return ref;
}

// A collective laid out in a simulation: its plan, and each program's input and output.
struct Setup {
  Collective collective = Collective::all_reduce;
  GridShape grid;
  Ranks ranks;          // who takes part: every program, or channels of the SIPs (ranks=sips)
  GridShape plan_grid;  // the grid the algorithm plans for: the launch's, or one program per SIP
  std::string algorithm;
  Buffer buffer = Buffer::sram;
  std::int64_t bytes = 0;        // bytes_per_pe
  std::int64_t chunk_bytes = 0;  // the parameter (0: a message slot's worth)
  int channels = 1;              // the parameter (times the algorithm's own)
  int plan_channels = 1;         // of the algorithm's plan: the parameter, or 1 with ranks=sips
  std::int64_t in_elems = 0, out_elems = 0;  // per program
  bool in_place = false;                     // each program's output is its input buffer
  Plan plan;
  components::collectives::Pipelining pipelining;
  std::uint64_t sram_bound = 0;  // the SRAM a program may hold (plan_sram_bytes)
  std::vector<Ptr> in, out;      // per global program id
};

const char* buffer_name(Buffer buffer) {
  return buffer == Buffer::sram ? "sram" : "hbm";
}

// algorithm=switch over `grid`: a UsageError unless a switch it spans reduces, and every
// reducing switch it spans adds f32 (the collectives' dtype).
void require_reducing_switch(const components::SystemConfig& cfg, GridShape grid) {
  bool any = false;
  for (const bool sips : {false, true}) {
    const components::SwitchReduction& r = sips ? cfg.inter_sip.reduction : cfg.ucie.reduction;
    const char* field = sips ? "system.inter_sip" : "system.ucie";
    if (!r.enabled() || (sips ? grid.sips : grid.cubes) < 2) continue;
    if (!r.adds(DType::f32)) {
      std::string listed;
      for (const DType t : kAllDTypes)
        if (r.adds(t)) listed += (listed.empty() ? "" : ", ") + std::string(dtype_name(t));
      throw UsageError(std::string("algorithm=switch sums f32 in the switch, but ") + field +
                       ".switch_reduction.dtypes lists only " + listed + "; add \"f32\" there");
    }
    any = true;
  }
  if (!any)
    throw UsageError(
        std::string("algorithm=switch reduces in a switch, but no switch between ") +
        (grid.sips > 1 ? "the SIPs or " : "") +
        "the cubes of a SIP reduces: give system.inter_sip (between SIPs) or "
        "system.ucie (between cubes) \"topology\": \"switch\" and a "
        "\"switch_reduction\" section (e.g. --set 'system.inter_sip.switch_reduction={}'), "
        "or use algorithm=hierarchical");
}

// What to change when a collective's rows in flight do not fit the SRAM. With the message
// slots in the PE, their share is named, and where they take half the SRAM or more, fewer or
// smaller slots come first (a smaller chunk cannot make room the slots already hold).
std::string sram_fix(const components::SystemConfig& cfg, const Plan& plan, Buffer buffer,
                     bool hbm_fits) {
  std::string fix = hbm_fits                 ? "use buffer=hbm, or fewer bytes_per_pe"
                    : buffer == Buffer::sram ? "use fewer bytes_per_pe"
                                             : "use a smaller chunk_bytes";
  if (cfg.messages.memory != components::SlotMemory::pe_sram) return fix;
  const std::uint64_t slots =
      static_cast<std::uint64_t>(plan.channels_in) * plan.windows.largest_bytes;
  const std::string elsewhere =
      "message slots outside the PE (--set system.messages.memory=cube_sram or hbm)";
  if (2 * slots < cfg.pe.sram_bytes) return fix + ", or " + elsewhere;
  return "the message slots of its " + std::to_string(plan.channels_in) + " channel" +
         (plan.channels_in == 1 ? "" : "s") + " in take " + std::to_string(slots) +
         " bytes of it (system.messages: each class's slots x slot_KiB): use fewer or smaller "
         "slots, or " +
         elsewhere;
}

// s's plan, pipelining and SRAM bound, or a UsageError when the size does not shard or the
// data and slots do not fit.
void plan_checked(const components::SystemConfig& cfg, Setup& s) {
  const int dirs = find_algorithm(s.algorithm, s.collective).channels * s.plan_channels;
  const std::int64_t multiple =
      element_multiple(s.collective, s.algorithm, s.plan_grid, s.plan_channels);
  if (multiple == 1)
    require_divisible("bytes_per_pe", s.bytes, 4, "4 bytes (f32 elements)");
  else
    require_divisible(
        "bytes_per_pe", s.bytes, 4 * multiple,
        "4 bytes x " +
            (s.ranks.positions > 1 ? std::to_string(s.ranks.n) + " SIPs" : s.grid.str()) +
            (dirs > 1 ? " x " + std::to_string(dirs) + " channels" : "") +
            " (every program's data is cut into one block per program" +
            (dirs > 1 ? ", each in one part per channel" : "") + ")");
  if (s.chunk_bytes > 0)
    require_divisible("chunk_bytes", s.chunk_bytes, 4, "4 bytes (f32 elements)");
  Plan plan = make_plan(cfg, s.plan_grid, s.collective, s.algorithm, s.bytes, s.plan_channels);
  if (s.ranks.positions > 1)
    plan.schedule = per_channel(std::move(plan.schedule), s.ranks.positions, s.ranks.channels);
  const auto& m = cfg.messages;
  // buffer=hbm is worth suggesting only where it needs less SRAM than a PE has (fitted first:
  // the fit that follows sets the plan's windows for the run).
  const bool hbm_fits =
      s.buffer == Buffer::sram &&
      fit_pipelining(cfg, plan, s.collective, Buffer::hbm, s.bytes, s.chunk_bytes / 4).sram_bytes <=
          cfg.pe.sram_bytes;
  FittedPipelining fitted =
      fit_pipelining(cfg, plan, s.collective, s.buffer, s.bytes, s.chunk_bytes / 4);
  // The default chunk (a message slot) halved while the rows in flight do not fit the SRAM: a
  // step that sends a row of every block at once (a switch's) holds more per row than a ring's.
  if (s.chunk_bytes == 0)
    for (std::int64_t chunk = fitted.pipelining.chunk / 2;
         fitted.sram_bytes > cfg.pe.sram_bytes && chunk >= 64; chunk /= 2)
      fitted = fit_pipelining(cfg, plan, s.collective, s.buffer, s.bytes, chunk);
  const components::collectives::Pipelining& pipe = fitted.pipelining;
  const std::uint64_t sram = fitted.sram_bytes;
  const std::string what = std::string(collective_name(s.collective)) + " of " +
                           std::to_string(s.bytes) + " bytes per PE with algorithm=" + s.algorithm +
                           " buffer=" + buffer_name(s.buffer) +
                           " chunk_bytes=" + std::to_string(pipe.chunk * 4);
  require_sram(cfg, sram, what, sram_fix(cfg, plan, s.buffer, hbm_fits));
  if (m.memory != components::SlotMemory::pe_sram)
    require_message_slots(
        cfg, most_channels_into_a_cube(*plan.schedule, s.grid.pes),
        static_cast<std::uint64_t>(s.grid.pes * (s.in_elems + (s.in_place ? 0 : s.out_elems))) * 4,
        std::string(collective_name(s.collective)) + " with algorithm=" + s.algorithm +
            " and slots in " + slot_memory(m));
  s.plan = std::move(plan);
  s.pipelining = pipe;
  s.sram_bound = sram;
}

// Each program's data on its own cube's HBM, as a collective's buffers would be (in place: one
// buffer, the output written over the input, as NCCL allows sendbuff == recvbuff); the inputs
// random from the simulation's seed unless the run is timing-only. A cube's programs' buffers
// lie one HBM channel's interleave apart beyond their size, so that the same row of every
// program's vector falls on a different channel (as padding skews banks), not all on one.
void place_buffers(Simulation& sim, Setup& s) {
  const GridShape& grid = s.grid;
  const auto interleave = static_cast<std::int64_t>(sim.config().cube.hbm.channel_interleave_bytes);
  const auto stride = [&](std::int64_t elems) {
    return (elems * 4 + interleave - 1) / interleave * interleave + interleave;
  };
  s.in.assign(static_cast<std::size_t>(grid.total()), Ptr{});
  s.out.resize(s.in.size());
  for (std::int64_t cube = 0; cube < grid.cubes * grid.sips; ++cube) {
    const auto sip = static_cast<std::uint32_t>(cube / grid.cubes);
    const auto within_sip = static_cast<std::uint32_t>(cube % grid.cubes);
    // The cube's programs that take part: its first `taking` PEs (channels fill a SIP's cubes
    // in order).
    const std::int64_t first = cube * grid.pes;
    std::int64_t taking = 0;
    while (taking < grid.pes && s.ranks.takes_part(first + taking)) ++taking;
    if (taking == 0) continue;
    const Ptr in_base = sim.alloc(static_cast<std::uint64_t>(taking * stride(s.in_elems)),
                                  Placement::on_cube(sip, within_sip));
    const Ptr out_base = s.in_place
                             ? in_base
                             : sim.alloc(static_cast<std::uint64_t>(taking * stride(s.out_elems)),
                                         Placement::on_cube(sip, within_sip));
    for (std::int64_t pe = 0; pe < taking; ++pe) {
      s.in[static_cast<std::size_t>(first + pe)] = in_base + pe * stride(s.in_elems);
      s.out[static_cast<std::size_t>(first + pe)] = out_base + pe * stride(s.out_elems);
    }
  }
  if (sim.options().timing_only) return;
  std::vector<std::byte> buf(static_cast<std::size_t>(s.in_elems) * 4);
  for (std::int64_t i = 0; i < s.ranks.programs(); ++i) {
    const std::int64_t g = s.ranks.nth(i);
    random_block(DType::f32, Fill::signed_unit, sim.options().seed,
                 static_cast<std::uint64_t>(g) + 1, 0, s.in_elems, buf.data());
    sim.write_bytes(s.in[static_cast<std::size_t>(g)], buf.data(), buf.size());
  }
}

Setup setup_collective(Simulation& sim, const Params& p, Collective collective) {
  require_hardware_grid(sim, collective_name(collective),
                        "a collective moves data between the programs of every PE");
  Setup s;
  s.collective = collective;
  s.grid = hardware_grid(sim.config());
  s.algorithm = get_string(p, "algorithm");
  s.buffer = get_string(p, "buffer") == "hbm" ? Buffer::hbm : Buffer::sram;
  s.bytes = get_int(p, "bytes_per_pe");
  s.chunk_bytes = get_int(p, "chunk_bytes");
  s.channels = static_cast<int>(get_int(p, "channels"));
  s.plan_grid = s.grid;
  s.plan_channels = s.channels;
  // Offered for the all-reduce only: its every segment starts and ends at the same place of a
  // program's vector, so a segment's final value overwrites only its own input, read before.
  s.in_place = p.contains("in_place") && p.at("in_place").get<bool>();
  s.ranks = Ranks{.n = s.grid.total(), .channels = 1, .positions = 1};
  if (get_string(p, "ranks") == "sips") {
    // NCCL's layout: a rank per SIP, channel c of every rank on its PE c (cube-major), each
    // channel the algorithm over the SIPs on its own slice of the data.
    const std::int64_t positions = s.grid.pes * s.grid.cubes;
    if (s.grid.sips < 2)
      throw UsageError(
          "ranks=sips needs a system of several SIPs, but system.sips.count is 1; "
          "use ranks=programs");
    if (s.channels > positions)
      throw UsageError("channels=" + std::to_string(s.channels) +
                       " with ranks=sips runs a channel on each of the first " +
                       std::to_string(s.channels) + " PEs of every SIP, but a SIP has " +
                       std::to_string(positions) + "; use channels=1 to " +
                       std::to_string(positions));
    if (s.algorithm == "mesh2d")
      throw UsageError(
          "algorithm=mesh2d runs rings along each cube's mesh, but with ranks=sips "
          "the ranks are SIPs; use another algorithm (" +
          [&] {
            std::string names;
            for (const std::string& a : algorithm_names(collective))
              if (a != "mesh2d") names += (names.empty() ? "" : ", ") + a;
            return names;
          }() +
          ")");
    s.ranks = Ranks{.n = s.grid.sips, .channels = s.channels, .positions = positions};
    s.plan_grid = GridShape{.pes = 1, .cubes = 1, .sips = s.grid.sips};
    s.plan_channels = 1;
  }
  if (s.algorithm == "switch") require_reducing_switch(sim.config(), s.plan_grid);
  const std::int64_t elems = s.bytes / 4, block = elems / s.ranks.n;
  s.in_elems = collective == Collective::all_gather ? block : elems;
  s.out_elems = collective == Collective::reduce_scatter ? block : elems;
  plan_checked(sim.config(), s);
  place_buffers(sim, s);
  return s;
}

// The collective's time, its NCCL bandwidths and the model's time, and how the data was cut.
void report(Outcome& o, Simulation& sim, const Setup& s, emu::Tick t, emu::Tick model) {
  const std::int64_t n = s.ranks.n;
  // A rank's buffer: its program's vector, or with ranks=sips its channels' together.
  const std::int64_t rank_bytes = s.bytes * s.ranks.channels;
  const double seconds = static_cast<double>(t) * 1e-12;
  const double algbw = seconds > 0 ? static_cast<double>(rank_bytes) / seconds / 1e9 : 0.0;
  const double share = static_cast<double>(n - 1) / static_cast<double>(n);
  const double factor = s.collective == Collective::all_reduce  ? 2.0 * share
                        : s.collective == Collective::broadcast ? 1.0
                                                                : share;
  const bool reduces =
      s.collective == Collective::all_reduce || s.collective == Collective::reduce_scatter;
  o.useful_bytes = static_cast<std::uint64_t>(rank_bytes * n);
  o.useful_flops = reduces ? static_cast<std::uint64_t>((n - 1) * (rank_bytes / 4)) : 0;
  o.details = {{"algorithm", s.algorithm},
               {"buffer", buffer_name(s.buffer)},
               {"in_place", s.in_place},
               {"programs", s.grid.str()},
               {"ranks", s.ranks.positions > 1 ? "sips" : "programs"},
               {"rank_count", n},
               {"bytes_per_pe", s.bytes},
               {"bytes_per_rank", rank_bytes},
               {"block_bytes", s.plan.block * 4},
               {"message_bytes", std::max(s.pipelining.message, s.pipelining.piece) * 4},
               {"piece_bytes", s.pipelining.piece * 4},
               {"channels", s.plan.directions * s.ranks.channels},
               {"chunk_bytes", s.pipelining.chunk * 4},
               {"rows_in_flight_target", s.pipelining.depth},
               {"slots_per_channel",
                {{"fewest", s.plan.windows.fewest_slots},
                 {"most", s.plan.windows.most_slots},
                 {"limited_to", s.plan.windows.slot_cap}}},
               {"rows", (s.plan.segment + s.pipelining.chunk - 1) / s.pipelining.chunk},
               {"row_stagger", s.pipelining.stagger},
               {"step_spacing", s.pipelining.spacing},
               {"loads_ahead", s.pipelining.lookahead},
               {"store_budget_bytes", s.pipelining.store_budget},
               {"sram_bound_bytes", s.sram_bound},
               {"slot_memory", slot_memory(sim.config().messages)},
               {"collective_time_ps", t},
               {"algbw_GBps", algbw},
               {"busbw_GBps", algbw * factor},
               {"model_time_ps", model},
               {"model_note",
                "alpha-beta time of the schedule from the routes, ports, slots, credits and "
                "vector unit (components/collectives/alpha_beta_model.hpp); exact on an idle "
                "system whose routes share no links but their end ports, with SRAM slots and "
                "buffer=sram"}};
  if (!s.plan.levels.empty()) o.details["ring_sizes"] = s.plan.levels;
}

// Sums of n values of Fill::signed_unit (mean square kSignedUnitMeanSquare): the scale is
// their standard deviation sqrt(n E[x^2]); each of the n-1 f32 additions errs by at most
// 2^-24 times a partial sum, which stays within about 4 scales, and the result is rounded
// once, in whatever order the algorithm adds. The other collectives move values unchanged:
// exact.
void verify(Outcome& o, const Simulation& sim, const Setup& s) {
  const std::int64_t n = s.ranks.n;
  const std::uint64_t seed = sim.options().seed;
  const bool reduces =
      s.collective == Collective::all_reduce || s.collective == Collective::reduce_scatter;
  const double scale = std::sqrt(static_cast<double>(n) * kSignedUnitMeanSquare);
  const double tolerance =
      reduces ? unit_roundoff(DType::f32) * (1.0 + 4.0 * static_cast<double>(n - 1)) : 0.0;
  ErrorCheck check(reduces ? scale : min_normal(DType::f32));
  const std::int64_t outputs = s.ranks.programs() * s.out_elems;
  const auto sample = sample_indices(outputs, elements_to_check(outputs, reduces ? n : 1), seed);
  for (const std::int64_t f : sample) {
    const std::int64_t g = s.ranks.nth(f / s.out_elems), i = f % s.out_elems;
    check.add(f, read_element(sim, s.out[static_cast<std::size_t>(g)], i, DType::f32),
              expected(s.collective, seed, s.ranks, s.plan.block, g, i));
  }
  set_verification(o, check, tolerance,
                   std::to_string(sample.size()) + " of " + std::to_string(outputs) +
                       " output elements against an fp64 host reference");
}

Outcome run_collective(Simulation& sim, const Params& p, Collective collective) {
  const Setup s = setup_collective(sim, p, collective);
  Clock clock;
  clock.begin.assign(static_cast<std::size_t>(s.grid.total()), 0);
  clock.end.assign(static_cast<std::size_t>(s.grid.total()), 0);
  const ScheduleArgs args{.schedule = s.plan.schedule.get(),
                          .buffer = s.buffer,
                          .in = s.in,
                          .out = s.out,
                          .pipelining = s.pipelining,
                          .slot_limit = s.plan.windows.slot_cap,
                          .clock = &clock};
  Outcome o;
  for (std::int64_t i = 0; i < s.ranks.programs(); ++i) {
    const auto g = static_cast<std::size_t>(s.ranks.nth(i));
    o.inputs.push_back({s.in[g], static_cast<std::uint64_t>(s.in_elems) * 4});
    o.outputs.push_back({s.out[g], static_cast<std::uint64_t>(s.out_elems) * 4});
  }
  const MessageSlotLimit limit(sim, s.plan.windows.slot_cap);  // the slots that fitted
  o.run = sim.launch(run_schedule, args);
  report(o, sim, s, clock.elapsed(), model_time(sim, s.grid, args));
  if (sim.options().timing_only)
    o.details["verification"] = "skipped (timing-only run)";
  else
    verify(o, sim, s);
  return o;
}

ParamSpec bytes_param(const char* help, std::int64_t default_value = 65536) {
  return int_param("bytes_per_pe", default_value, 4, kMaxBytes, help);
}

ParamSpec buffer_param(const char* default_value = "sram") {
  return choice_param("buffer", default_value, {"sram", "hbm"},
                      "where the data is during the collective: the PE's SRAM (loaded before "
                      "and stored after, untimed) or HBM (streamed through SRAM row by row: "
                      "each row loaded ahead of its first use and stored once final, timed and "
                      "overlapped with the messages)");
}

ParamSpec channels_param() {
  return int_param("channels", 1, 1, 64,
                   "rings or trees the data is split over, times the algorithm's own (NCCL's "
                   "channels): 2 runs a ring both ways or the double binary tree; more than "
                   "the algorithm places apart is refused. With ranks=sips: the PEs of each "
                   "SIP that each run the algorithm on their own bytes_per_pe");
}

ParamSpec ranks_param() {
  return choice_param("ranks", "programs", {"programs", "sips"},
                      "who the collective is between: every program, or the SIPs (NCCL's GPUs): "
                      "each SIP's first `channels` PEs each run the algorithm over the SIPs on "
                      "their own bytes_per_pe, as NCCL's channels each run a ring on an SM; "
                      "busbw is then per SIP, of channels x bytes_per_pe");
}

ParamSpec chunk_param() {
  return int_param("chunk_bytes", 0, 0, kMaxBytes,
                   "bytes of each segment a row of the pipeline carries (0: one message slot, "
                   "system.messages.slot_KiB); the SRAM a collective needs grows with it, not "
                   "with bytes_per_pe, when buffer=hbm");
}

// The collective's `algorithm` parameter: the algorithms implementing it, the first the default.
ParamSpec algorithm_param(Collective c) {
  return choice_param("algorithm", default_algorithm(c), algorithm_names(c), algorithm_help(c));
}

KernelInfo collective_info(Collective c, std::string description, std::vector<ParamSpec> params) {
  return {.name = collective_name(c),
          .description = std::move(description),
          .params = std::move(params),
          .run = [c](Simulation& sim, const Params& p) { return run_collective(sim, p, c); },
          .default_metric = "details.busbw_GBps"};
}

}  // namespace

KernelInfo allreduce_info() {
  return collective_info(
      Collective::all_reduce,
      "All-reduce (sum, f32) of every program's vector over tl.send/tl.recv; details give "
      "algbw and busbw as NCCL defines them and the alpha-beta time",
      {algorithm_param(Collective::all_reduce),
       bytes_param("bytes of each program's vector (f32), a multiple of 4 x programs x "
                   "channels (of 4 for the trees)"),
       buffer_param(), chunk_param(), channels_param(), ranks_param(),
       bool_param("in_place", false,
                  "write each program's result over its input (NCCL's sendbuff == recvbuff): "
                  "one buffer of bytes_per_pe per program instead of two")});
}

KernelInfo reduce_scatter_info() {
  return collective_info(Collective::reduce_scatter,
                         "Reduce-scatter (sum, f32): program g gets block g of the sum of every "
                         "program's vector",
                         {algorithm_param(Collective::reduce_scatter),
                          bytes_param("bytes of each program's input vector (f32; program g "
                                      "keeps the sum of block g), a multiple of 4 x programs"),
                          buffer_param(), chunk_param(), channels_param(), ranks_param()});
}

KernelInfo allgather_info() {
  return collective_info(Collective::all_gather,
                         "All-gather (f32): every program gets every program's block, in "
                         "program order",
                         {algorithm_param(Collective::all_gather),
                          bytes_param("bytes of each program's gathered output (f32; a block "
                                      "of bytes_per_pe / programs from each), a multiple of 4 "
                                      "x programs"),
                          buffer_param(), chunk_param(), channels_param(), ranks_param()});
}

KernelInfo broadcast_info() {
  return collective_info(Collective::broadcast,
                         "Broadcast (f32): program 0's vector to every program",
                         {algorithm_param(Collective::broadcast),
                          bytes_param("bytes of the vector (f32), a multiple of 4"), buffer_param(),
                          chunk_param(), channels_param(), ranks_param()});
}

KernelInfo alltoall_info() {
  return collective_info(
      Collective::all_to_all,
      "All-to-all (f32): block j of program g's vector goes to program j, as its block g",
      {algorithm_param(Collective::all_to_all),
       // Defaults that leave a PE's SRAM to the slots of its n-1 channels in (PE SRAM slots).
       bytes_param("bytes of each program's input (f32; one block for each program), a "
                   "multiple of 4 x programs",
                   16384),
       buffer_param("hbm"), chunk_param(), channels_param(), ranks_param()});
}

}  // namespace cubesim::kernels::collectives
