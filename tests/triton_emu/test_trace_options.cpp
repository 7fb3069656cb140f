// What SimOptions' trace fields put in a trace: arguments on slices, the PE selection, the link
// modes, the time window and flow arrows, checked by reading the trace back and counting events
// by track.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cubesim/cubesim.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spec_path.hpp"

namespace cubesim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr std::int64_t kChunk = 2048;  // f32 elements per program: 8 KiB
constexpr std::int64_t kM = 16, kK = 32, kN = 16;

// Every program copies its chunk of an interleaved buffer (so over NOC and UCIe links); PE 0 of
// each cube also runs a small GEMM.
struct Traced {
  nlohmann::json trace;
  std::uint64_t sim_time_ps = 0;
  int programs = 0;
};

Traced traced_run(SimOptions options) {
  const fs::path file =
      fs::temp_directory_path() / ("trace-options-" + std::to_string(::getpid()) + ".json");
  options.trace_path = file.string();
  Traced t;
  {
    Simulation sim(Spec::load(spec_path("tiny.json")), options);
    const std::int64_t programs = sim.config().cube.pes * sim.config().cubes_per_sip;
    t.programs = static_cast<int>(programs);
    const Ptr x = sim.alloc(programs * kChunk * 4), z = sim.alloc(programs * kChunk * 4);
    const Ptr a = sim.alloc(kM * kK * 2), b = sim.alloc(kK * kN * 2),
              c = sim.alloc(2 * kM * kN * 4);
    const RunResult r = sim.launch([&](tl::Context& tl) {
      const std::int64_t pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0);
      tl.store(z + pid * kChunk * 4, tl.load(x + pid * kChunk * 4, {kChunk}, DType::f32));
      if (tl.program_id(0) == 0) {
        auto h = tl.composite(tl::Op::gemm, tl.load(a, {kM, kK}, DType::f16),
                              tl.ref(b, {kK, kN}, DType::f16), c + tl.program_id(1) * kM * kN * 4);
        tl.wait(h);
      }
    });
    t.sim_time_ps = r.sim_time_ps;
  }
  std::ifstream in(file);
  t.trace = nlohmann::json::parse(in);
  fs::remove(file);
  return t;
}

// The trace's tracks: (pid, tid) -> "group/name".
std::map<std::pair<int, int>, std::string> tracks(const nlohmann::json& trace) {
  std::map<int, std::string> groups;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") groups[e["pid"]] = e["args"]["name"];
  std::map<std::pair<int, int>, std::string> named;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      named[{e["pid"], e["tid"]}] = groups[e["pid"]] + "/" + e["args"]["name"].get<std::string>();
  return named;
}

// The events of phase `ph`, each with its track's "group/name" under "track".
std::vector<nlohmann::json> events(const nlohmann::json& trace, const std::string& ph) {
  const auto named = tracks(trace);
  std::vector<nlohmann::json> out;
  for (auto e : trace["traceEvents"]) {
    if (e["ph"] != ph) continue;
    e["track"] = named.at({e["pid"], e["tid"]});
    out.push_back(e);
  }
  return out;
}

bool in_group(const nlohmann::json& e, const std::string& group) {
  return e["track"].get<std::string>().rfind(group + "/", 0) == 0;
}

std::uint64_t ps(const nlohmann::json& micros) {
  return static_cast<std::uint64_t>(std::llround(micros.get<double>() * 1e6));
}

TEST(TraceOptions, LoadsStoresAndGemmsCarryTheirArguments) {
  const Traced t = traced_run({});
  int loads = 0, stores = 0, gemms = 0;
  for (const auto& e : events(t.trace, "X")) {
    if (e["name"] == "store" || (e["name"] == "load" && e["args"]["dtype"] == "f32")) {
      (e["name"] == "load" ? loads : stores) += 1;
      EXPECT_EQ(e["args"]["bytes"], kChunk * 4);
      EXPECT_EQ(e["args"]["shape"], nlohmann::json::array({kChunk}));
      EXPECT_EQ(e["args"]["dtype"], "f32");
      EXPECT_THAT(e["args"]["address"].get<std::string>(), HasSubstr("0x"));
    } else if (e["name"] == "gemm") {
      ++gemms;
      EXPECT_TRUE(in_group(e, "GEMM engines"));
      EXPECT_EQ(e["args"]["M"], kM);
      EXPECT_EQ(e["args"]["N"], kN);
      EXPECT_EQ(e["args"]["K"], kK);
      EXPECT_EQ(e["args"]["dtype"], "f16");
    }
  }
  EXPECT_EQ(loads, t.programs);
  EXPECT_EQ(stores, t.programs);
  EXPECT_EQ(gemms, 2);  // one per cube
}

TEST(TraceOptions, PeSelectionKeepsOnlyTheTracksOfTheSelectedPes) {
  const Traced t = traced_run({.trace_pes = {"sip0.cube1.*", "sip0.cube0.pe[0-1]"}});
  std::set<std::string> pe_tracks;
  for (const auto& e : events(t.trace, "X"))
    if (in_group(e, "PEs")) pe_tracks.insert(e["track"]);
  EXPECT_EQ(pe_tracks, (std::set<std::string>{"PEs/sip0.cube0.pe0", "PEs/sip0.cube0.pe1",
                                              "PEs/sip0.cube1.pe0", "PEs/sip0.cube1.pe1",
                                              "PEs/sip0.cube1.pe2", "PEs/sip0.cube1.pe3"}));
}

TEST(TraceOptions, PatternThatMatchesNoPeIsAUsageErrorNamingIt) {
  try {
    traced_run({.trace_pes = {"sip0.cube0.*", "sip1.*"}});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--trace-pes sip1.*: matches no PE of this system "
                                    "(sip0.cube0.pe0 to sip0.cube1.pe3)"));
  }
}

// Per link track: bytes and slices.
std::map<std::string, std::pair<std::uint64_t, int>> link_slices(const nlohmann::json& trace) {
  std::map<std::string, std::pair<std::uint64_t, int>> per_link;
  for (const auto& e : events(trace, "X"))
    if (in_group(e, "links")) {
      per_link[e["track"]].first += e["args"]["bytes"].get<std::uint64_t>();
      per_link[e["track"]].second += 1;
    }
  return per_link;
}

TEST(TraceOptions, LinkModesCarryTheSameBytesInFewerSlicesOrNone) {
  const Traced none = traced_run({.trace_links = components::LinkTrace::none});
  const Traced busy = traced_run({.trace_links = components::LinkTrace::busy});
  const Traced all = traced_run({.trace_links = components::LinkTrace::all});
  EXPECT_TRUE(link_slices(none.trace).empty());
  const auto b = link_slices(busy.trace), a = link_slices(all.trace);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(b.size(), a.size());
  int busy_slices = 0, all_slices = 0;
  for (const auto& [link, bytes_slices] : a) {
    EXPECT_EQ(b.at(link).first, bytes_slices.first) << link;
    EXPECT_LE(b.at(link).second, bytes_slices.second) << link;
    busy_slices += b.at(link).second;
    all_slices += bytes_slices.second;
  }
  EXPECT_LT(busy_slices, all_slices);  // packets with short gaps between them: one busy period
  for (const auto& e : events(busy.trace, "X"))
    if (in_group(e, "links")) {
      EXPECT_GT(e["args"]["utilisation"].get<double>(), 0.0);
      EXPECT_LE(e["args"]["utilisation"].get<double>(), 1.0);
      EXPECT_LE(e["args"]["busy_ps"].get<std::uint64_t>(), ps(e["dur"]) + 1);
    }
}

TEST(TraceOptions, BusyPeriodsLongerThanTheRunMakeOneSlicePerLink) {
  const Traced all = traced_run({.trace_links = components::LinkTrace::all});
  const Traced joined = traced_run(
      {.trace_links = components::LinkTrace::busy, .trace_link_gap_ps = all.sim_time_ps});
  const auto a = link_slices(all.trace), j = link_slices(joined.trace);
  ASSERT_EQ(j.size(), a.size());
  for (const auto& [link, bytes_slices] : a) {
    EXPECT_EQ(j.at(link).first, bytes_slices.first) << link;
    EXPECT_EQ(j.at(link).second, 1) << link;
  }
}

TEST(TraceOptions, WindowKeepsOnlySlicesThatOverlapIt) {
  const Traced whole = traced_run({.trace_links = components::LinkTrace::all});
  const std::uint64_t from = whole.sim_time_ps / 4, to = whole.sim_time_ps / 2;
  const Traced part = traced_run({.trace_limits = {.window_start = from, .window_end = to},
                                  .trace_links = components::LinkTrace::all});
  const auto kept = events(part.trace, "X");
  ASSERT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), events(whole.trace, "X").size());
  for (const auto& e : kept) {
    EXPECT_LT(ps(e["ts"]), to) << e.dump();
    EXPECT_GT(ps(e["ts"]) + ps(e["dur"]), from) << e.dump();
  }
}

TEST(TraceOptions, FlowsJoinLoadsAndStoresToTheLinkSlicesTheyOccupy) {
  const Traced t = traced_run({.trace_flows = true});
  std::map<std::uint64_t, nlohmann::json> starts;
  for (const auto& e : events(t.trace, "s")) {
    EXPECT_TRUE(in_group(e, "PEs")) << e.dump();
    starts[e["id"]] = e;
  }
  // One flow per load and store of a traced PE.
  int accesses = 0;
  std::vector<nlohmann::json> link_busy;
  for (const auto& e : events(t.trace, "X")) {
    accesses += in_group(e, "PEs") && (e["name"] == "load" || e["name"] == "store");
    if (in_group(e, "links")) link_busy.push_back(e);
  }
  EXPECT_EQ(static_cast<int>(starts.size()), accesses);
  const auto steps = events(t.trace, "t");
  ASSERT_FALSE(steps.empty());
  std::set<std::uint64_t> continued;
  for (const auto& s : steps) {
    ASSERT_TRUE(starts.count(s["id"])) << s.dump();
    continued.insert(s["id"].get<std::uint64_t>());
    const auto& start = starts.at(s["id"]);
    EXPECT_EQ(s["cat"], start["cat"]);
    EXPECT_EQ(s["name"], start["name"]);
    EXPECT_GT(ps(s["ts"]), ps(start["ts"]));
    // Inside a busy slice of its link, so the viewer binds it there.
    bool enclosed = false;
    for (const auto& l : link_busy)
      enclosed = enclosed || (l["track"] == s["track"] && ps(l["ts"]) <= ps(s["ts"]) &&
                              ps(s["ts"]) < ps(l["ts"]) + ps(l["dur"]));
    EXPECT_TRUE(enclosed) << s.dump();
  }
  EXPECT_GT(continued.size(), starts.size() / 2);
}

// Communication shows in the trace: each send's transfer on a DMA lane of its sender, recv and
// recv_async waits, barrier waits and atomics on the PE tracks, each with its peer and bytes;
// vector work says how many elements of which ops it paid for; every flow ends ("f").
TEST(TraceOptions, SendsRecvsBarriersAndAtomicsShowWithTheirPeersAndBytes) {
  constexpr std::int64_t kLen = 256;  // f32 elements per message
  const fs::path file =
      fs::temp_directory_path() / ("trace-messages-" + std::to_string(::getpid()) + ".json");
  std::int64_t programs = 0, per_cube = 0;
  std::vector<std::string> pe_names;
  {
    Simulation sim(Spec::load(spec_path("tiny.json")),
                   {.trace_path = file.string(), .trace_flows = true});
    per_cube = sim.config().cube.pes;
    programs = per_cube * sim.config().cubes_per_sip;
    const Ptr in = sim.alloc(programs * kLen * 4), out = sim.alloc(programs * kLen * 4),
              counter = sim.alloc(8);
    sim.launch([&](tl::Context& tl) {
      const std::int64_t me = tl.program_id(0), cube = tl.program_id(1), n = tl.num_programs(0);
      const std::int64_t at = (cube * n + me) * kLen * 4;
      const tl::Peer next = tl::program((me + 1) % n, cube),
                     prev = tl::program((me + n - 1) % n, cube);
      tl.send(next, tl.load(in + at, {kLen}, DType::f32) * 2.0);
      tl::RecvHandle h = tl.recv_async(prev, {kLen}, DType::f32);
      tl.send(next, tl.wait(h));
      const tl::Tile z = tl.recv(prev, {kLen}, DType::f32);
      if (me == 0 && cube == 0) tl.store(out + at, z * 3.0);  // the others wait at the barrier
      tl.barrier(tl::Scope::all);
      tl.atomic_add(counter, std::int64_t{1});
      tl.store(out + at, z);
    });
  }
  std::ifstream in(file);
  const nlohmann::json trace = nlohmann::json::parse(in);
  fs::remove(file);

  // The PE that runs program (pe, cube), as the trace names it: "sip0.cube<cube>.pe<pe>".
  auto pe_name = [](std::int64_t pe, std::int64_t cube) {
    return "sip0.cube" + std::to_string(cube) + ".pe" + std::to_string(pe);
  };
  int sends = 0, recvs = 0, async_waits = 0, barriers = 0, atomics = 0, vectors = 0;
  for (const auto& e : events(trace, "X")) {
    const std::string track = e["track"];
    const std::string name = e["name"];
    if (name == "send") {
      ++sends;
      ASSERT_TRUE(in_group(e, "DMA (async copies)")) << e.dump();
      EXPECT_EQ(e["args"]["bytes"], kLen * 4);
      // The sender's lane ("sip0.cube1.pe2.dma0") sends to the next PE of its cube.
      const std::string sender =
          track.substr(track.find('/') + 1, track.rfind(".dma") - track.find('/') - 1);
      const std::int64_t cube = sender[9] - '0', pe = std::stoll(sender.substr(13));
      EXPECT_EQ(e["args"]["to"], pe_name((pe + 1) % per_cube, cube)) << e.dump();
      EXPECT_THAT(e["args"]["channel"].get<std::string>(), HasSubstr(sender + " -> "));
    } else if (name == "recv" || name == "recv_async wait") {
      ++(name == "recv" ? recvs : async_waits);
      ASSERT_TRUE(in_group(e, "PEs")) << e.dump();
      const std::string receiver = track.substr(4);
      const std::int64_t cube = receiver[9] - '0', pe = std::stoll(receiver.substr(13));
      EXPECT_EQ(e["args"]["from"], pe_name((pe + per_cube - 1) % per_cube, cube)) << e.dump();
      EXPECT_EQ(e["args"]["bytes"], kLen * 4);
      EXPECT_EQ(e["args"]["seq"], name == "recv" ? 1 : 0);
    } else if (name == "barrier") {
      ++barriers;
      EXPECT_TRUE(in_group(e, "PEs"));
      EXPECT_EQ(e["args"]["members"], programs);
      // Every member waits for the release, the last to arrive for the barrier's latency only.
    } else if (name == "atomic_add") {
      ++atomics;
      EXPECT_EQ(e["args"]["bytes"], 8);
      EXPECT_EQ(e["args"]["type"], "i64");
    } else if (name == "vector" && in_group(e, "PEs")) {
      ++vectors;
      EXPECT_EQ(e["args"]["elements"], kLen) << e.dump();
      EXPECT_EQ(e["args"]["ops"], "simple") << e.dump();
    }
  }
  EXPECT_EQ(sends, 2 * programs);
  EXPECT_EQ(recvs, programs);
  EXPECT_EQ(async_waits, programs);
  EXPECT_EQ(barriers, programs);
  EXPECT_EQ(atomics, programs);
  EXPECT_EQ(vectors, programs + 1);  // x 2.0 on every program, x 3.0 on one

  // Every flow that starts ends, later, on the track it started on.
  std::map<std::uint64_t, nlohmann::json> starts;
  for (const auto& e : events(trace, "s")) starts[e["id"]] = e;
  const auto ends = events(trace, "f");
  EXPECT_EQ(ends.size(), starts.size());
  for (const auto& f : ends) {
    ASSERT_TRUE(starts.count(f["id"])) << f.dump();
    EXPECT_EQ(f["track"], starts.at(f["id"])["track"]);
    EXPECT_GT(ps(f["ts"]), ps(starts.at(f["id"])["ts"]));
    EXPECT_EQ(f["bp"], "e");
  }
  int send_flows = 0;
  for (const auto& [id, s] : starts) send_flows += in_group(s, "DMA (async copies)");
  EXPECT_EQ(send_flows, 2 * programs);
}

}  // namespace
}  // namespace cubesim
