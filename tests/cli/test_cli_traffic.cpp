// End-to-end tests of `cubesim traffic`: the JSON keys a study reads, delivered throughput
// measured against the pattern's bound, a sweep whose curve saturates at the bound, and bad
// input refused before anything runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class CliTraffic : public CliTest {
 protected:
  const std::string spec = spec_file("default.json");
};

TEST_F(CliTraffic, OneLoadReportsOfferedAndDeliveredAgainstTheBound) {
  const std::string out = path("t.json").string();
  const auto r = cubesim({"traffic", spec, "--pattern", "bit-complement", "--load", "0.5",
                          "--cycles", "1000", "--json", out});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(read_text(out));
  // bit-complement on a 4x4 mesh: the middle link of each row carries two nodes' whole rate.
  EXPECT_DOUBLE_EQ(j["bound_fraction_of_link"].get<double>(), 0.5);
  EXPECT_NEAR(j["offered_load"].get<double>(), 0.5, 0.03);
  EXPECT_NEAR(j["delivered_load"].get<double>(), j["offered_load"].get<double>(), 0.02);
  EXPECT_NEAR(j["delivered_fraction_of_link"].get<double>(),
              j["delivered_load"].get<double>() * 0.5, 1e-9);
  EXPECT_GT(j["latency_ns_p99"].get<double>(), j["latency_ns_mean"].get<double>());
  EXPECT_EQ(j["saturated"], false);
  EXPECT_EQ(j["nodes"], 16);
  EXPECT_THAT(r.out, HasSubstr("bit-complement traffic on default"));
}

TEST_F(CliTraffic, ASweepSaturatesPastTheBound) {
  const std::string out = path("s.json").string();
  const auto r = cubesim({"traffic", spec, "--pattern", "transpose", "--sweep", "--cycles", "1000",
                          "--json", out, "--csv", path("s.csv").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(read_text(out));
  ASSERT_EQ(j["points"].size(), 13u);
  for (const auto& p : j["points"]) {
    const double load = p["load"].get<double>();
    if (load <= 0.9) {
      EXPECT_EQ(p["saturated"], false) << load;
    } else if (load >= 1.1) {
      EXPECT_EQ(p["saturated"], true) << load;
    }
  }
  EXPECT_THAT(read_text(path("s.csv")), HasSubstr("offered_load,statistic,latency_ps"));
}

// The curve: latency (log scale, it spans decades) against offered load, mean and p99 as two
// lines; no CSV is left behind unless asked for.
TEST_F(CliTraffic, ASweepPlotsLatencyAgainstLoad) {
  const auto r = cubesim({"traffic", spec, "--pattern", "neighbor", "--sweep", "--cycles", "500",
                          "--plot", path("curve.svg").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  const std::string svg = read_text(path("curve.svg"));
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("statistic=p99"));
  EXPECT_THAT(svg, HasSubstr("latency"));
  EXPECT_THAT(svg, HasSubstr("offered load (fraction of the bound)"));  // what x is, once
  for (const auto& f : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(f.path().string().find(".csv"), std::string::npos) << f.path();
  // The x axis has round ticks, not a label at each measured load (they ran into each other:
  // "0.050.10.1568..."); the log y axis labels its decades and the 2s and 5s between them.
  const auto c = cubesim({"traffic", spec, "--pattern", "neighbor", "--sweep", "--cycles", "500",
                          "--csv", path("curve.csv").string()});
  ASSERT_EQ(c.code, 0) << show(c);
  std::istringstream rows(read_text(path("curve.csv")));
  std::string line;
  std::getline(rows, line);  // the header
  int measured = 0;
  while (std::getline(rows, line)) {
    const std::string offered = line.substr(0, line.find(','));
    if (offered.size() <= 4) continue;  // a round value might be a tick of its own
    EXPECT_THAT(svg, Not(HasSubstr(">" + offered + "<"))) << offered;
    ++measured;
  }
  EXPECT_GT(measured, 0);
  EXPECT_THAT(svg, Not(HasSubstr("mathdefault")));  // no 10^k labels: plain numbers
}

// stderr is a pipe here, so progress shows only when asked for with --progress: a line a
// second (the first at once, after the first slice of 2^18 events, which 20000 cycles of 16
// nodes at half load pass) saying what runs, its simulated time and its event rate.
TEST_F(CliTraffic, ProgressShowsOnlyWhenAskedOffATerminalAndNeverWhenQuiet) {
  const std::vector<std::string> args = {"traffic", spec,  "--pattern", "uniform",
                                         "--load",  "0.5", "--cycles",  "20000"};
  auto with = [&](std::vector<std::string> flags) {
    flags.insert(flags.end(), args.begin(), args.end());
    return cubesim(flags);
  };
  const auto shown = with({"--progress"});
  ASSERT_EQ(shown.code, 0) << show(shown);
  EXPECT_THAT(shown.err, AllOf(HasSubstr("load 0.5 traffic: simulated "), HasSubstr(" events at "),
                               HasSubstr("/s, "), HasSubstr(" messages measured")));
  EXPECT_THAT(shown.err, Not(HasSubstr("\r"))) << "off a terminal, lines are not redrawn";
  for (const auto& flags : {std::vector<std::string>{}, std::vector<std::string>{"--quiet"}}) {
    const auto r = with(flags);
    ASSERT_EQ(r.code, 0) << show(r);
    EXPECT_EQ(r.err, "") << show(r);
    EXPECT_EQ(r.out, shown.out);  // the same run and report either way
  }
  expect_usage_error({"--quiet", "--progress", "traffic", spec, "--load", "0.5"}, "--quiet");
}

TEST_F(CliTraffic, BadInputIsAnErrorBeforeAnythingRuns) {
  expect_usage_error({"traffic", spec, "--pattern", "tornado", "--load", "0.5"},
                     "--pattern: unknown pattern 'tornado'; choose uniform, transpose, "
                     "bit-complement, hotspot or neighbor");
  expect_usage_error({"traffic", spec, "--scope", "rack", "--load", "0.5"},
                     "--scope: unknown scope 'rack'");
  expect_usage_error({"traffic", spec}, "--load: give the offered load");
  expect_usage_error({"traffic", spec, "--pattern", "bit-complement", "--load", "3"},
                     "--load 3: 3 x the bound (0.5 of a link) is more than one packet per node "
                     "per link cycle; the most is 2");
  expect_usage_error({"traffic", spec, "--pattern", "transpose", "--scope", "sip", "--load", "1"},
                     "it needs --scope cube and a square mesh");
  expect_usage_error({"traffic", spec, "--load", "0.5", "--plot", path("p.png").string()},
                     "--plot draws a sweep's curve: add --sweep");
  expect_usage_error({"traffic", spec, "--load", "0.5", "--packet-bytes", "8"},
                     "/system/cube/noc/packet_bytes");
  // Loads below the least one, zero, negative and not-a-number loads (a load of 1e-50 used to
  // grow host memory at simulated time 0; nan ran and reported nothing).
  for (const char* load : {"1e-50", "5e-324", "1e-7", "0", "-1", "nan"})
    expect_usage_error({"traffic", spec, "--load", load}, "give a number of at least 1e-06");
}

TEST_F(CliTraffic, AWindowWithTooFewMessagesSaysSaturationIsUnknown) {
  // 1e-5 of the bound over 1000 cycles: 16 nodes send about 0.2 messages, too few to judge.
  const std::string out = path("few.json").string();
  const auto r = cubesim({"traffic", spec, "--load", "1e-5", "--cycles", "1000", "--json", out});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("unknown"));
  EXPECT_THAT(r.out, HasSubstr("too few messages to judge saturation"));
  EXPECT_TRUE(nlohmann::json::parse(read_text(out))["saturated"].is_null());
}

}  // namespace
}  // namespace cubesim::test
