#include "kernels/collectives/collective.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "triton_emu/errors.hpp"

namespace cubesim::kernels::collectives {

namespace {

// A cycle through an x by y mesh (PE i on node (i % x, i / x)) in single hops: along row 0,
// then snaking over columns 1 .. x-1 of the other rows, and back up column 0. It closes with
// one hop when y is even; for an odd y and an even x the same walk on the transposed mesh.
// With both odd no such cycle exists: a snake, whose last step back to PE 0 is longer.
std::vector<std::int64_t> cube_cycle(std::int64_t x, std::int64_t y) {
  std::vector<std::int64_t> out;
  auto walk = [&](std::int64_t cols, std::int64_t rows, auto pe) {
    for (std::int64_t c = 0; c < cols; ++c) out.push_back(pe(c, 0));
    for (std::int64_t r = 1; r < rows; ++r)
      for (std::int64_t i = 0; i + 1 < cols; ++i)
        out.push_back(pe(r % 2 == 1 ? cols - 1 - i : 1 + i, r));
    for (std::int64_t r = rows - 1; r >= 1; --r) out.push_back(pe(0, r));
  };
  if (x >= 2 && y >= 2 && y % 2 == 0) {
    walk(x, y, [x](std::int64_t c, std::int64_t r) { return r * x + c; });
  } else if (x >= 2 && y >= 2 && x % 2 == 0) {
    walk(y, x, [x](std::int64_t c, std::int64_t r) { return c * x + r; });
  } else {
    for (std::int64_t r = 0; r < y; ++r)
      for (std::int64_t i = 0; i < x; ++i) out.push_back(r * x + (r % 2 == 0 ? i : x - 1 - i));
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> ring_order(const components::SystemConfig& config, GridShape grid) {
  std::vector<std::int64_t> in_cube;
  if (grid.pes == static_cast<std::int64_t>(config.cube.pes))
    in_cube = cube_cycle(config.cube.noc.mesh_x, config.cube.noc.mesh_y);
  else
    for (std::int64_t i = 0; i < grid.pes; ++i) in_cube.push_back(i);
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(grid.total()));
  for (std::int64_t cube = 0; cube < grid.cubes * grid.sips; ++cube)
    for (std::int64_t pe : in_cube) order.push_back(cube * grid.pes + pe);
  return order;
}

emu::Tick ring_model_time(Simulation& sim, GridShape grid, const RingArgs& a) {
  const auto& order = *a.order;
  const auto n = static_cast<std::int64_t>(order.size());
  if (n < 2) return 0;
  const auto& cfg = sim.config();
  auto& sys = sim.system();
  const auto& topo = sys.network().topology();
  const auto& links = topo.links();
  auto global_pe = [&](std::int64_t g) {
    const std::int64_t pe = g % grid.pes, cube = (g / grid.pes) % grid.cubes,
                       sip = g / (grid.pes * grid.cubes);
    return static_cast<std::uint32_t>((sip * cfg.cubes_per_sip + cube) * cfg.cube.pes + pe);
  };
  struct Edge {
    emu::Tick alpha = 0;                                        // hop latencies
    emu::Bandwidth beta = emu::Bandwidth::from_bytes_per_s(1);  // the slowest link
  };
  auto edge_of = [&](std::uint32_t from, std::uint32_t to) {
    const auto route = topo.pe_to_pe(from, to);
    Edge e;
    e.alpha = std::accumulate(route.latency.begin(), route.latency.end(), emu::Tick{0});
    e.beta = links[route.links.front()].bandwidth;
    for (auto l : route.links)
      if (links[l].bandwidth.bytes_per_s() < e.beta.bytes_per_s()) e.beta = links[l].bandwidth;
    return e;
  };
  const int dirs = a.directions;
  auto mod = [n](std::int64_t x) { return ((x % n) + n) % n; };
  auto sign = [](int d) { return d == 0 ? std::int64_t{1} : std::int64_t{-1}; };
  // into[d][p]: the edge from position p's upstream in direction d to p. port[p]: the
  // bandwidth of p's injection port, which its messages and its credits leave through.
  std::vector<Edge> into[2], back[2];  // back[d][p]: p's credits to its upstream
  std::vector<emu::Bandwidth> port(static_cast<std::size_t>(n),
                                   emu::Bandwidth::from_bytes_per_s(1));
  for (int d = 0; d < dirs; ++d) {
    into[d].resize(static_cast<std::size_t>(n));
    back[d].resize(static_cast<std::size_t>(n));
    for (std::int64_t p = 0; p < n; ++p) {
      const std::int64_t from = mod(p - sign(d));
      const std::uint32_t sender = global_pe(order[static_cast<std::size_t>(from)]),
                          receiver = global_pe(order[static_cast<std::size_t>(p)]);
      into[d][static_cast<std::size_t>(p)] = edge_of(sender, receiver);
      back[d][static_cast<std::size_t>(p)] = edge_of(receiver, sender);
      port[static_cast<std::size_t>(from)] =
          links[topo.pe_to_pe(sender, receiver).links.front()].bandwidth;
    }
  }
  const auto& m = cfg.messages;
  const bool pe_slots = m.memory == components::SlotMemory::pe_sram;
  const emu::Tick slot_latency = pe_slots ? m.pe_sram_latency : m.cube_sram_latency;
  const emu::Bandwidth slot_bw = pe_slots ? m.pe_sram_bandwidth : m.cube_sram_bandwidth;
  const std::int64_t half = a.block / dirs, pieces = (half + a.piece - 1) / a.piece;
  auto piece_len = [&](std::int64_t j) { return std::min(a.piece, half - j * a.piece); };
  const auto items = static_cast<std::size_t>(dirs * pieces);
  auto bytes_of = [&](std::size_t i) {
    return static_cast<std::uint64_t>(piece_len(static_cast<std::int64_t>(i) / dirs)) * 4;
  };

  // Per position: when its step starts, when its injection port is free, and when each item
  // of the step left it.
  std::vector<emu::Tick> start(static_cast<std::size_t>(n), 0), next(start.size());
  std::vector<emu::Tick> port_free(start.size(), 0);
  std::vector<emu::Tick> sent(start.size() * items);
  // Per channel (sender position, edge): when the credits of its messages are back, the
  // last `slots` of them; a message waits for the credit of the one `slots` before it.
  const int edges = n > 2 ? dirs : 1;
  std::vector<std::vector<emu::Tick>> credit_back(start.size() * static_cast<std::size_t>(edges),
                                                  std::vector<emu::Tick>(m.slots, 0));
  std::vector<std::uint64_t> sequence(credit_back.size(), 0);  // messages sent per channel
  std::vector<std::uint64_t> received(credit_back.size(), 0);  // messages read per channel
  auto steps = [&](std::int64_t count, bool reduce) {
    for (std::int64_t k = 0; k < count; ++k) {
      for (std::size_t p = 0; p < start.size(); ++p)  // every item leaves at the step's start
        for (std::size_t i = 0; i < items; ++i) {
          const std::size_t ch = p * static_cast<std::size_t>(edges) +
                                 (n > 2 ? i % static_cast<std::size_t>(dirs) : 0);
          const emu::Tick credit = credit_back[ch][sequence[ch]++ % m.slots];
          const emu::Tick at = std::max({start[p], port_free[p], credit});
          sent[p * items + i] = at;
          port_free[p] = at + port[p].transfer_time(bytes_of(i));
        }
      for (std::int64_t p = 0; p < n; ++p) {
        const auto pu = static_cast<std::size_t>(p);
        emu::Tick t = start[pu];
        emu::Tick edge_last[2] = {0, 0};  // the last arrival on each edge into p this step
        for (std::size_t i = 0; i < items; ++i) {
          const int d = static_cast<int>(i % static_cast<std::size_t>(dirs));
          const std::uint64_t bytes = bytes_of(i);
          const Edge& e = into[d][pu];
          const auto up = static_cast<std::size_t>(mod(p - sign(d)));
          // Pieces on one edge queue at its slowest link; two programs' two directions share
          // one edge.
          const int edge = n > 2 ? d : 0;
          const emu::Tick arrive =
              std::max(sent[up * items + i] + e.alpha + e.beta.transfer_time(bytes),
                       edge_last[edge] + e.beta.transfer_time(bytes));
          edge_last[edge] = arrive;
          t = std::max(arrive + slot_latency, t) + slot_latency + slot_bw.transfer_time(bytes);
          // The slot's credit leaves through p's port and travels back to the sender.
          const emu::Tick credit_leaves = std::max(t, port_free[pu]);
          port_free[pu] = credit_leaves + port[pu].transfer_time(m.credit_bytes);
          const Edge& ce = back[d][pu];
          const std::size_t ch =
              up * static_cast<std::size_t>(edges) + static_cast<std::size_t>(edge);
          credit_back[ch][received[ch]++ % m.slots] =
              credit_leaves + ce.alpha + ce.beta.transfer_time(m.credit_bytes);
          if (reduce)
            t += sys.vector_unit().time(
                static_cast<std::uint64_t>(piece_len(static_cast<std::int64_t>(i) / dirs)));
        }
        next[pu] = t;
      }
      start.swap(next);
    }
  };
  if (a.collective != Collective::all_gather) steps(n - 1, true);
  if (a.collective != Collective::reduce_scatter) steps(n - 1, false);
  return *std::max_element(start.begin(), start.end());
}

namespace {

constexpr std::int64_t kMaxBytes = std::int64_t{1} << 34;

// Element i of program g's input.
double input_value(std::uint64_t seed, std::int64_t g, std::int64_t i) {
  float v = 0;
  random_block(DType::f32, Fill::signed_unit, seed, static_cast<std::uint64_t>(g) + 1, i, 1,
               reinterpret_cast<std::byte*>(&v));
  return v;
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return "allreduce";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::all_gather:
      return "allgather";
  }
  return "?";
}

Outcome run_collective(Simulation& sim, const Params& p, Collective collective) {
  const auto& cfg = sim.config();
  const GridShape grid = hardware_grid(cfg);
  const std::int64_t n = grid.total();
  const std::string algorithm = get_string(p, "algorithm");
  const Buffer buffer = get_string(p, "buffer") == "hbm" ? Buffer::hbm : Buffer::sram;
  const int dirs = algorithm == "bidir_ring" ? 2 : 1;
  const std::int64_t bytes = get_int(p, "bytes_per_pe");
  require_divisible("bytes_per_pe", bytes, 4 * n * dirs,
                    "4 bytes x " + grid.str() + (dirs == 2 ? " x 2 directions" : "") +
                        " (every program's data is cut into one block per program" +
                        (dirs == 2 ? ", each in two halves" : "") + ")");
  const std::int64_t block = bytes / 4 / n;
  const auto& m = cfg.messages;
  const std::int64_t piece =
      std::min<std::int64_t>(static_cast<std::int64_t>(m.slot_bytes / 4), block / dirs);
  const std::uint64_t slots_in_sram =
      m.memory == components::SlotMemory::pe_sram ? 2ull * m.slots * m.slot_bytes : 0;
  const auto piece_bytes = static_cast<std::uint64_t>(piece) * 4;
  // Pieces in flight: carried, received and summed, per direction, plus the data itself.
  const std::uint64_t working = 4ull * static_cast<std::uint64_t>(dirs) * piece_bytes *
                                (static_cast<std::uint64_t>((block / dirs + piece - 1) / piece));
  const std::uint64_t resident = buffer == Buffer::sram ? static_cast<std::uint64_t>(bytes) : 0;
  require_sram(
      cfg, resident + working + slots_in_sram,
      std::string(collective_name(collective)) + " of " + std::to_string(bytes) +
          " bytes per PE with buffer=" + (buffer == Buffer::sram ? "sram" : "hbm"),
      buffer == Buffer::sram ? "use buffer=hbm, or fewer bytes_per_pe" : "use fewer bytes_per_pe");

  const bool all_gather = collective == Collective::all_gather;
  const std::int64_t in_elems = all_gather ? block : n * block;
  const std::int64_t out_elems = collective == Collective::reduce_scatter ? block : n * block;
  // Each program's data on its own cube's HBM, as a collective's buffers would be.
  std::vector<Ptr> in(static_cast<std::size_t>(n)), out(in.size());
  for (std::int64_t cube = 0; cube < grid.cubes * grid.sips; ++cube) {
    const auto sip = static_cast<std::uint32_t>(cube / grid.cubes);
    const auto within_sip = static_cast<std::uint32_t>(cube % grid.cubes);
    const Ptr in_base = sim.alloc(static_cast<std::uint64_t>(grid.pes * in_elems) * 4,
                                  Placement::on_cube(sip, within_sip));
    const Ptr out_base = sim.alloc(static_cast<std::uint64_t>(grid.pes * out_elems) * 4,
                                   Placement::on_cube(sip, within_sip));
    for (std::int64_t pe = 0; pe < grid.pes; ++pe) {
      in[static_cast<std::size_t>(cube * grid.pes + pe)] = in_base + pe * in_elems * 4;
      out[static_cast<std::size_t>(cube * grid.pes + pe)] = out_base + pe * out_elems * 4;
    }
  }
  const bool timing_only = sim.options().timing_only;
  const std::uint64_t seed = sim.options().seed;
  if (!timing_only) {
    std::vector<std::byte> buf(static_cast<std::size_t>(in_elems) * 4);
    for (std::int64_t g = 0; g < n; ++g) {
      random_block(DType::f32, Fill::signed_unit, seed, static_cast<std::uint64_t>(g) + 1, 0,
                   in_elems, buf.data());
      sim.write_bytes(in[static_cast<std::size_t>(g)], buf.data(), buf.size());
    }
  }

  const std::vector<std::int64_t> order = ring_order(cfg, grid);
  Clock clock;
  clock.begin.assign(static_cast<std::size_t>(n), 0);
  clock.end.assign(static_cast<std::size_t>(n), 0);
  RingArgs args{.collective = collective,
                .buffer = buffer,
                .directions = dirs,
                .in = in,
                .out = out,
                .block = block,
                .piece = piece,
                .window = m.slots,
                .order = &order,
                .clock = &clock};
  Outcome o;
  o.run = sim.launch(ring, args);
  const emu::Tick t = clock.elapsed();
  const emu::Tick model = ring_model_time(sim, grid, args);
  const double seconds = static_cast<double>(t) * 1e-12;
  const double algbw = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  const double factor = collective == Collective::all_reduce
                            ? 2.0 * static_cast<double>(n - 1) / static_cast<double>(n)
                            : static_cast<double>(n - 1) / static_cast<double>(n);
  o.useful_bytes = static_cast<std::uint64_t>(bytes * n);
  o.useful_flops =
      collective == Collective::all_gather ? 0 : static_cast<std::uint64_t>((n - 1) * block * n);
  o.details = {{"algorithm", algorithm},
               {"buffer", buffer == Buffer::sram ? "sram" : "hbm"},
               {"programs", grid.str()},
               {"bytes_per_pe", bytes},
               {"block_bytes", block * 4},
               {"message_bytes", piece * 4},
               {"slot_memory", m.memory == components::SlotMemory::pe_sram     ? "pe_sram"
                               : m.memory == components::SlotMemory::cube_sram ? "cube_sram"
                                                                               : "hbm"},
               {"collective_time_ps", t},
               {"algbw_GBps", algbw},
               {"busbw_GBps", algbw * factor},
               {"model_time_ps", model},
               {"model_note",
                "alpha-beta per ring step from the routes, slots and vector unit "
                "(kernels/collectives/collective.hpp); exact on an idle ring of one-packet "
                "messages in SRAM slots with buffer=sram"}};
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }

  // Sums of n values of Fill::signed_unit (mean square kSignedUnitMeanSquare): the scale is
  // their standard deviation sqrt(n E[x^2]); each of the n-1 f32 additions errs by at most
  // 2^-24 times a partial sum, which stays within about 4 scales, and the result is rounded
  // once. All-gather moves values unchanged: exact.
  const double scale = std::sqrt(static_cast<double>(n) * kSignedUnitMeanSquare);
  const double tolerance =
      all_gather ? 0.0 : unit_roundoff(DType::f32) * (1.0 + 4.0 * static_cast<double>(n - 1));
  ErrorCheck check(all_gather ? min_normal(DType::f32) : scale);
  const std::int64_t outputs = n * out_elems;
  const auto sample = sample_indices(outputs, elements_to_check(outputs, all_gather ? 1 : n), seed);
  for (const std::int64_t f : sample) {
    const std::int64_t g = f / out_elems, i = f % out_elems;
    double ref = 0;
    switch (collective) {
      case Collective::all_reduce:
        for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, q, i);
        break;
      case Collective::reduce_scatter:
        for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, q, g * block + i);
        break;
      case Collective::all_gather:
        ref = input_value(seed, i / block, i % block);
        break;
    }
    check.add(f, read_element(sim, out[static_cast<std::size_t>(g)], i, DType::f32), ref);
  }
  set_verification(o, check, tolerance,
                   std::to_string(sample.size()) + " of " + std::to_string(outputs) +
                       " output elements against an fp64 host reference");
  return o;
}

std::vector<ParamSpec> params(const char* bytes_help) {
  return {
      choice_param("algorithm", "ring", {"ring", "bidir_ring"},
                   "ring: one direction around a ring of every program; bidir_ring: half the "
                   "data each way"),
      int_param("bytes_per_pe", 65536, 4, kMaxBytes, bytes_help),
      choice_param("buffer", "sram", {"sram", "hbm"},
                   "where the data is during the collective: the PE's SRAM (loaded before and "
                   "stored after, untimed) or HBM (each step loads and stores what it needs)"),
  };
}

}  // namespace

KernelInfo allreduce_info() {
  return {.name = "allreduce",
          .description =
              "All-reduce (sum, f32) of every program's vector over tl.send/tl.recv; "
              "details give algbw and busbw as NCCL defines them and the alpha-beta "
              "time",
          .params = params("bytes of each program's vector (f32), a multiple of 4 x programs"),
          .run = [](Simulation& sim, const Params& p) {
            return run_collective(sim, p, Collective::all_reduce);
          }};
}

KernelInfo reduce_scatter_info() {
  return {.name = "reduce_scatter",
          .description =
              "Reduce-scatter (sum, f32): program g gets block g of the sum of every "
              "program's vector",
          .params = params("bytes of each program's input vector (f32; program g keeps the "
                           "sum of block g), a multiple of 4 x programs"),
          .run = [](Simulation& sim, const Params& p) {
            return run_collective(sim, p, Collective::reduce_scatter);
          }};
}

KernelInfo allgather_info() {
  return {.name = "allgather",
          .description =
              "All-gather (f32): every program gets every program's block, in "
              "program order",
          .params = params("bytes of each program's gathered output (f32; a block of "
                           "bytes_per_pe / programs from each), a multiple of 4 x programs"),
          .run = [](Simulation& sim, const Params& p) {
            return run_collective(sim, p, Collective::all_gather);
          }};
}

}  // namespace cubesim::kernels::collectives
