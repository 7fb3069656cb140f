// End-to-end tests of `cubesim probe`: every bound derived here from tiny.json's figures, what
// the simulation delivers no faster than it and close to it on an idle system, the checks, and
// bad input.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// tiny.json: 1 ns hops, no router pipeline, 32 GB/s NOC links and ports, 64 GB/s of HBM per
// cube over 4 channels (16 GB/s each, all on node (0, 0)), 50 ns HBM latency, 1 KiB channel
// interleave; message slots in the receiver's SRAM (read at 512 GB/s, no latency); the host
// path's defaults (2 us setup, 1 us link, 55 GB/s, 20 ns IO die into node (0, 0)).
constexpr double kNs = 1000;  // ps

double ps_at(double bytes, double GBps) {
  return bytes / GBps * 1000;  // bytes / (GB/s) = ns
}

class CliProbe : public CliTest {
 protected:
  json probe(const std::vector<std::string>& extra, CliResult* shown = nullptr) {
    std::vector<std::string> args = {"probe", spec_file("tiny.json"), "--json",
                                     path("p.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = cubesim(args);
    EXPECT_EQ(r.code, 0) << show(r);
    if (shown) *shown = r;
    return read_json(path("p.json"));
  }
  static const json& find(const json& j, const std::string& name) {
    for (const auto& c : j["cases"])
      if (c["name"] == name) return c;
    ADD_FAILURE() << "no case " << name;
    static const json none;
    return none;
  }
};

TEST_F(CliProbe, TheCasesTinyHasAndTheirChecksPass) {
  CliResult r;
  const json j = probe({}, &r);
  std::vector<std::string> names;
  for (const auto& c : j["cases"]) names.push_back(c["name"]);
  // All four channels sit on PE 0's node (no farther slice); one SIP.
  EXPECT_EQ(names, (std::vector<std::string>{"hbm.own_slice", "hbm.ucie", "pe.mesh", "pe.ucie",
                                             "host.to_device", "host.to_host"}));
  EXPECT_EQ(j["passed"], true);
  for (const auto& k : j["checks"]) EXPECT_EQ(k["pass"], true) << k.dump();
  EXPECT_THAT(r.out, HasSubstr("PASS  latency grows with distance: hbm.own_slice <= hbm.ucie"));
}

// A 64-byte load from PE 0's own slice: the request's way (none) and the access (50 ns), then
// the channel's serialisation (64 B at 16 GB/s), the slowest link. 32 KiB spread over the four
// channels: the PE's ejection port (32 KiB at 32 GB/s) bounds it.
TEST_F(CliProbe, AReadFromTheOwnSliceIsBoundByTheAccessAndThePort) {
  const json c = find(probe({"--case", "hbm.own_slice"}), "hbm.own_slice");
  EXPECT_EQ(c["latency"]["bytes"], 64);
  EXPECT_DOUBLE_EQ(c["latency"]["bound_ps"].get<double>(), 50 * kNs + ps_at(64, 16));
  EXPECT_EQ(c["latency"]["simulated_ps"], c["latency"]["bound_ps"]);  // one packet, idle
  EXPECT_DOUBLE_EQ(c["way_ps"]["request_and_access"].get<double>(), 50 * kNs);
  EXPECT_EQ(c["hops"]["mesh"], 0);
  const json& ref = c["reference"];
  EXPECT_EQ(ref["bytes"], 32768);
  EXPECT_DOUBLE_EQ(ref["bound_ps"].get<double>(), 50 * kNs + ps_at(32768, 32));
  EXPECT_EQ(ref["bottleneck"], "sip0.cube0.pe0.eject");
  const double sim = ref["simulated_ps"].get<double>(), bound = ref["bound_ps"].get<double>();
  EXPECT_GE(sim, bound);
  EXPECT_LE(sim, bound * 1.05) << "an idle read reaches its bound but for its first packets";
  // The sweep stops at the PE's SRAM (256 KiB) and says so.
  EXPECT_EQ(c["sweep"].back()["bytes"], 256 << 10);
  EXPECT_THAT(c["sweep_limit"].get<std::string>(), HasSubstr("system.pe.sram_KiB"));
}

// A message of 64 B to PE 3 (node (1, 1)): two mesh hops of 1 ns, then its last link's
// serialisation (64 B at 32 GB/s); the read-out of the slot (64 B at 512 GB/s) follows.
TEST_F(CliProbe, AMessageAcrossTheMeshIsBoundByItsHopsAndItsLastLink) {
  const json c = find(probe({"--case", "pe.mesh"}), "pe.mesh");
  EXPECT_EQ(c["hops"]["mesh"], 2);
  EXPECT_EQ(c["hops"]["ports"], 2);
  EXPECT_DOUBLE_EQ(c["way_ps"]["mesh"].get<double>(), 2 * kNs);
  EXPECT_DOUBLE_EQ(c["way_ps"]["request_and_access"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(c["latency"]["bound_ps"].get<double>(), 2 * kNs + ps_at(64, 32));
  EXPECT_DOUBLE_EQ(c["latency"]["simulated_ps"].get<double>(),
                   2 * kNs + ps_at(64, 32) + ps_at(64, 512));

  // 1 MiB in slot-sized messages: the links' 32 GB/s.
  const json& last = c["sweep"].back();
  EXPECT_EQ(last["bytes"], 1 << 20);
  EXPECT_NEAR(last["utilisation"].get<double>(), 1.0, 0.01);
}

// The host path: setup, the link, the IO die and the access, then 55 GB/s.
TEST_F(CliProbe, TheHostPathIsItsClosedForm) {
  const json c = find(probe({"--case", "host.to_device"}), "host.to_device");
  const double way = 2000 * kNs + 1000 * kNs + 20 * kNs + 50 * kNs;
  for (const auto& p : c["sweep"])
    EXPECT_NEAR(p["simulated_ps"].get<double>(), way + ps_at(p["bytes"].get<double>(), 55), 1)
        << p["bytes"];
  EXPECT_EQ(c["sweep"].front()["bottleneck"], "sip0.host_link.to_device");
}

// More SIPs add the inter-SIP cases; the flow model's figures obey the same bounds.
TEST_F(CliProbe, TwoSipsAddTheirCasesAndTheFlowModelKeepsToTheBounds) {
  CliResult r;
  const json j = probe({"--set", "system.sips.count=2", "--network", "flow"}, &r);
  EXPECT_EQ(find(j, "hbm.inter_sip")["hops"]["inter_sip"], 1);
  EXPECT_EQ(find(j, "pe.inter_sip")["hops"]["inter_sip"], 1);
  EXPECT_EQ(j["passed"], true) << r.out;
  EXPECT_EQ(j["network"], "flow");
}

TEST_F(CliProbe, AnUnknownCaseNamesTheCasesTheSystemHas) {
  const auto r = cubesim({"probe", spec_file("tiny.json"), "--case", "hbm.cube"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_THAT(r.err, HasSubstr("--case hbm.cube: this system has no such case; its cases: "
                               "hbm.own_slice, hbm.ucie, pe.mesh"));
  const auto plot = cubesim({"probe", spec_file("tiny.json"), "--plot", path("p.txt").string()});
  EXPECT_EQ(plot.code, 2) << show(plot);
  EXPECT_THAT(plot.err, HasSubstr("name a .png or .svg file"));
}

}  // namespace
}  // namespace cubesim::test
