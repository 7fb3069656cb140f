// Placements (triton_emu/memory/placement.hpp): where each byte of a buffer lands, computed from
// the spec's channel layout (channel c is on mesh node c mod the nodes of an every_node spec, and
// PE p on node p), what a kernel reading it then crosses, and the errors for placements the
// system cannot hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <random>
#include <set>

#include "components/system/system.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::uint64_t kGranule = 4096;  // default.json's channel_interleave_bytes

components::Location where(Simulation& sim, Ptr p) {
  return sim.system().address_map().decode(p.addr);
}
std::uint32_t channel(Simulation& sim, Ptr p) {
  return sim.system().address_map().channel(where(sim, p));
}

TEST(Placement, APesSliceIsTheChannelsOnItsRouter) {
  Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
  const auto& cfg = sim.config();
  const std::uint32_t pes = cfg.cube.pes, channels = cfg.cube.hbm.channels;  // 16, 32
  for (const auto& [sip, cube, pe] : {std::tuple{0u, 1u, 5u}, std::tuple{0u, 3u, 15u}}) {
    const Ptr p = sim.alloc(40 * kGranule + 100, Placement::on_pe(sip, cube, pe));
    std::set<std::uint32_t> seen;
    for (std::uint64_t at = 0; at < 40 * kGranule + 100; at += 1000) {
      EXPECT_EQ(where(sim, p + at).global_cube, sip * cfg.cubes_per_sip + cube) << at;
      const std::uint32_t c = channel(sim, p + at);
      EXPECT_EQ(c % pes, pe) << "channel " << c << " is not on PE " << pe << "'s router";
      seen.insert(c);
    }
    EXPECT_EQ(seen.size(), channels / pes) << "the frames take the slice's channels in turn";
  }
}

TEST(Placement, DistributedBlocksLieOnTheirProgramsPes) {
  Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
  const auto& cfg = sim.config();
  const std::uint32_t pes = cfg.cube.pes, cubes = cfg.cubes_per_sip;
  const std::uint64_t block = 3 * kGranule, programs = std::uint64_t{pes} * cubes;
  const std::uint64_t bytes = 5 * programs * block / 2;  // some programs get one block more
  const Ptr p = sim.alloc(bytes, Placement::distributed(block, pes, cubes, 1));
  for (std::uint64_t at = 0; at < bytes; at += 777) {
    const std::uint64_t program = at / block % programs;
    EXPECT_EQ(where(sim, p + at).global_cube, program / pes) << at;
    EXPECT_EQ(channel(sim, p + at) % pes, program % pes) << at;
  }
  // Spread over the cube: each block on its program's cube, the cube's frames over every one of
  // its channels in turn.
  const Ptr c =
      sim.alloc(bytes, Placement::distributed(block, pes, cubes, 1, Placement::Spread::cube));
  std::set<std::uint32_t> cube0;
  for (std::uint64_t at = 0; at < bytes; at += kGranule) {
    EXPECT_EQ(where(sim, c + at).global_cube, at / block % programs / pes) << at;
    if (where(sim, c + at).global_cube == 0) cube0.insert(channel(sim, c + at));
  }
  EXPECT_EQ(cube0.size(), cfg.cube.hbm.channels);
  // A sub-grid's programs: 4 PEs of 2 cubes.
  const Ptr q = sim.alloc(64 * kGranule, Placement::distributed(kGranule, 4, 2, 1));
  for (std::uint64_t b = 0; b < 64; ++b) {
    const std::uint64_t program = b % 8;
    EXPECT_EQ(where(sim, q + b * kGranule).global_cube, program / 4);
    EXPECT_EQ(channel(sim, q + b * kGranule) % pes, program % 4);
  }
}

TEST(Placement, ASipsBufferIsInterleavedOverItsCubesOnly) {
  const Spec two = Spec::load(spec_path("default.json")).with("system.sips.count", 2);
  Simulation sim(two, {.timing_only = true});
  const std::uint32_t cubes = sim.config().cubes_per_sip;  // 4
  const Ptr p = sim.alloc(64 * kGranule, Placement::on_sip(1));
  std::set<std::uint32_t> channels_seen;
  for (std::uint64_t g = 0; g < 64; ++g) {
    const components::Location loc = where(sim, p + g * kGranule + 7);
    EXPECT_EQ(loc.global_cube, cubes + g % cubes) << "granule " << g;
    if (loc.global_cube == cubes) channels_seen.insert(channel(sim, p + g * kGranule));
  }
  EXPECT_EQ(channels_seen.size(), 16u) << "a cube's 16 granules on 16 channels";
}

TEST(Placement, BytesWrittenThroughAnyPlacementReadBackAndReachKernels) {
  Simulation sim(Spec::load(spec_path("default.json")));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const std::int64_t n = 50'000;  // not a whole number of frames
  std::vector<float> values(static_cast<std::size_t>(n));
  for (float& v : values) v = u(rng);
  for (const Placement at :
       {Placement::on_pe(0, 2, 7), Placement::on_sip(0), Placement::distributed(8192, 16, 4, 1)}) {
    const Ptr in = sim.alloc(static_cast<std::uint64_t>(n) * 4, at);
    const Ptr out = sim.alloc(static_cast<std::uint64_t>(n) * 4, at, 65536);
    EXPECT_EQ(out.addr % 65536, 0u) << "aligned as asked, " << at.str();
    sim.write(in, values);
    EXPECT_EQ(sim.read<float>(in, values.size()), values) << at.str();
    // One program copies it with loads and stores that cross frames.
    sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      for (std::int64_t i = 0; i < n; i += 3000)
        tl.store(out + i * 4,
                 tl.load(in + i * 4, {std::min<std::int64_t>(3000, n - i)}, DType::f32));
    });
    EXPECT_EQ(sim.read<float>(out, values.size()), values) << at.str();
  }
}

// The time of one program's 64 KiB load: from its own slice it crosses no mesh link (the HBM
// channels' and its port's serialisation only); from a slice across the mesh it crosses links.
TEST(Placement, ALoadFromItsOwnSliceCrossesNoMeshLink) {
  for (const bool own : {true, false}) {
    Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
    const Ptr p = sim.alloc(65536, Placement::on_pe(0, 0, own ? 0 : 15));
    const RunResult r = sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
      (void)tl.load(p, {16384}, DType::f32);
    });
    const std::uint64_t mesh = r.stats.network.bytes(components::LinkKind::noc);
    if (own)
      EXPECT_EQ(mesh, 0u);
    else
      EXPECT_GE(mesh, 65536u * 6) << "PE 15 is 6 hops from PE 0 on a 4x4 mesh";
  }
}

TEST(Placement, PlacementsTheSystemLacksAreRefusedAndChangeNothing) {
  Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
  EXPECT_THAT([&] { (void)sim.alloc(64, Placement::on_pe(0, 0, 16)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("no PE 16 on a cube of 16 PEs")));
  EXPECT_THAT([&] { (void)sim.alloc(64, Placement::on_sip(1)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("no SIP (sip 1)")));
  EXPECT_THAT([&] { (void)sim.alloc(64, Placement::distributed(4096, 16, 8, 1)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("does not fit this system")));
  EXPECT_THAT([&] { (void)sim.alloc(64, Placement::distributed(0, 16, 4, 1)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("blocks of at least 1 byte")));
  // A PE's whole slice (48 GiB / 16 PEs) once a GiB of its cube is taken: its turns run out
  // part-way, and the request is refused with the cube as it was.
  const std::uint64_t cube = sim.config().cube.hbm.capacity_bytes, slice = cube / 16;
  const std::uint64_t gib = std::uint64_t{1} << 30;
  (void)sim.alloc(gib, Placement::on_cube(0, 1));
  EXPECT_THAT([&] { (void)sim.alloc(slice, Placement::on_pe(0, 1, 3)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("cube (sip 0, cube 1) is full")));
  (void)sim.alloc(cube - 2 * gib, Placement::on_cube(0, 1));        // the turns were given back
  const Ptr part = sim.alloc(gib / 32, Placement::on_pe(0, 1, 3));  // 32 MiB: 512 MiB of turns
  EXPECT_EQ(where(sim, part + gib / 32 - 1).global_cube, 1u);
  EXPECT_THROW((void)sim.alloc(gib / 2 + kGranule, Placement::on_cube(0, 1)), UsageError)
      << "the slice's turns took 16 times its bytes of the cube";
  (void)sim.alloc(kGranule, Placement::on_cube(0, 2));
}

// First touch: what the host writes waits until a program touches its frame; the frame then
// lies on that program's cube, with the bytes written before.
TEST(Placement, FirstTouchPlacesEachFrameOnTheCubeOfItsFirstToucher) {
  Simulation sim(Spec::load(spec_path("default.json")));
  const std::uint32_t cubes = sim.config().cubes_per_sip;  // 4
  const std::int64_t per = 3000;                           // floats per program: not whole frames
  const std::int64_t n = per * cubes;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (float& v : values) v = u(rng);
  const Ptr in = sim.alloc(static_cast<std::uint64_t>(n) * 4, Placement::first_touch());
  const Ptr out = sim.alloc(static_cast<std::uint64_t>(n) * 4, Placement::first_touch());
  sim.write(in, values);
  EXPECT_EQ(sim.read<float>(in, values.size()), values) << "held, not yet placed";
  EXPECT_EQ(sim.read<float>(out, 4), std::vector<float>(4, 0.0f)) << "never written: zeros";
  EXPECT_THROW((void)where(sim, in), components::AddressError) << "no home before a touch";
  // Program c (PE 0 of cube c) copies part c; a frame two parts share goes to whichever of the
  // two programs touched it first.
  sim.launch_on(Grid{.pes = 1, .cubes = cubes}, [&](tl::Context& tl) {
    const std::int64_t c = tl.program_id(1);
    tl.store(out + c * per * 4, tl.load(in + c * per * 4, {per}, DType::f32));
  });
  EXPECT_EQ(sim.read<float>(out, values.size()), values);
  for (std::uint32_t c = 0; c < cubes; ++c) {
    // The middle of part c lies in a frame no other part shares.
    const std::uint64_t mid = (c * per + per / 2) * 4;
    EXPECT_EQ(where(sim, in + mid).global_cube, c);
    EXPECT_EQ(where(sim, out + mid).global_cube, c);
  }
  // Placed frames stay: a program of another cube reads them where they are.
  EXPECT_EQ(where(sim, in).global_cube, 0u);
  const RunResult r = sim.launch_on(Grid{.pes = 1, .cubes = 1}, [&](tl::Context& tl) {
    (void)tl.load(in + (3 * per + per / 2) * 4 / 4096 * 4096, {1024}, DType::f32);
  });
  EXPECT_GT(r.stats.network.bytes(components::LinkKind::ucie), 0u) << "cube 3's frame, read from 0";
}

TEST(Placement, AFirstTouchOnAFullCubeIsAKernelFault) {
  Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
  const std::uint64_t cube = sim.config().cube.hbm.capacity_bytes;
  const Ptr ft = sim.alloc(2 * kGranule, Placement::first_touch());
  // Cube 0 full but for less than a turn (a granule of each of its 32 channels).
  (void)sim.alloc(cube - 16 * kGranule, Placement::on_cube(0, 0));
  try {
    sim.launch_on(Grid{.pes = 1, .cubes = 1},
                  [&](tl::Context& tl) { (void)tl.load(ft, {16}, DType::f32); });
    ADD_FAILURE() << "no fault";
  } catch (const KernelError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("first touch"), HasSubstr("cube (sip 0, cube 0)")));
  }
  // The program of cube 1 can still place it.
  sim.launch_on(Grid{.pes = 1, .cubes = 2}, [&](tl::Context& tl) {
    if (tl.program_id(1) == 1) (void)tl.load(ft, {16}, DType::f32);
  });
  EXPECT_EQ(where(sim, ft).global_cube, 1u);
}

// Requests no placement could hold are refused before any table is built (a placement by frame
// keeps one entry per frame): more bytes than the placement's HBM, an alignment whose holes
// would outweigh the buffer. A direct range may not run on into the mapped window.
TEST(Placement, RequestsBeyondWhatThePlacementReachesAreRefusedAtOnce) {
  Simulation sim(Spec::load(spec_path("default.json")), {.timing_only = true});
  const std::uint64_t cube = sim.config().cube.hbm.capacity_bytes, all = 4 * cube;
  EXPECT_THAT([&] { (void)sim.alloc(~std::uint64_t{0} - 100, Placement::on_pe(0, 0, 0)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("bytes of HBM that placement")));
  EXPECT_THAT([&] { (void)sim.alloc(cube / 16 + 1, Placement::on_pe(0, 0, 0)); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("more than the")));
  EXPECT_THROW((void)sim.alloc(all + 1, Placement::first_touch()), UsageError);
  EXPECT_THROW((void)sim.alloc(cube + 1, Placement::distributed(4096, 16, 1, 1)), UsageError);
  EXPECT_THAT([&] { (void)sim.alloc(64, Placement::on_pe(0, 0, 0), std::uint64_t{1} << 40); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("alignment")));
  const Ptr p = sim.alloc(64, Placement::on_pe(0, 0, 0));
  const components::AddressMap& map = sim.system().address_map();
  EXPECT_NO_THROW(map.check_range(p.addr, 64, "read"));
  EXPECT_THROW(map.check_range(components::AddressMap::kDirectBase,
                               p.addr + 8 - components::AddressMap::kDirectBase, "read"),
               components::AddressError);
}

}  // namespace
}  // namespace cubesim
