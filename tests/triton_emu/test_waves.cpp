// Logical grids: Triton's grid of any size, placed on PEs by the dispatcher's policy and run in
// waves (simulation.hpp's Grid, system.dispatch). Placements and start times are derived from
// the spec here, not copied from a run.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cubesim/cubesim.hpp>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "components/system/system.hpp"
#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::HasSubstr;

Spec tiny_dispatch(const std::string& policy, double cost_ns = 0.0) {
  return Spec::load(spec_path("tiny.json"))
      .with("system.dispatch", {{"policy", policy}, {"cost_ns", cost_ns}});
}

struct Ran {
  std::int64_t id[3];
  std::int64_t num[3];
  std::uint32_t pe;  // global
  emu::Tick start, end;
};

// Every program's ids, grid and PE, in the order the programs started.
std::vector<Ran> run_recording(Simulation& sim, Grid grid, std::int64_t vector_elements = 0) {
  std::vector<Ran> ran;
  sim.launch_on(grid, [&](tl::Context& tl) {
    Ran r{};
    for (int a = 0; a < 3; ++a) {
      r.id[a] = tl.program_id(a);
      r.num[a] = tl.num_programs(a);
    }
    r.pe = sim.system().global_pe(tl.pe());
    r.start = tl.now();
    if (vector_elements > 0) tl.full({vector_elements}, 1.0, DType::f32);
    r.end = tl.now();
    ran.push_back(r);
  });
  return ran;
}

std::int64_t linear(const Ran& r) {
  return (r.id[2] * r.num[1] + r.id[1]) * r.num[0] + r.id[0];
}

TEST(LogicalGrid, ProgramIdsAndNumProgramsDescribeTheLogicalGridAndPeTheHardware) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const auto ran = run_recording(sim, Grid{16, 4, 2});  // tiny: 2 cubes x 4 PEs
  ASSERT_EQ(ran.size(), 128u);
  std::set<std::int64_t> seen;
  for (const Ran& r : ran) {
    EXPECT_EQ(r.num[0], 16);
    EXPECT_EQ(r.num[1], 4);
    EXPECT_EQ(r.num[2], 2);
    EXPECT_TRUE(seen.insert(linear(r)).second);
    EXPECT_LT(r.pe, 8u);
  }
  EXPECT_EQ(seen.size(), 128u);
}

TEST(LogicalGrid, TheHardwareGridAndSubGridsKeepOneProgramPerPeAtItsCoordinates) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  for (const Grid g : {Grid{}, Grid{.pes = 3, .cubes = 2}}) {
    const auto ran = run_recording(sim, g);
    for (const Ran& r : ran) {
      const components::PeCoord c = sim.system().pe_coord(r.pe);
      EXPECT_EQ(r.id[0], c.pe);
      EXPECT_EQ(r.id[1], c.cube);
      EXPECT_EQ(r.id[2], c.sip);
      EXPECT_EQ(r.start, ran.front().start);  // all at once, no dispatcher
    }
  }
  const RunResult r = sim.launch([](tl::Context&) {});
  EXPECT_EQ(r.stats.dispatch, "hardware");
  EXPECT_EQ(r.stats.programs, 8u);
  EXPECT_EQ(r.stats.waves, 1u);
}

// Where program i runs under each policy, from the spec's counts (N PEs, C cubes, P per cube).
std::uint32_t expected_pe(const std::string& policy, std::int64_t i, std::int64_t programs,
                          const components::SystemConfig& c) {
  const std::int64_t n = static_cast<std::int64_t>(c.total_pes());
  const std::int64_t cubes = static_cast<std::int64_t>(c.total_cubes()), per_cube = c.cube.pes;
  if (policy == "round_robin") {
    const std::int64_t slot = i % n;
    return static_cast<std::uint32_t>((slot % cubes) * per_cube + slot / cubes);
  }
  if (policy == "cube_major") return static_cast<std::uint32_t>(i % n);
  // pe_major: contiguous ranges, the first programs % n PEs one program longer.
  const std::int64_t base = programs / n, extra = programs % n;
  const std::int64_t long_part = extra * (base + 1);
  return static_cast<std::uint32_t>(i < long_part ? i / (base + 1)
                                                  : extra + (i - long_part) / base);
}

TEST(Dispatch, EveryPolicyPlacesEachProgramAndOrdersEachPesQueue) {
  for (const std::string policy : {"round_robin", "cube_major", "pe_major"}) {
    SCOPED_TRACE(policy);
    Simulation sim(tiny_dispatch(policy), {.timing_only = true});
    const std::int64_t programs = 21;  // 8 PEs: waves of 8, 8 and 5
    const auto ran = run_recording(sim, Grid::logical(programs), 64);
    ASSERT_EQ(ran.size(), static_cast<std::size_t>(programs));
    std::map<std::uint32_t, std::vector<std::int64_t>> order;
    for (const Ran& r : ran) {
      EXPECT_EQ(r.pe, expected_pe(policy, linear(r), programs, sim.config())) << linear(r);
      order[r.pe].push_back(linear(r));
    }
    for (const auto& [pe, ids] : order) EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  }
}

TEST(Dispatch, RoundRobinSpreadsConsecutiveProgramsOverTheCubes) {
  Simulation sim(tiny_dispatch("round_robin"), {.timing_only = true});
  const auto ran = run_recording(sim, Grid::logical(4));
  std::set<std::uint32_t> cubes;
  for (const Ran& r : ran) cubes.insert(sim.system().pe_coord(r.pe).cube);
  EXPECT_EQ(cubes.size(), 2u);  // not four programs on cube 0, as a sub-grid would put them
}

TEST(Dispatch, WavesStartWhenTheirPeIsFreeAndTheDispatcherStartsOneProgramAtATime) {
  // c = 5 ns per dispatch; each program takes d = one vector op on 4096 elements
  // (256 + 2 cycles at 1 GHz = 258 ns > 8 * c, so the dispatcher is never the bottleneck after
  // the first wave): program j of wave w (slot j) starts at (j + 1) c + w (d + c).
  const emu::Tick c = 5'000;
  Simulation sim(tiny_dispatch("cube_major", 5.0), {.timing_only = true});
  const emu::Tick d = sim.system().vector_unit().time(4096);
  ASSERT_GT(d, 8 * c);
  const auto ran = run_recording(sim, Grid::logical(20), 4096);
  for (const Ran& r : ran) {
    const std::int64_t i = linear(r), slot = i % 8, wave = i / 8;
    EXPECT_EQ(r.start,
              static_cast<emu::Tick>(slot + 1) * c + static_cast<emu::Tick>(wave) * (d + c))
        << i;
  }
  const RunResult r =
      sim.launch_on(Grid::logical(20), [](tl::Context& tl) { tl.full({4096}, 1.0, DType::f32); });
  // The last program is slot 3 of wave 2.
  EXPECT_EQ(r.sim_time_ps, 4 * c + 2 * (d + c) + d);
  EXPECT_EQ(r.stats.waves, 3u);
  EXPECT_EQ(r.stats.programs, 20u);
  EXPECT_EQ(r.stats.dispatch, "cube_major");
  std::uint64_t programs = 0;
  emu::Tick waited = 0;
  for (const PeStats& pe : r.stats.pes) {
    programs += pe.programs;
    waited += pe.dispatch_wait_ps;
  }
  EXPECT_EQ(programs, 20u);
  // The first wave queues at the dispatcher ((j + 1) c for slot j), later programs wait their
  // own dispatch only: 36 c + 12 c.
  EXPECT_EQ(waited, (36 + 12) * c);
}

TEST(Dispatch, EmptyProgramsAreBoundByTheDispatcher) {
  Simulation sim(tiny_dispatch("round_robin", 3.0), {.timing_only = true});
  const RunResult r = sim.launch_on(Grid::logical(100), [](tl::Context&) {});
  EXPECT_EQ(r.sim_time_ps, 100u * 3'000u);
}

// A launch's own time (system.dispatch.launch_ns) comes once before its first program, on the
// hardware grid and on a logical one (before the dispatcher's first start), and counts as
// dispatch wait.
TEST(Dispatch, TheLaunchTimeComesOnceBeforeTheFirstProgram) {
  const emu::Tick launch = 2'500'000, c = 3'000;
  const Spec spec = tiny_dispatch("round_robin", 3.0).with("system.dispatch.launch_ns", 2500.0);
  Simulation sim(spec, {.timing_only = true});
  const emu::Tick d = sim.system().vector_unit().time(1024);
  const auto body = [](tl::Context& tl) { tl.full({1024}, 1.0, DType::f32); };
  const RunResult hw = sim.launch(body);  // tiny's 8 PEs at once
  EXPECT_EQ(hw.sim_time_ps, launch + d);
  for (const PeStats& pe : hw.stats.pes) EXPECT_EQ(pe.dispatch_wait_ps, launch) << pe.pe;
  // 100 empty programs: the launch, then one start every c.
  EXPECT_EQ(sim.launch_on(Grid::logical(100), [](tl::Context&) {}).sim_time_ps, launch + 100 * c);
  // A second launch pays it again.
  EXPECT_EQ(sim.launch(body).sim_time_ps, launch + d);
}

TEST(Dispatch, WaveQuantisationOneProgramPastAFullWaveCostsAWholeWave) {
  Simulation sim(tiny_dispatch("round_robin"), {.timing_only = true});
  const emu::Tick d = sim.system().vector_unit().time(1024);
  const auto body = [](tl::Context& tl) { tl.full({1024}, 1.0, DType::f32); };
  EXPECT_EQ(sim.launch_on(Grid::logical(8), body).sim_time_ps, d);
  EXPECT_EQ(sim.launch_on(Grid::logical(9), body).sim_time_ps, 2 * d);
  EXPECT_EQ(sim.launch_on(Grid::logical(16), body).sim_time_ps, 2 * d);
  EXPECT_EQ(sim.launch_on(Grid::logical(17), body).stats.waves, 3u);
}

// Triton's vector add: one BLOCK per program, the tail masked.
void add_kernel(tl::Context& tl, Ptr x, Ptr y, Ptr out, std::int64_t n, std::int64_t block) {
  const std::int64_t pid = tl.program_id(0);
  const tl::Tile offs = tl.arange(0, block);
  const tl::Tile mask = offs < static_cast<double>(n - pid * block);
  const std::uint64_t at = static_cast<std::uint64_t>(pid * block) * 4;
  const tl::Tile a = tl.load(x + at, {block}, DType::f32, {.mask = &mask});
  const tl::Tile b = tl.load(y + at, {block}, DType::f32, {.mask = &mask});
  tl.store(out + at, (a + b) * a, {.mask = &mask});
}

std::vector<float> run_add(const Spec& spec, const std::vector<float>& xs,
                           const std::vector<float>& ys, std::int64_t block) {
  Simulation sim(spec);
  const auto n = static_cast<std::int64_t>(xs.size());
  const std::uint64_t bytes = xs.size() * 4;
  const Ptr x = sim.alloc(bytes), y = sim.alloc(bytes), out = sim.alloc(bytes);
  sim.write<float>(x, xs);
  sim.write<float>(y, ys);
  const RunResult r =
      sim.launch_on(Grid::logical((n + block - 1) / block), add_kernel, x, y, out, n, block);
  EXPECT_TRUE(r.coverage(out, bytes).exactly_once()) << r.describe(r.coverage(out, bytes), out);
  EXPECT_TRUE(r.races().empty());
  return sim.read<float>(out, xs.size());
}

TEST(LogicalGrid, AKernelForTheLogicalGridGivesTheSameNumbersOnTinyAndLarge) {
  const std::size_t n = 10'001;  // a masked tail
  const auto xs = random_values<float>(n, 11), ys = random_values<float>(n, 12);
  const auto tiny = run_add(Spec::load(spec_path("tiny.json")), xs, ys, 256);
  const auto large = run_add(Spec::load(spec_path("large.json")), xs, ys, 256);
  ASSERT_EQ(tiny.size(), n);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(tiny[i], large[i]) << i;
    const double ref = (static_cast<double>(xs[i]) + ys[i]) * xs[i];
    worst = std::max(worst, std::abs(tiny[i] - ref) / std::abs(ref));
  }
  EXPECT_LT(worst, 2.01 * std::ldexp(1.0, -24));  // a rounded sum, then a rounded product
}

TEST(LogicalGrid, BadGridsAreUsageErrors) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  const auto none = [](tl::Context&) {};
  for (const Grid g : {Grid::logical(0), Grid::logical(-3), Grid::logical(kMaxGridDim + 1),
                       Grid::logical(1, 0), Grid{.pes = -1}}) {
    try {
      sim.launch_on(g, none);
      ADD_FAILURE() << "no error for " << g.str();
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("launch grid"));
      EXPECT_THAT(e.what(), HasSubstr("between 1 and 2^31 - 1"));
    }
  }
  try {
    sim.launch_on(Grid::logical(kMaxGridDim, kMaxGridDim, 2), none);
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than a launch can number"));
  }
  // The simulation survives and launches again.
  EXPECT_EQ(sim.launch_on(Grid::logical(3), none).stats.programs, 3u);
}

TEST(LogicalGrid, AGridWhoseStateExceedsHostMemoryIsRefusedBeforeItRuns) {
  Simulation sim(Spec::load(spec_path("tiny.json")),
                 {.timing_only = true, .host_memory_limit = std::uint64_t{256} << 20});
  try {
    sim.launch_on(Grid::logical(1 << 30, 2), [](tl::Context&) {});
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("host memory"));
    EXPECT_THAT(e.what(), HasSubstr("larger BLOCK"));
  }
}

TEST(LogicalGrid, AnUnknownPolicyIsASpecErrorNamingTheField) {
  try {
    tiny_dispatch("random");
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dispatch"));
    EXPECT_THAT(e.what(), HasSubstr("round_robin"));
  }
}

TEST(LogicalGrid, BarriersAndMessagesAcrossWavesAreKernelFaults) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  try {
    sim.launch_on(Grid::logical(9), [](tl::Context& tl) { tl.barrier(); });
    ADD_FAILURE();
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    EXPECT_THAT(e.what(), HasSubstr("9 programs in 2 waves on 8 PEs"));
    EXPECT_THAT(e.what(), HasSubstr("at most 8 programs"));
  }
  try {
    sim.launch_on(Grid::logical(12), [](tl::Context& tl) {
      tl.send(tl::program((tl.program_id() + 1) % 12), tl.full({4}, 1.0, DType::f32));
    });
    ADD_FAILURE();
  } catch (const KernelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("send(program(1, 0, 0))"));
    EXPECT_THAT(e.what(), HasSubstr("waves"));
  }
  // One wave: every program runs at once, so barriers and messages work, between the logical
  // programs wherever the dispatcher put them.
  Simulation functional(Spec::load(spec_path("tiny.json")));
  std::vector<double> got(8, -1.0);
  const RunResult r = functional.launch_on(Grid::logical(8), [&](tl::Context& tl) {
    const std::int64_t me = tl.program_id();
    tl.barrier();
    tl.send(tl::program((me + 1) % 8), tl.full({4}, static_cast<double>(me) + 0.5, DType::f32));
    got[static_cast<std::size_t>(me)] = tl.recv(tl::program((me + 7) % 8), {4}, DType::f32).at(3);
  });
  EXPECT_EQ(r.stats.waves, 1u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(got[i], static_cast<double>((i + 7) % 8) + 0.5);
}

TEST(LogicalGrid, TheTraceShowsEachProgramAndItsDispatch) {
  const std::string path = ::testing::TempDir() + "waves_trace.json";
  {
    Simulation sim(tiny_dispatch("round_robin", 2.0), {.timing_only = true, .trace_path = path});
    sim.launch_on(Grid::logical(10), [](tl::Context& tl) { tl.full({256}, 1.0, DType::f32); });
  }
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::set<std::string> programs;
  std::size_t dispatches = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name.starts_with("program (")) programs.insert(name);
    dispatches += name == "dispatch";
  }
  EXPECT_EQ(programs.size(), 10u);
  EXPECT_EQ(dispatches, 10u);
}

}  // namespace
}  // namespace cubesim
