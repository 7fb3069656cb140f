#include "kernels/collectives/collective.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "components/topology/graph.hpp"
#include "kernels/harness/host_array.hpp"
#include "kernels/harness/params.hpp"
#include "kernels/harness/random_inputs.hpp"
#include "kernels/harness/requirements.hpp"
#include "kernels/harness/tolerances.hpp"
#include "kernels/harness/verification.hpp"
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
  // The same cycle at each level: PEs on their cube's mesh, cubes on the UCIe grid, SIPs on
  // the inter-SIP grid, where the launch covers the whole level and it is a grid; otherwise
  // in index order (a ring or all-to-all topology links neighbours in index order already).
  const auto cycle = [](bool whole, bool grid_topology, std::int64_t n, std::int64_t x,
                        std::int64_t y) {
    if (whole && grid_topology) return cube_cycle(x, y);
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
  };
  const auto& noc = config.cube.noc;
  const std::vector<std::int64_t> pes =
      cycle(grid.pes == static_cast<std::int64_t>(config.cube.pes), true, grid.pes, noc.mesh_x,
            noc.mesh_y);
  const std::vector<std::int64_t> cubes =
      cycle(grid.cubes == static_cast<std::int64_t>(config.cubes_per_sip),
            components::has_grid(config.ucie.topology), grid.cubes, config.ucie.mesh_x,
            config.ucie.mesh_y);
  const std::vector<std::int64_t> sips =
      cycle(grid.sips == static_cast<std::int64_t>(config.sips),
            components::has_grid(config.inter_sip.topology), grid.sips, config.inter_sip.grid_x,
            config.inter_sip.grid_y);
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(grid.total()));
  for (std::int64_t sip : sips)
    for (std::int64_t cube : cubes)
      for (std::int64_t pe : pes) order.push_back((sip * grid.cubes + cube) * grid.pes + pe);
  return order;
}

std::vector<Groups> ring_levels(const std::string& algorithm,
                                const components::SystemConfig& config, GridShape grid) {
  const std::vector<std::int64_t> order = ring_order(config, grid);
  const std::int64_t pes = grid.pes, cubes = grid.cubes, sips = grid.sips;
  std::vector<Groups> levels;
  auto add = [&](Groups groups) {
    if (groups.front().size() > 1) levels.push_back(std::move(groups));
  };
  auto at = [&](std::int64_t sip, std::int64_t cube, std::int64_t q) {
    return order[static_cast<std::size_t>((sip * cubes + cube) * pes + q)];
  };
  if (algorithm == "hierarchical") {
    Groups in_cube, in_sip, across;
    for (std::int64_t s = 0; s < sips; ++s)
      for (std::int64_t c = 0; c < cubes; ++c) {
        auto& g = in_cube.emplace_back();
        for (std::int64_t q = 0; q < pes; ++q) g.push_back(at(s, c, q));
      }
    for (std::int64_t s = 0; s < sips; ++s)
      for (std::int64_t q = 0; q < pes; ++q) {
        auto& g = in_sip.emplace_back();
        for (std::int64_t c = 0; c < cubes; ++c) g.push_back(at(s, c, q));
      }
    for (std::int64_t c = 0; c < cubes; ++c)
      for (std::int64_t q = 0; q < pes; ++q) {
        auto& g = across.emplace_back();
        for (std::int64_t s = 0; s < sips; ++s) g.push_back(at(s, c, q));
      }
    add(std::move(in_cube));
    add(std::move(in_sip));
    add(std::move(across));
  } else if (algorithm == "mesh2d") {
    const std::int64_t x = config.cube.noc.mesh_x, y = config.cube.noc.mesh_y;
    if (pes != x * y)
      throw UsageError("mesh2d runs over whole cube meshes, but the grid has " +
                       std::to_string(pes) + " PEs per cube of " + std::to_string(x * y) +
                       "; use algorithm=ring or hierarchical");
    const std::int64_t all_cubes = cubes * sips;
    Groups rows, columns, across;
    for (std::int64_t c = 0; c < all_cubes; ++c) {
      for (std::int64_t r = 0; r < y; ++r) {
        auto& g = rows.emplace_back();
        for (std::int64_t i = 0; i < x; ++i) g.push_back(c * pes + r * x + i);
      }
      for (std::int64_t i = 0; i < x; ++i) {
        auto& g = columns.emplace_back();
        for (std::int64_t r = 0; r < y; ++r) g.push_back(c * pes + r * x + i);
      }
    }
    // Across cubes in the ring's order of cubes (single hops on a grid of cubes or SIPs).
    for (std::int64_t q = 0; q < pes; ++q) {
      auto& g = across.emplace_back();
      for (std::int64_t c = 0; c < all_cubes; ++c)
        g.push_back(order[static_cast<std::size_t>(c * pes)] / pes * pes + q);
    }
    add(std::move(rows));
    add(std::move(columns));
    add(std::move(across));
  } else {
    add({order});
  }
  if (levels.empty()) levels.push_back({order});  // one program
  return levels;
}

Plan make_plan(const components::SystemConfig& cfg, GridShape grid, Collective collective,
               const std::string& algorithm, std::int64_t bytes) {
  const std::int64_t n = grid.total(), elems = bytes / 4;
  const std::vector<std::int64_t> order = ring_order(cfg, grid);
  Plan p;
  if (collective == Collective::all_to_all) {
    p.block = elems / n;
    p.segment = p.block;
    p.step_bytes = algorithm == "direct" ? bytes : p.block * 4;
    p.schedule = all_to_all(order, p.block, algorithm == "direct");
    p.channels_in = n - 1;
  } else if (collective == Collective::broadcast || algorithm == "tree") {
    p.block = elems;
    p.segment = elems;
    p.step_bytes = bytes;
    p.schedule =
        tree(collective, algorithm == "tree" ? binary_tree(order, 0) : chain(order), elems);
    p.channels_in = algorithm == "tree" ? 3 : 1;  // two children and a parent
  } else {
    const int dirs = algorithm == "bidir_ring" ? 2 : 1;
    std::vector<Groups> levels = ring_levels(algorithm, cfg, grid);
    for (const Groups& l : levels) {
      const auto m = static_cast<std::int64_t>(l.front().size());
      p.levels.push_back(m);
      p.channels_in += m > 2 ? dirs : 1;  // from the one or two ring neighbours
    }
    p.block = elems / n;
    p.segment = p.block / dirs;
    p.step_bytes = bytes / p.levels.front();
    p.directions = dirs;
    p.schedule = rings(collective, std::move(levels), p.block, dirs);
  }
  p.piece =
      std::min<std::int64_t>(static_cast<std::int64_t>(cfg.messages.slot_bytes / 4), p.segment);
  return p;
}

std::int64_t element_multiple(Collective collective, const std::string& algorithm, GridShape grid) {
  if (collective == Collective::broadcast || algorithm == "tree") return 1;
  return grid.total() * (algorithm == "bidir_ring" ? 2 : 1);
}

std::uint64_t plan_sram_bytes(const components::SystemConfig& cfg, const Plan& plan,
                              Collective collective, Buffer buffer, std::int64_t bytes) {
  const auto& m = cfg.messages;
  const std::uint64_t slots_in_sram =
      m.memory == components::SlotMemory::pe_sram
          ? static_cast<std::uint64_t>(plan.channels_in) * m.slots * m.slot_bytes
          : 0;
  const auto working =
      static_cast<std::uint64_t>(2 * plan.step_bytes + 4 * plan.piece * 4 * plan.directions);
  // A ring all-reduce keeps the partial sums it passes on in its reduce-scatter until its
  // all-gather replaces them (run_schedule frees a segment after its last use), so with
  // buffer=hbm too it holds nearly the whole vector.
  const bool whole =
      buffer == Buffer::sram || (collective == Collective::all_reduce && !plan.levels.empty());
  const std::uint64_t resident =
      whole ? static_cast<std::uint64_t>(collective == Collective::all_to_all ? 2 * bytes : bytes)
            : 0;
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
        if (op.kind != OpKind::send) peers.push_back(op.peer);
    }
    std::sort(peers.begin(), peers.end());
    cube_channels +=
        static_cast<std::uint64_t>(std::unique(peers.begin(), peers.end()) - peers.begin());
    most = std::max(most, cube_channels);
  }
  return most;
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
    case Collective::broadcast:
      return "broadcast";
    case Collective::all_to_all:
      return "alltoall";
  }
  return "?";
}

const char* slot_memory(const components::MessagesConfig& m) {
  return components::slot_memory_name(m.memory);
}

// Element i of program g's output, from the inputs.
double expected(Collective c, std::uint64_t seed, std::int64_t n, std::int64_t block,
                std::int64_t g, std::int64_t i) {
  double ref = 0;
  switch (c) {
    case Collective::all_reduce:
      for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, q, i);
      break;
    case Collective::reduce_scatter:
      for (std::int64_t q = 0; q < n; ++q) ref += input_value(seed, q, g * block + i);
      break;
    case Collective::all_gather:
      ref = input_value(seed, i / block, i % block);
      break;
    case Collective::broadcast:
      ref = input_value(seed, 0, i);
      break;
    case Collective::all_to_all:
      ref = input_value(seed, i / block, g * block + i % block);
      break;
  }
  return ref;
}

Outcome run_collective(Simulation& sim, const Params& p, Collective collective) {
  require_hardware_grid(sim, collective_name(collective),
                        "a collective moves data between the programs of every PE");
  const auto& cfg = sim.config();
  const GridShape grid = hardware_grid(cfg);
  const std::int64_t n = grid.total();
  const std::string algorithm = get_string(p, "algorithm");
  const Buffer buffer = get_string(p, "buffer") == "hbm" ? Buffer::hbm : Buffer::sram;
  const int dirs = algorithm == "bidir_ring" ? 2 : 1;
  const std::int64_t bytes = get_int(p, "bytes_per_pe");
  const std::int64_t multiple = element_multiple(collective, algorithm, grid);
  if (multiple == 1)
    require_divisible("bytes_per_pe", bytes, 4, "4 bytes (f32 elements)");
  else
    require_divisible("bytes_per_pe", bytes, 4 * multiple,
                      "4 bytes x " + grid.str() + (dirs == 2 ? " x 2 directions" : "") +
                          " (every program's data is cut into one block per program" +
                          (dirs == 2 ? ", each in two halves" : "") + ")");
  const Plan plan = make_plan(cfg, grid, collective, algorithm, bytes);
  const std::int64_t block = plan.block, piece = plan.piece;
  const auto& m = cfg.messages;
  // buffer=hbm is worth suggesting only where it needs less SRAM than a PE has (a ring keeps a
  // piece of every segment in SRAM either way).
  const bool hbm_fits =
      buffer == Buffer::sram &&
      plan_sram_bytes(cfg, plan, collective, Buffer::hbm, bytes) <= cfg.pe.sram_bytes;
  require_sram(
      cfg, plan_sram_bytes(cfg, plan, collective, buffer, bytes),
      std::string(collective_name(collective)) + " of " + std::to_string(bytes) +
          " bytes per PE with algorithm=" + algorithm +
          " buffer=" + (buffer == Buffer::sram ? "sram" : "hbm"),
      std::string(hbm_fits ? "use buffer=hbm, or fewer bytes_per_pe" : "use fewer bytes_per_pe") +
          (m.memory == components::SlotMemory::pe_sram ? ", or message slots outside the PE (--set "
                                                         "system.messages.memory=cube_sram or hbm)"
                                                       : ""));

  const std::int64_t elems = bytes / 4;
  const std::int64_t in_elems = collective == Collective::all_gather ? block : elems;
  const std::int64_t out_elems = collective == Collective::reduce_scatter ? block : elems;
  if (m.memory != components::SlotMemory::pe_sram)
    require_message_slots(cfg, most_channels_into_a_cube(*plan.schedule, grid.pes),
                          static_cast<std::uint64_t>(grid.pes * (in_elems + out_elems)) * 4,
                          std::string(collective_name(collective)) +
                              " with algorithm=" + algorithm + " and slots in " + slot_memory(m));
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

  Clock clock;
  clock.begin.assign(static_cast<std::size_t>(n), 0);
  clock.end.assign(static_cast<std::size_t>(n), 0);
  const ScheduleArgs args{.schedule = plan.schedule.get(),
                          .buffer = buffer,
                          .in = in,
                          .out = out,
                          .piece = piece,
                          .window = m.slots,
                          .clock = &clock};
  Outcome o;
  o.run = sim.launch(run_schedule, args);
  const emu::Tick t = clock.elapsed();
  const emu::Tick model = model_time(sim, grid, args);
  const double seconds = static_cast<double>(t) * 1e-12;
  const double algbw = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  const double share = static_cast<double>(n - 1) / static_cast<double>(n);
  const double factor = collective == Collective::all_reduce  ? 2.0 * share
                        : collective == Collective::broadcast ? 1.0
                                                              : share;
  const bool reduces =
      collective == Collective::all_reduce || collective == Collective::reduce_scatter;
  o.useful_bytes = static_cast<std::uint64_t>(bytes * n);
  o.useful_flops = reduces ? static_cast<std::uint64_t>((n - 1) * elems) : 0;
  o.details = {{"algorithm", algorithm},
               {"buffer", buffer == Buffer::sram ? "sram" : "hbm"},
               {"programs", grid.str()},
               {"bytes_per_pe", bytes},
               {"block_bytes", block * 4},
               {"message_bytes", piece * 4},
               {"slot_memory", slot_memory(m)},
               {"collective_time_ps", t},
               {"algbw_GBps", algbw},
               {"busbw_GBps", algbw * factor},
               {"model_time_ps", model},
               {"model_note",
                "alpha-beta time of the schedule from the routes, ports, slots, credits and "
                "vector unit (kernels/collectives/schedule.hpp); exact on an idle system "
                "whose routes share no links but their end ports, with SRAM slots and "
                "buffer=sram"}};
  if (!plan.levels.empty()) o.details["ring_sizes"] = plan.levels;
  if (timing_only) {
    o.details["verification"] = "skipped (timing-only run)";
    return o;
  }

  // Sums of n values of Fill::signed_unit (mean square kSignedUnitMeanSquare): the scale is
  // their standard deviation sqrt(n E[x^2]); each of the n-1 f32 additions errs by at most
  // 2^-24 times a partial sum, which stays within about 4 scales, and the result is rounded
  // once, in whatever order the algorithm adds. The other collectives move values unchanged:
  // exact.
  const double scale = std::sqrt(static_cast<double>(n) * kSignedUnitMeanSquare);
  const double tolerance =
      reduces ? unit_roundoff(DType::f32) * (1.0 + 4.0 * static_cast<double>(n - 1)) : 0.0;
  ErrorCheck check(reduces ? scale : min_normal(DType::f32));
  const std::int64_t outputs = n * out_elems;
  const auto sample = sample_indices(outputs, elements_to_check(outputs, reduces ? n : 1), seed);
  for (const std::int64_t f : sample) {
    const std::int64_t g = f / out_elems, i = f % out_elems;
    check.add(f, read_element(sim, out[static_cast<std::size_t>(g)], i, DType::f32),
              expected(collective, seed, n, block, g, i));
  }
  set_verification(o, check, tolerance,
                   std::to_string(sample.size()) + " of " + std::to_string(outputs) +
                       " output elements against an fp64 host reference");
  return o;
}

ParamSpec bytes_param(const char* help, std::int64_t default_value = 65536) {
  return int_param("bytes_per_pe", default_value, 4, kMaxBytes, help);
}

ParamSpec buffer_param(const char* default_value = "sram") {
  return choice_param("buffer", default_value, {"sram", "hbm"},
                      "where the data is during the collective: the PE's SRAM (loaded before "
                      "and stored after, untimed) or HBM (loaded when first needed and stored "
                      "once final, timed)");
}

ParamSpec ring_algorithms(bool tree) {
  std::vector<std::string> names = {"ring", "bidir_ring", "hierarchical", "mesh2d"};
  std::string help =
      "ring: one ring of every program; bidir_ring: half the data each way; hierarchical: "
      "rings within each cube, then across the cubes of a SIP, then across SIPs; mesh2d: "
      "rings along each cube's mesh rows, then its columns, then across cubes";
  if (tree) {
    names.push_back("tree");
    help += "; tree: a pipelined reduce up a binary tree and broadcast down it";
  }
  return choice_param("algorithm", "ring", names, help);
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
      {ring_algorithms(true),
       bytes_param("bytes of each program's vector (f32), a multiple of 4 x programs (of 4 "
                   "for tree)"),
       buffer_param()});
}

KernelInfo reduce_scatter_info() {
  return collective_info(Collective::reduce_scatter,
                         "Reduce-scatter (sum, f32): program g gets block g of the sum of every "
                         "program's vector",
                         {ring_algorithms(false),
                          bytes_param("bytes of each program's input vector (f32; program g "
                                      "keeps the sum of block g), a multiple of 4 x programs"),
                          buffer_param()});
}

KernelInfo allgather_info() {
  return collective_info(Collective::all_gather,
                         "All-gather (f32): every program gets every program's block, in "
                         "program order",
                         {ring_algorithms(false),
                          bytes_param("bytes of each program's gathered output (f32; a block "
                                      "of bytes_per_pe / programs from each), a multiple of 4 "
                                      "x programs"),
                          buffer_param()});
}

KernelInfo broadcast_info() {
  return collective_info(
      Collective::broadcast, "Broadcast (f32): program 0's vector to every program",
      {choice_param("algorithm", "ring", {"ring", "tree"},
                    "ring: a pipelined chain along the ring of every program; tree: a "
                    "pipelined binary tree"),
       bytes_param("bytes of the vector (f32), a multiple of 4"), buffer_param()});
}

KernelInfo alltoall_info() {
  return collective_info(
      Collective::all_to_all,
      "All-to-all (f32): block j of program g's vector goes to program j, as its block g",
      {choice_param("algorithm", "pairwise", {"pairwise", "direct"},
                    "pairwise: n-1 steps, in step i every program sends to the one i+1 ahead "
                    "on the ring; direct: every message at once"),
       // Defaults that leave a PE's SRAM to the slots of its n-1 channels in (PE SRAM slots).
       bytes_param("bytes of each program's input (f32; one block for each program), a "
                   "multiple of 4 x programs",
                   16384),
       buffer_param("hbm")});
}

}  // namespace cubesim::kernels::collectives
