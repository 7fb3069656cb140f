// The collective kernels (kernels/collectives/): every collective and algorithm gives the
// host reference's result, the alpha-beta time computed here from the spec equals the
// simulated time on an idle ring where it is exact, the model stays within a stated tolerance
// where messages share links, and sizes that do not shard are usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <fstream>

#include "../triton_emu/error_of.hpp"
#include "kernel_test_support.hpp"
#include "kernels/collectives/collective.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels::collectives {
namespace {

using emu::Tick;
using kernels::testing::spec_path;
using ::testing::HasSubstr;

Outcome run(const char* spec, const char* kernel, const std::string& algorithm, std::int64_t bytes,
            const std::string& buffer = "sram", bool timing_only = false) {
  Simulation sim(Spec::load(spec_path(spec)), {.timing_only = timing_only});
  const KernelInfo& k = find_kernel(kernel);
  return k.run(sim, parse_params(k, {"algorithm=" + algorithm,
                                     "bytes_per_pe=" + std::to_string(bytes), "buffer=" + buffer}));
}

TEST(Collectives, EveryCollectiveAndAlgorithmMatchesTheHostReference) {
  for (const char* kernel : {"allreduce", "reduce_scatter", "allgather"})
    for (const char* algorithm : {"ring", "bidir_ring"})
      for (const char* buffer : {"sram", "hbm"}) {
        const Outcome o = run("tiny.json", kernel, algorithm, 8 * 4 * 2 * 40, buffer);
        ASSERT_TRUE(o.verified.has_value());
        EXPECT_TRUE(*o.verified) << kernel << " " << algorithm << " " << buffer << ": "
                                 << o.details.dump();
        EXPECT_GT(o.elements_checked, 0u);
      }
}

// Messages larger than a slot travel as several pieces; the result is the same.
TEST(Collectives, ChunksLargerThanASlotGoAsSeveralMessages) {
  const Outcome o = run("tiny.json", "allreduce", "ring", 8 * 4 * 3000);
  EXPECT_TRUE(*o.verified) << o.details.dump();
  EXPECT_LT(o.details["message_bytes"].get<std::int64_t>(),
            o.details["block_bytes"].get<std::int64_t>());
}

// The ring of one cube of tiny (a 2x2 mesh: 0 -> 1 -> 3 -> 2 -> 0, every step one hop on its
// own link) with messages of one packet in PE SRAM slots. Every program does the same at the
// same time, so one step, from when its sends leave, is (h: hop latency, s: a message's time
// on a link, w / r: the slot's write latency / read, c: a credit's time on a link):
//   one direction   arrives at h + s, is read by R = h + s + w + r, whose credit leaves the
//                   receiver's port at R (after its own send, done at s); reduce steps add.
//   two directions  the sender's port sends the clockwise message, then the other (s later);
//                   they are read in that order, each credit leaving once the port is free.
// The next step's sends wait for the adds and for the port (a credit still leaving).
TEST(Collectives, RingAllReduceTakesTheAlphaBetaTimeOnAnIdleRing) {
  const Spec spec = Spec::load(spec_path("tiny.json"));
  const auto& c = spec.config();
  const auto& m = c.messages;
  const std::uint64_t bytes = 64 * 4;
  const Tick h = c.cube.noc.hop_latency, s = c.cube.noc.link_bandwidth.transfer_time(bytes);
  const Tick w = m.pe_sram_latency,
             r = m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(bytes);
  const Tick credit = c.cube.noc.link_bandwidth.transfer_time(m.credit_bytes);
  const Tick add = c.pe.clock.cycles_to_ticks(
      emu::Cycles{(64 + c.pe.vector.lanes - 1) / c.pe.vector.lanes + c.pe.vector.latency_cycles});
  // One step from its sends: {when the last recv (and add) is done, when the next sends leave}.
  auto step = [&](int dirs, bool reduce) {
    const Tick v = reduce ? add : 0;
    Tick port = dirs * s;  // busy with this step's sends
    Tick t = 0;
    for (int i = 0; i < dirs; ++i) {
      const Tick arrive = h + (i + 1) * s;
      const Tick read = std::max(arrive + w, t) + r;
      port = std::max(read, port) + credit;
      t = read + v;
    }
    return std::pair{t, std::max(t, port)};
  };
  for (const int dirs : {1, 2}) {
    Simulation sim(spec, {.timing_only = true});
    const GridShape grid{4, 1, 1};
    const std::int64_t p = 4, block = 64 * dirs;
    const std::vector<std::int64_t> order = ring_order(c, grid);
    EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 3, 2}));
    Clock clock;
    clock.begin.assign(4, 0);
    clock.end.assign(4, 0);
    std::vector<Ptr> in, out;
    for (std::int64_t g = 0; g < p; ++g) {
      in.push_back(sim.alloc(p * block * 4));
      out.push_back(sim.alloc(p * block * 4));
    }
    const RingArgs args{.collective = Collective::all_reduce,
                        .directions = dirs,
                        .in = in,
                        .out = out,
                        .block = block,
                        .piece = 64,
                        .window = c.messages.slots,
                        .order = &order,
                        .clock = &clock};
    sim.launch_on(Grid{.pes = 4, .cubes = 1}, ring, args);
    Tick expected = 0;
    for (std::int64_t k = 0; k < 2 * (p - 1); ++k) {
      const auto [done, next] = step(dirs, k < p - 1);
      expected += k + 1 < 2 * (p - 1) ? next : done;
    }
    EXPECT_EQ(clock.elapsed(), expected) << dirs << " direction(s)";
    EXPECT_EQ(ring_model_time(sim, grid, args), expected) << dirs << " direction(s)";
  }
}

// Over both cubes of tiny the cube-to-cube steps cross UCIe and share mesh links with the
// ring's own steps: the model (which assumes no sharing) stays within 50 % of the simulation.
TEST(Collectives, TheModelStaysNearTheSimulationWhereMessagesShareLinks) {
  for (const char* kernel : {"allreduce", "reduce_scatter", "allgather"}) {
    const Outcome o = run("tiny.json", kernel, "ring", 8 * 4 * 64, "sram", true);
    const double sim = o.details["collective_time_ps"].get<double>();
    const double model = o.details["model_time_ps"].get<double>();
    EXPECT_GE(sim, model) << kernel;
    EXPECT_LE(sim, 1.5 * model) << kernel;
  }
}

TEST(Collectives, BandwidthsFollowNcclsDefinitions) {
  const Outcome o = run("tiny.json", "allreduce", "ring", 8 * 4 * 64, "sram", true);
  const double t = o.details["collective_time_ps"].get<double>() * 1e-12;
  const double algbw = 8 * 4 * 64 / t / 1e9;
  EXPECT_DOUBLE_EQ(o.details["algbw_GBps"].get<double>(), algbw);
  EXPECT_DOUBLE_EQ(o.details["busbw_GBps"].get<double>(), algbw * 2 * 7 / 8);
}

TEST(Collectives, SizesThatDoNotShardAreUsageErrors) {
  EXPECT_THAT(error_of<UsageError>([] { run("tiny.json", "allreduce", "ring", 1000); }),
              HasSubstr("bytes_per_pe"));
  EXPECT_THAT(error_of<UsageError>([] { run("tiny.json", "allreduce", "bidir_ring", 8 * 4 * 3); }),
              HasSubstr("2 directions"));
  EXPECT_THAT(error_of<UsageError>([] { run("tiny.json", "allreduce", "ring", 8 * 4 * 100000); }),
              HasSubstr("buffer=hbm"));
}

}  // namespace
}  // namespace cubesim::kernels::collectives
