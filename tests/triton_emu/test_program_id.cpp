// ADR-0022's program_id / num_programs contract on every shipped spec, and on a spec with
// cubes_per_sip = 1 (the ADR's backward compatibility: axis 1 is 0 and num_programs(1) is 1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <mutex>
#include <set>
#include <tuple>

#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::HasSubstr;

struct Seen {
  std::int64_t pid[3], num[3], pid_default;
  tl::PeCoord pe;
};

std::vector<Seen> ids_of(const Spec& spec) {
  Simulation sim(spec, {.timing_only = true});
  std::vector<Seen> seen;
  sim.launch([&seen](tl::Context& tl) {
    seen.push_back({{tl.program_id(0), tl.program_id(1), tl.program_id(2)},
                    {tl.num_programs(0), tl.num_programs(1), tl.num_programs(2)},
                    tl.program_id(),
                    tl.pe()});
  });
  return seen;
}

class ProgramId : public ::testing::TestWithParam<std::string> {};

TEST_P(ProgramId, AxesAreThePeTheCubeAndTheSipAsInTheAdr) {
  const Spec spec = Spec::load(spec_path(GetParam()));
  const auto& c = spec.config();
  const auto seen = ids_of(spec);
  ASSERT_EQ(seen.size(), c.total_pes());
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> distinct;
  for (const auto& s : seen) {
    EXPECT_EQ(s.num[0], c.cube.pes);
    EXPECT_EQ(s.num[1], c.cubes_per_sip);
    EXPECT_EQ(s.num[2], c.sips);
    EXPECT_EQ(s.pid_default, s.pid[0]);
    EXPECT_EQ(s.pid[0], s.pe.pe);  // on the hardware grid, program = hardware position
    EXPECT_EQ(s.pid[1], s.pe.cube);
    EXPECT_EQ(s.pid[2], s.pe.sip);
    for (int a = 0; a < 3; ++a) {
      EXPECT_GE(s.pid[a], 0);
      EXPECT_LT(s.pid[a], s.num[a]);
    }
    distinct.insert({s.pid[0], s.pid[1], s.pid[2]});
  }
  EXPECT_EQ(distinct.size(), seen.size());
}

INSTANTIATE_TEST_SUITE_P(Specs, ProgramId,
                         ::testing::Values("tiny.json", "default.json", "large.json"),
                         [](const auto& param_info) {
                           return param_info.param.substr(0, param_info.param.find('.'));
                         });

TEST(ProgramId, OneCubePerSipGivesAxisOneZeroAndOneProgram) {
  const Spec spec = Spec::load(spec_path("tiny.json")).with("system.sips.cubes_per_sip", 1);
  const auto seen = ids_of(spec);
  ASSERT_EQ(seen.size(), spec.config().cube.pes);
  for (const auto& s : seen) {
    EXPECT_EQ(s.pid[1], 0);
    EXPECT_EQ(s.num[1], 1);
    EXPECT_EQ(s.pid_default, s.pid[0]);
  }
}

TEST(ProgramId, AnyOtherAxisIsAKernelFaultNamingThePeAndTheAxis) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  try {
    sim.launch([](tl::Context& tl) {
      if (tl.program_id(0) == 3 && tl.program_id(1) == 1) (void)tl.program_id(3);
    });
    FAIL() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::kernel_fault);
    EXPECT_EQ(e.pe(), "sip0.cube1.pe3");
    EXPECT_THAT(e.what(), HasSubstr("program_id(3)"));
    EXPECT_THAT(e.what(), HasSubstr("sip0.cube1.pe3"));
    EXPECT_THAT(e.what(), HasSubstr("valid axes are 0"));
  }
}

TEST(ProgramId, SubGridLaunchRunsOnlyThoseProgramsAndReportsTheGrid) {
  Simulation sim(Spec::load(spec_path("tiny.json")), {.timing_only = true});
  std::vector<std::int64_t> n0;
  const auto r = sim.launch_on(Grid{.pes = 2, .cubes = 1}, [&](tl::Context& tl) {
    n0.push_back(tl.num_programs(0) * 10 + tl.num_programs(1));
  });
  EXPECT_EQ(n0, (std::vector<std::int64_t>{21, 21}));
  EXPECT_EQ(r.stats.dispatch, "hardware");
  EXPECT_EQ(r.stats.waves, 1u);
  EXPECT_THROW(sim.launch_on(Grid{.pes = -1}, [](tl::Context&) {}), UsageError);
}

}  // namespace
}  // namespace cubesim
