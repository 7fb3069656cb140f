// The host memory a Simulation needs: a system the host cannot hold is refused before it is
// built, with the estimate and the fields to reduce, and the estimate is close to what building a
// system and launching a program on every PE really takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cubesim/cubesim.hpp>

#include "components/hbm/banked_hbm.hpp"
#include "spec_path.hpp"
#include "tests/resident_memory.hpp"
#include "triton_emu/memory/host_memory.hpp"

namespace cubesim {
namespace {

using test::resident_bytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

// large.json's cubes (8x8 meshes, 4 HBM controllers, 128 channels) in `sips` SIPs of 8 cubes.
Spec large_system(std::uint32_t sips, std::uint32_t pes, std::uint32_t mesh_x,
                  std::uint32_t mesh_y) {
  const std::vector<std::string> sets = {
      "system.sips.count=" + std::to_string(sips), "system.cube.pes=" + std::to_string(pes),
      "system.cube.noc.mesh=[" + std::to_string(mesh_x) + "," + std::to_string(mesh_y) + "]"};
  return Spec::load(spec_path("large.json")).with_assignments(sets);
}

TEST(HostMemory, ASystemOverTheLimitIsRefusedBeforeItIsBuilt) {
  const Spec spec = large_system(64, 2048, 32, 64);  // 1,048,576 PEs: the most a spec allows
  SimOptions options;
  options.timing_only = true;
  options.host_memory_limit = std::uint64_t{1} << 30;
  const HostMemoryEstimate e = estimate_host_memory(spec.config(), options.stack_size);
  ASSERT_GT(e.bytes, options.host_memory_limit);
  const std::uint64_t before = resident_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    Simulation sim(spec, options);
    FAIL() << "a system needing " << e.bytes << " bytes was built under a 1 GiB limit";
  } catch (const UsageError& err) {
    EXPECT_EQ(err.exit_code(), ExitCode::usage);
    EXPECT_THAT(err.what(),
                AllOf(HasSubstr("needs at least"), HasSubstr("1048576 PEs"),
                      HasSubstr("1.0 GiB is available (CUBESIM_MEMORY_LIMIT)"),
                      HasSubstr("reduce system.sips.count (64), system.sips.cubes_per_sip (8) "
                                "or system.cube.pes (2048)")));
  }
  // Refused before anything was built: building these PEs alone takes over a GiB and seconds.
  EXPECT_LT(resident_bytes(), before + (std::uint64_t{64} << 20));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// A cube cache's tags (8 bytes a line) count per cube, and a cache too large for the host names
// its size and line fields.
TEST(HostMemory, ACubeCachesTagsCountAndTooLargeACacheIsRefused) {
  const Spec plain = Spec::load(spec_path("default.json"));
  const Spec cached =
      plain.with_assignments({"system.cube.cache.model=lru", "system.cube.cache.size_MiB=32768",
                              "system.cube.cache.line_bytes=64"});
  SimOptions options;
  const std::uint64_t lines = (std::uint64_t{32} << 30) / 64;
  const std::uint64_t channels = plain.config().cube.hbm.channels;
  EXPECT_EQ(estimate_host_memory(cached.config(), options.stack_size).per_cube,
            estimate_host_memory(plain.config(), options.stack_size).per_cube + 8 * lines +
                128 * channels);  // the tags, and a link per slice
  options.timing_only = true;
  options.host_memory_limit = std::uint64_t{4} << 30;  // 4 cubes x 4 GiB of tags do not fit
  try {
    Simulation sim(cached, options);
    FAIL() << "a cache needing 32 GiB of tags was built under a 4 GiB limit";
  } catch (const UsageError& err) {
    EXPECT_THAT(err.what(), AllOf(HasSubstr("the cube cache's tags (4.0 GiB per cube)"),
                                  HasSubstr("system.cube.cache.size_MiB")));
  }
}

// The banked HBM's banks and queues count per channel, and a system whose channels would hold
// too many names the fields that size them.
TEST(HostMemory, BankedHbmStateCountsAndTooMuchOfItIsRefused) {
  const Spec plain = Spec::load(spec_path("large.json"));
  const Spec banked = plain.with_assignments(
      {"system.cube.hbm.model=banked", "system.cube.hbm.banked.bank_groups=64",
       "system.cube.hbm.banked.banks_per_group=64", "system.cube.hbm.banked.queue_depth=4096"});
  SimOptions options;
  const std::uint64_t channels = plain.config().cube.hbm.channels;
  EXPECT_EQ(estimate_host_memory(banked.config(), options.stack_size).per_cube,
            estimate_host_memory(plain.config(), options.stack_size).per_cube +
                channels * components::DramChannel::state_bytes(banked.config().cube.hbm.banked));
  EXPECT_GT(components::DramChannel::state_bytes(banked.config().cube.hbm.banked),
            std::uint64_t{4096} * 32);  // 4096 banks of at least 32 bytes each
  options.timing_only = true;
  options.host_memory_limit = std::uint64_t{1} << 30;
  try {
    Simulation sim(banked, options);
    FAIL() << "banked channels needing GiBs were built under a 1 GiB limit";
  } catch (const UsageError& err) {
    EXPECT_THAT(err.what(), AllOf(HasSubstr("the banked HBM's banks and queues"),
                                  HasSubstr("system.cube.hbm.banked.bank_groups")));
  }
}

TEST(HostMemory, StacksThatCannotFitTheAddressSpaceAreRefused) {
  const Spec spec = large_system(64, 2048, 32, 64);
  SimOptions options;
  options.timing_only = true;
  options.stack_size = std::size_t{1} << 30;
  options.host_memory_limit = std::uint64_t{1} << 50;  // memory is not what stops it
  try {
    Simulation sim(spec, options);
    FAIL() << "1,048,576 stacks of 1 GiB were reserved";
  } catch (const UsageError& err) {
    EXPECT_THAT(err.what(),
                AllOf(HasSubstr("1024.0 TiB of address space"), HasSubstr("lower --stack-size")));
  }
}

// What building a system and launching a program on every PE that loads and stores a tile adds
// to the process, against the estimate less its fixed part (the process's libraries are loaded
// already): the estimate is a floor, but not far below.
void expect_estimate_holds(const Spec& spec) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow and redzones are not what the estimate is for";
#endif
  const std::uint64_t before = resident_bytes();
  SimOptions options;
  options.timing_only = true;
  options.record_accesses = false;  // the access log grows with what the kernel does
  Simulation sim(spec, options);
  const std::uint64_t pes = spec.config().total_pes();
  const Ptr buffer = sim.alloc(pes * 1024);
  sim.launch([&](tl::Context& tl) {
    const std::int64_t pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
    const auto t = tl.load(buffer + pid * 1024, {256}, DType::f32);
    tl.store(buffer + pid * 1024, t);
    tl.barrier();
  });
  const double used = static_cast<double>(resident_bytes() - before);
  const HostMemoryEstimate e = estimate_host_memory(spec.config(), options.stack_size);
  const double estimated = static_cast<double>(e.bytes - e.fixed);
  EXPECT_GT(used, estimated) << "the floor is above what a launch takes: a system that fits "
                                "would be refused";
  EXPECT_LT(used, 3 * estimated) << "the floor is too far below what a simple launch takes to "
                                    "refuse what cannot fit";
  ::testing::Test::RecordProperty("used_bytes", std::to_string(used));
  ::testing::Test::RecordProperty("estimated_bytes", std::to_string(estimated));
}

TEST(HostMemory, TheFloorHoldsForManyCubes) {
  expect_estimate_holds(large_system(16, 64, 8, 8));  // 8192 PEs in 128 cubes
}

TEST(HostMemory, TheFloorHoldsForLargeCubes) {
  expect_estimate_holds(large_system(1, 1024, 32, 32));  // 8192 PEs in 8 cubes
}

}  // namespace
}  // namespace cubesim
