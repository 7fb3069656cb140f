#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "emu/stats.hpp"

using namespace cubesim::emu;

TEST(Counter, AddsUp) {
  StatRegistry r;
  Counter& c = r.counter("noc.bytes", "bytes moved on the NOC");
  c.add(10);
  c.add();
  EXPECT_EQ(c.value(), 11u);
  EXPECT_EQ(&r.counter("noc.bytes"), &c);  // same name, same statistic
}

TEST(Accumulator, MatchesTwoPassMeanAndStddevOnRandomSamples) {
  StatRegistry r;
  Accumulator& a = r.accumulator("latency_ns");
  std::mt19937_64 rng(3);
  std::normal_distribution<double> dist(50.0, 7.0);
  std::vector<double> xs(10'000);
  for (double& x : xs) a.sample(x = dist(rng));
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  double var = 0;
  for (double x : xs) var += (x - mean) * (x - mean);
  var /= static_cast<double>(xs.size() - 1);
  EXPECT_NEAR(a.mean(), mean, 1e-12 * std::abs(mean));
  EXPECT_NEAR(a.stddev(), std::sqrt(var), 1e-9 * std::sqrt(var));
  EXPECT_EQ(a.count(), xs.size());
  EXPECT_EQ(a.min(), *std::min_element(xs.begin(), xs.end()));
  EXPECT_EQ(a.max(), *std::max_element(xs.begin(), xs.end()));
}

TEST(Histogram, BucketsUnderflowAndOverflow) {
  StatRegistry r;
  Histogram& h = r.histogram("hops", 0, 8, 4);  // buckets of width 2
  for (double x : {-1.0, 0.0, 1.9, 2.0, 7.99, 8.0, 100.0}) h.sample(x);
  EXPECT_EQ(h.buckets(), (std::vector<std::uint64_t>{2, 1, 0, 1}));
  EXPECT_EQ(h.underflow(), 1u);
  EXPECT_EQ(h.overflow(), 2u);
  EXPECT_EQ(h.count(), 7u);
  EXPECT_THROW(r.histogram("bad", 1, 1, 4), std::invalid_argument);
}

TEST(StatRegistry, DumpsNestedJsonByDottedName) {
  StatRegistry r;
  r.counter("noc.cube0.link_0_1.bytes").add(4096);
  r.counter("noc.cube0.link_0_1.packets").add(1);
  r.accumulator("hbm.cube0.latency_ns").sample(120);
  r.counter("events").add(7);
  const nlohmann::json j = r.to_json();
  EXPECT_EQ(j["noc"]["cube0"]["link_0_1"]["bytes"], 4096);
  EXPECT_EQ(j["noc"]["cube0"]["link_0_1"]["packets"], 1);
  EXPECT_EQ(j["hbm"]["cube0"]["latency_ns"]["mean"], 120.0);
  EXPECT_EQ(j["events"], 7);
  // The dump is valid JSON text that parses back to the same value.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
  EXPECT_EQ(r.descriptions().size(), 4u);
}

TEST(StatRegistry, RejectsClashingNames) {
  StatRegistry r;
  r.counter("a.b");
  EXPECT_THROW(r.accumulator("a.b"), std::invalid_argument);  // another kind
  EXPECT_THROW(r.counter("a.b.c"), std::invalid_argument);    // inside a statistic
  EXPECT_THROW(r.counter("a"), std::invalid_argument);        // already a group
  EXPECT_THROW(r.counter(""), std::invalid_argument);
  EXPECT_THROW(r.counter("x..y"), std::invalid_argument);
  EXPECT_THROW(r.counter(".x"), std::invalid_argument);
}
