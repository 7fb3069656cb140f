// ring_attention: numerics against fp64 attention, sharding (O written once, no races), broken
// variants caught, time bounds derived from the spec, and the harness's usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <string>
#include <vector>

#include "components/pe/gemm_timing.hpp"
#include "kernel_test_support.hpp"
#include "kernels/harness/grid.hpp"
#include "kernels/ring_attention.hpp"

namespace cubesim::kernels {
namespace {

using testing::NumericsCase;
using testing::spec_named;
using testing::tiny;
using testing::two_sips;

using emu::Tick;
using ::testing::HasSubstr;

Outcome run_harness(const Spec& spec, const std::vector<std::string>& assignments,
                    bool timing_only = false) {
  return testing::run_kernel("ring_attention", spec, assignments, timing_only, 21);
}

class RingAttentionNumerics : public ::testing::TestWithParam<NumericsCase> {};

TEST_P(RingAttentionNumerics, MatchesFp64Attention) {
  const auto& c = GetParam();
  const Outcome o = run_harness(spec_named(c.spec), c.params);
  testing::expect_verified(o);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RingAttentionNumerics,
    ::testing::Values(
        NumericsCase{"tiny.json", {"seq=64", "head_dim=16", "dtype=f32"}, "f32"},
        NumericsCase{"tiny.json", {"seq=64", "head_dim=16"}, "f16"},
        NumericsCase{
            "tiny.json", {"seq=64", "head_dim=16", "dtype=bf16", "causal=true"}, "bf16_causal"},
        // 100 rows over 8 programs: blocks of 13 and 12 rows.
        NumericsCase{
            "tiny.json", {"seq=100", "head_dim=8", "dtype=f32", "causal=true"}, "uneven_causal"},
        NumericsCase{"tiny.json",
                     {"seq=100", "head_dim=8", "causal=true", "layout=striped"},
                     "uneven_striped_causal"},
        NumericsCase{"tiny.json", {"seq=96", "head_dim=32", "layout=striped"}, "striped"},
        // 16 f32 rows of 64 per 4 KiB slot: blocks of 25 rows travel as two chunks each.
        NumericsCase{"tiny.json",
                     {"seq=200", "head_dim=64", "dtype=f32", "causal=true"},
                     "two_chunks_causal"},
        NumericsCase{"tiny.json",
                     {"seq=200", "head_dim=64", "dtype=f32", "causal=true", "layout=striped"},
                     "two_chunks_striped_causal"},
        // 16 f16 rows of 128 per 4 KiB slot: blocks of 41 and 40 rows travel as chunks of
        // 16, 16 and 9 or 8 rows, and causal stripes attend to them in query chunks as long.
        NumericsCase{"tiny.json",
                     {"seq=325", "head_dim=128", "causal=true", "layout=striped"},
                     "query_chunks_striped_causal"},
        NumericsCase{"tiny.json",
                     {"seq=325", "head_dim=128", "dtype=bf16", "causal=true", "layout=striped"},
                     "query_chunks_striped_causal_bf16"},
        NumericsCase{"tiny.json",
                     {"seq=325", "head_dim=128", "causal=true", "layout=contiguous"},
                     "query_chunks_contiguous_causal"},
        NumericsCase{
            "tiny.json", {"seq=325", "head_dim=128", "layout=striped"}, "query_chunks_striped"},
        // 8 f32 rows of 128 per slot: blocks of 40 rows, five whole chunks a side.
        NumericsCase{"tiny.json",
                     {"seq=320", "head_dim=128", "dtype=f32", "causal=true", "layout=striped"},
                     "whole_query_chunks_striped_causal"},
        NumericsCase{
            "tiny.json", {"seq=40", "head_dim=24", "programs=3", "causal=true"}, "ring_of_three"},
        NumericsCase{"tiny.json", {"seq=7", "head_dim=4", "programs=1", "dtype=f32"}, "one"},
        NumericsCase{"two_sips", {"seq=120", "head_dim=16", "causal=true"}, "two_sips"},
        NumericsCase{"default.json", {"seq=512", "head_dim=64", "causal=true"}, "default"}),
    [](const auto& param_info) { return param_info.param.name; });

TEST(RingAttention, TimingOnlySkipsVerificationAndTakesTheSameSimulatedTime) {
  for (const char* layout : {"layout=contiguous", "layout=striped"}) {
    const std::vector<std::string> params = {"seq=100", "head_dim=16", "causal=true", layout};
    const Outcome timed = run_harness(tiny(), params, true);
    const Outcome full = run_harness(tiny(), params);
    EXPECT_FALSE(timed.verified.has_value());
    EXPECT_GT(timed.run.sim_time_ps, 0u);
    EXPECT_EQ(timed.run.sim_time_ps, full.run.sim_time_ps) << layout;
  }
}

TEST(RingAttention, DetailsCountTheStepsMessagesAndBytesOfTheRing) {
  // tiny: 8 programs; seq 200 gives blocks of 25 rows, f32 rows of 64 values (256 bytes), 16
  // rows per 4 KiB slot: two chunks of K and two of V per step.
  const Outcome o = run_harness(tiny(), {"seq=200", "head_dim=64", "dtype=f32"}, true);
  EXPECT_EQ(o.details["steps"], 8);
  EXPECT_EQ(o.details["block_rows"], 25);
  EXPECT_EQ(o.details["chunk_rows"], 16);
  EXPECT_EQ(o.details["messages_per_step"], 4);
  // Each program forwards 7 of the 8 blocks (all but the last it receives), K and V.
  EXPECT_EQ(o.details["bytes_sent_per_program"], 2 * (200 - 25) * 64 * 4);
  EXPECT_EQ(o.details["ring_hops"]["ucie"], 2);
  EXPECT_EQ(o.details["ring_hops"]["mesh"], 6);
  EXPECT_EQ(o.useful_flops, 4u * 200 * 200 * 64);
  EXPECT_EQ(o.useful_bytes, 4u * 200 * 64 * 4);
  EXPECT_EQ(run_harness(tiny(), {"seq=200", "causal=true"}, true).useful_flops,
            2u * 200 * 200 * 64);
  // The default sequence grows with the ring: 64 rows per program.
  EXPECT_EQ(run_harness(tiny(), {}, true).details["seq"], 8 * 64);
  EXPECT_EQ(run_harness(tiny(), {"programs=2"}, true).details["seq"], 2 * 64);
}

TEST(RingAttention, CausalContiguousBlocksLeaveTheLastProgramAllTheWorkAndStripesShareIt) {
  // Blocks of 16 f16 rows of 16 values: one chunk (and one tile) each. With contiguous blocks
  // ring position r attends to the blocks of positions 0 .. r (1 to 8 tiles); with stripes every
  // program attends to every block.
  const std::vector<std::string> base = {"seq=128", "head_dim=16", "causal=true"};
  auto with = [&](const char* layout) {
    auto params = base;
    params.emplace_back(layout);
    return run_harness(tiny(), params, true);
  };
  const Outcome contiguous = with("layout=contiguous"), striped = with("layout=striped");
  EXPECT_EQ(contiguous.details["tiles_attended"]["min"], 1);
  EXPECT_EQ(contiguous.details["tiles_attended"]["max"], 8);
  EXPECT_EQ(striped.details["tiles_attended"]["min"], 8);
  EXPECT_EQ(striped.details["tiles_attended"]["max"], 8);
}

// The GEMM work that the mask leaves, from the tile geometry. tiny: P = 8 programs; seq = 512
// gives blocks of B = 64 rows, and 16 f32 rows of 64 values fill a 4 KiB slot: key chunks of
// t = 16 rows, k = 4 a block. A tile of q query rows and n keys costs two GEMMs, 4 q n d flops.
//   - Without a mask every program attends to every block in full: P^2 * 4 B^2 d.
//   - Causal stripes: query chunks of t rows too. Block rows i (queries, first row r) and j
//     (keys, first row s, |s - r| < P): key j is visible when j < i, or j = i and s <= r; a tile of
//     key chunk c and query chunk q (t >= 2) has a visible key exactly when c <= q, so k (k + 1) /
//     2 of the k^2 tiles of every (program, block) remain: P^2 * k (k + 1) / 2 * 4 t^2 d, 5/8 of
//     the unmasked work here.
//   - Causal contiguous blocks: one query chunk; position r attends to blocks 0 .. r in full
//     (its own block's chunks each have a key that its last query sees): P (P + 1) / 2 * 4 B^2 d.
TEST(RingAttention, CausalTilesThatTheMaskRemovesCostNoGemmWork) {
  const std::uint64_t p = 8, b = 64, t = 16, k = b / t, d = 64;
  auto run = [](bool causal, const char* layout) {
    return run_harness(
        tiny(),
        {"seq=512", "head_dim=64", "dtype=f32", causal ? "causal=true" : "causal=false", layout},
        true);
  };
  const Outcome full = run(false, "layout=striped");
  const Outcome striped = run(true, "layout=striped");
  const Outcome contiguous = run(true, "layout=contiguous");
  ASSERT_EQ(striped.details["chunk_rows"], t);
  ASSERT_EQ(striped.details["query_rows"], t);
  ASSERT_EQ(contiguous.details["query_rows"], b);
  EXPECT_EQ(full.run.stats.flops, p * p * 4 * b * b * d);
  EXPECT_EQ(run(false, "layout=contiguous").run.stats.flops, p * p * 4 * b * b * d);
  EXPECT_EQ(striped.run.stats.flops, p * p * k * (k + 1) / 2 * 4 * t * t * d);
  EXPECT_EQ(contiguous.run.stats.flops, p * (p + 1) / 2 * 4 * b * b * d);
  EXPECT_EQ(striped.details["tiles_attended"]["min"], p * k * (k + 1) / 2);
  EXPECT_EQ(striped.details["tiles_attended"]["max"], p * k * (k + 1) / 2);
  EXPECT_EQ(contiguous.details["tiles_attended"]["min"], k);
  EXPECT_EQ(contiguous.details["tiles_attended"]["max"], p * k);
}

// On default.json causal stripes leave (k + 1) / 2k of every block's tiles of 32 x 32 (k
// chunks a side) and spread that work evenly, so the ring finishes sooner than without the
// mask, and sooner than contiguous causal blocks, which leave the last program the unmasked
// work of every block: with the default 64 rows a program (k = 2) and with 128 (k = 4).
TEST(RingAttention, CausalStripesFinishSoonerThanTheUnmaskedRing) {
  const Spec spec = spec_named("default.json");
  for (const char* seq : {"seq=0", "seq=8192"}) {
    auto run = [&](bool causal, const char* layout) {
      return run_harness(
          spec, {seq, "head_dim=64", causal ? "causal=true" : "causal=false", layout}, true);
    };
    const Outcome striped = run(true, "layout=striped");
    ASSERT_EQ(striped.details["chunk_rows"], 32);
    ASSERT_EQ(striped.details["query_rows"], 32);
    EXPECT_LT(striped.run.sim_time_ps, run(false, "layout=striped").run.sim_time_ps) << seq;
    EXPECT_LT(striped.run.sim_time_ps, run(false, "layout=contiguous").run.sim_time_ps) << seq;
    EXPECT_LT(striped.run.sim_time_ps, run(true, "layout=contiguous").run.sim_time_ps) << seq;
  }
}

// The harness's problem on a timing-only simulation, with the ring over every PE.
RingAttentionProblem problem(Simulation& sim, std::int64_t seq, std::int64_t head_dim, bool causal,
                             SeqLayout layout, DType dtype = DType::f16) {
  return make_ring_attention(sim, hardware_grid(sim.config()), seq, head_dim, causal, layout,
                             dtype);
}

TEST(RingAttention, EveryOutputByteIsWrittenOnceByItsOwnerWithoutRaces) {
  for (const Spec& spec : {tiny(), two_sips()})
    for (const SeqLayout layout : {SeqLayout::contiguous, SeqLayout::striped})
      for (const bool causal : {false, true}) {
        Simulation sim(spec, {.timing_only = true});
        const RingAttentionProblem p = problem(sim, 100, 16, causal, layout);
        const RunResult r = sim.launch(ring_attention, p);
        const auto bytes = static_cast<std::uint64_t>(p.seq * p.head_dim * 2);
        const Coverage c = r.coverage(p.out, bytes);
        EXPECT_TRUE(c.exactly_once()) << r.describe(c, p.out);
        const auto races = r.races();
        EXPECT_TRUE(races.empty()) << r.describe(races);
      }
}

// A broken variant: the ring is right, but ring position 0 also writes zeros over the first row
// of position 1's block, which it does not own.
void ring_attention_writing_a_foreign_row(tl::Context& tl, const RingAttentionProblem& p) {
  ring_attention(tl, p);
  if (p.position[static_cast<std::size_t>(global_program_id(tl))] != 0) return;
  const auto foreign = p.rows(1);
  tl.store(p.out + foreign.first * p.head_dim * dtype_size(p.dtype),
           tl.zeros({1, p.head_dim}, p.dtype));
}

TEST(RingAttention, AStoreToABlockItDoesNotOwnIsCaughtByCoverageRacesAndVerification) {
  Simulation sim(tiny(), {.seed = 5});
  const RingAttentionProblem p = problem(sim, 64, 16, false, SeqLayout::contiguous);
  write_ring_attention_inputs(sim, p, 5);
  const RunResult r = sim.launch(ring_attention_writing_a_foreign_row, p);
  const Coverage c = r.coverage(p.out, static_cast<std::uint64_t>(p.seq * p.head_dim * 2));
  ASSERT_EQ(c.overlaps.size(), 1u) << r.describe(c, p.out);
  EXPECT_EQ(c.overlaps.front().programs.size(), 2u);
  const auto races = r.races();
  ASSERT_FALSE(races.empty());
  EXPECT_TRUE(races.front().write_write);
  Outcome o;
  verify_ring_attention(o, sim, p, 5);
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_FALSE(*o.verified);
}

TEST(RingAttention, AKernelThatIgnoresTheCausalMaskFailsVerification) {
  Simulation sim(tiny(), {.seed = 5});
  const RingAttentionProblem causal = problem(sim, 64, 16, true, SeqLayout::contiguous);
  write_ring_attention_inputs(sim, causal, 5);
  RingAttentionProblem unmasked = causal;
  unmasked.causal = false;
  sim.launch(ring_attention, unmasked);
  Outcome o;
  verify_ring_attention(o, sim, causal, 5);
  ASSERT_TRUE(o.verified.has_value());
  EXPECT_FALSE(*o.verified);
  EXPECT_GT(o.max_rel_error, 0.1);  // an error of the size of the values, not of roundoff
}

// Communication bound. With one slot per channel a channel holds one message at a time: a
// message occupies its slot until its read-out (slot latency + bytes / slot bandwidth) is done,
// and only then can the next one be sent. Each program receives P - 1 blocks of m messages over
// its one inbound channel, so T >= B = (P - 1) m (latency + bytes / bandwidth). With slots read
// at 0.5 GB/s B is most of the time. The rest of the work (C: the same run with fast slots)
// overlaps the transfers: since the next block's receives are posted before the current block
// is attended to, only about one step's compute and the initial loads are exposed, so
// T < B + C / 2 (a kernel that received only after computing would take about B + C). A vector
// unit of 2 lanes makes the compute a sizeable part of the run, well above what B leaves out
// (each slot's credit travelling back before the next send).
TEST(RingAttention, TransfersBoundTheTimeAndHideTheCompute) {
  const Spec fast = tiny().with("system.messages.slots", 1).with("system.pe.vector.lanes", 2);
  const Spec slow = fast.with("system.messages.pe_sram.bandwidth_GBps", 0.5);
  const std::vector<std::string> params = {"seq=64", "head_dim=512", "dtype=f32"};
  const Outcome o = run_harness(slow, params, true);
  const Tick compute = run_harness(fast, params, true).run.sim_time_ps;
  const auto& m = slow.config().messages;
  const std::int64_t programs = 8, messages = o.details["messages_per_step"].get<std::int64_t>();
  ASSERT_EQ(messages, 8);  // blocks of 8 rows of 2 KiB, two rows per 4 KiB slot, K and V
  const auto bytes = o.details["chunk_rows"].get<std::uint64_t>() * 512 * 4;
  const Tick read = m.pe_sram_latency + m.pe_sram_bandwidth.transfer_time(bytes);
  const Tick bound = (programs - 1) * messages * read;
  EXPECT_GE(o.run.sim_time_ps, bound);
  EXPECT_LT(o.run.sim_time_ps, bound + compute / 2);
}

// Compute bound. Without a mask every program attends to all P blocks, each chunk with two
// GEMMs (scores nq x n x head_dim, then P.V nq x head_dim x n) on its PE's engine, which runs
// them one after another, each taking its start-up plus 2 M N K / peak at least: T >= the sum
// over one program's chunks. Here the blocks are long and head_dim short, so the compute side
// dominates and the ring's transfers hide behind it.
TEST(RingAttention, EveryProgramSpendsAtLeastItsGemmEngineTimeOnAllBlocks) {
  const Spec spec = tiny();
  const auto& cfg = spec.config();
  const components::GemmTimingModel gemm(cfg.pe.gemm);
  const std::int64_t programs = 8, rows = 64, head_dim = 16;
  const Outcome o = run_harness(spec, {"seq=512", "head_dim=16", "dtype=f16"}, true);
  ASSERT_EQ(o.details["chunk_rows"], rows);  // one chunk per block
  const auto nq = static_cast<std::uint64_t>(rows), d = static_cast<std::uint64_t>(head_dim);
  const Tick per_block = 2 * gemm.startup() + gemm.compute_time(nq, nq, d, DType::f16) +
                         gemm.compute_time(nq, d, nq, DType::f16);
  const Tick bound = programs * per_block;
  EXPECT_GE(o.run.sim_time_ps, bound);
  EXPECT_LT(o.details["last_program"]["recv_wait_ps"].get<double>(),
            0.1 * static_cast<double>(o.run.sim_time_ps));
}

TEST(RingAttention, UsageErrorsSayWhatWouldWork) {
  const auto expect_usage = [](const std::vector<std::string>& params, const std::string& text) {
    try {
      run_harness(tiny(), params, true);
      ADD_FAILURE() << "no UsageError for " << ::testing::PrintToString(params);
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(text)) << e.what();
    }
  };
  expect_usage({"seq=5"}, "seq = 5 is shorter than the ring of 8 programs");
  expect_usage({"seq=5"}, "use seq >= 8");
  expect_usage({"seq=64", "head_dim=2048", "dtype=f32"},
               "does not fit a message slot of 4096 bytes");
  expect_usage({"seq=64", "head_dim=2048", "dtype=f32"}, "use head_dim <= 1024");
  expect_usage({"seq=64", "programs=5"}, "part of one cube (1 to 4)");
  expect_usage({"seq=64", "programs=12"}, "a multiple of 4 up to 8");
  expect_usage({"seq=65536", "programs=1"}, "use a shorter seq or more programs");
  const KernelInfo& info = find_kernel("ring_attention");
  EXPECT_THROW(parse_params(info, {"causal=maybe"}), UsageError);
  EXPECT_THROW(parse_params(info, {"layout=zigzag"}), UsageError);
  EXPECT_THROW(parse_params(info, {"dtype=i32"}), UsageError);
  EXPECT_THROW(parse_params(info, {"seq=-1"}), UsageError);
}

}  // namespace
}  // namespace cubesim::kernels
