// tl.switch_reduce (in-network reduction, triton_emu/ops/switch_reduce.hpp and
// components/network/switch_reducer.hpp): every member gets the sum of the members' tiles, in
// every dtype the switch adds, through the inter-SIP and the UCIe switch; on an idle system one
// reduction takes the slowest member's way up, the adder, and the way down, computed here from
// the routes; a reduction queues on a link's adder behind the one before it; every misuse is a
// kernel fault naming the call, the PE and the spec field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cubesim/cubesim.hpp>
#include <fstream>

#include "components/system/system.hpp"
#include "error_of.hpp"
#include "random_values.hpp"
#include "spec_path.hpp"

namespace cubesim {
namespace {

using components::Route;
using components::SwitchLevel;
using emu::Tick;
using testing::AllOf;
using testing::HasSubstr;
using tl::Scope;

// tiny.json (2 cubes of 4 PEs a SIP) as `sips` SIPs on an inter-SIP switch and a UCIe switch,
// both reducing the dtypes listed.
nlohmann::json switched(std::uint32_t sips, const nlohmann::json& dtypes) {
  std::ifstream in(spec_path("tiny.json"));
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["system"]["sips"]["count"] = sips;
  doc["system"]["inter_sip"]["topology"] = "switch";
  doc["system"]["inter_sip"]["switch_latency_ns"] = 40;
  doc["system"]["inter_sip"]["switch_reduction"] = {{"dtypes", dtypes}, {"bandwidth_GBps", 25}};
  doc["system"]["ucie"]["topology"] = "switch";
  doc["system"]["ucie"]["switch_latency_ns"] = 7;
  doc["system"]["ucie"]["switch_reduction"] = {{"dtypes", dtypes}};
  return doc;
}

// Every program reduces `rounds` random tiles of `dtype` over `scope`; each gets the sum of its
// place's tiles (fp64 reference), within `tol` relative to the sum of magnitudes.
void sums_arrive(Scope scope, DType dtype, double tol, components::NetworkModel model) {
  Simulation sim(Spec::from_json(switched(3, {"f32", "bf16", "f16", "i32"})), {.network = model});
  const auto& c = sim.config();
  const std::int64_t pes = c.cube.pes, cubes = c.cubes_per_sip, sips = c.sips;
  const std::int64_t n = 300, rounds = 3, size = dtype_size(dtype);
  const std::int64_t programs = pes * cubes * sips;
  const auto at = [&](std::int64_t g, std::int64_t r) { return ((g * rounds + r) * n) * size; };
  const Ptr in = sim.alloc(static_cast<std::uint64_t>(programs * rounds * n * size));
  const Ptr out = sim.alloc(static_cast<std::uint64_t>(programs * rounds * n * size));
  std::vector<std::vector<double>> vals(static_cast<std::size_t>(programs * rounds));
  for (std::int64_t g = 0; g < programs; ++g)
    for (std::int64_t r = 0; r < rounds; ++r) {
      const auto drawn =
          random_values<float>(static_cast<std::size_t>(n), static_cast<std::uint64_t>(g * 7 + r));
      std::vector<double> v(drawn.begin(), drawn.end());
      if (dtype == DType::i32)
        for (double& x : v) x = std::round(x * 1000);
      if (dtype == DType::f32) {
        sim.write<float>(in + at(g, r), std::vector<float>(v.begin(), v.end()));
      } else if (dtype == DType::bf16) {
        std::vector<bfloat16> b(v.begin(), v.end());
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(b[i]);
        sim.write<bfloat16>(in + at(g, r), b);
      } else if (dtype == DType::f16) {
        std::vector<half> h(v.begin(), v.end());
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(h[i]);
        sim.write<half>(in + at(g, r), h);
      } else {
        sim.write<std::int32_t>(in + at(g, r), std::vector<std::int32_t>(v.begin(), v.end()));
      }
      vals[static_cast<std::size_t>(g * rounds + r)] = std::move(v);
    }
  sim.launch([&](tl::Context& tl) {
    const std::int64_t g = (tl.program_id(2) * cubes + tl.program_id(1)) * pes + tl.program_id(0);
    std::vector<tl::ReduceHandle> handles;
    for (std::int64_t r = 0; r < rounds; ++r)  // posted together: reductions overlap
      handles.push_back(tl.switch_reduce_async(tl.load(in + at(g, r), {n}, dtype), scope));
    for (std::int64_t r = 0; r < rounds; ++r) tl.store(out + at(g, r), tl.wait(handles[r]));
  });
  for (std::int64_t g = 0; g < programs; ++g) {
    const std::int64_t pe = g % pes, cube = (g / pes) % cubes, sip = g / (pes * cubes);
    for (std::int64_t r = 0; r < rounds; ++r) {
      std::vector<double> want(static_cast<std::size_t>(n), 0.0), mag(want.size(), 0.0);
      const std::int64_t members = scope == Scope::all ? sips : cubes;
      for (std::int64_t m = 0; m < members; ++m) {
        const std::int64_t h =
            scope == Scope::all ? (m * cubes + cube) * pes + pe : (sip * cubes + m) * pes + pe;
        const auto& v = vals[static_cast<std::size_t>(h * rounds + r)];
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += v[i], mag[i] += std::abs(v[i]);
      }
      std::vector<double> got(want.size());
      if (dtype == DType::f32) {
        const auto f = sim.read<float>(out + at(g, r), static_cast<std::size_t>(n));
        got.assign(f.begin(), f.end());
      } else if (dtype == DType::bf16) {
        for (std::size_t i = 0; const bfloat16 x : sim.read<bfloat16>(out + at(g, r), n))
          got[i++] = static_cast<double>(x);
      } else if (dtype == DType::f16) {
        for (std::size_t i = 0; const half x : sim.read<half>(out + at(g, r), n))
          got[i++] = static_cast<double>(x);
      } else {
        const auto f = sim.read<std::int32_t>(out + at(g, r), static_cast<std::size_t>(n));
        got.assign(f.begin(), f.end());
      }
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_LE(std::abs(got[i] - want[i]), tol * mag[i])
            << "program " << g << " round " << r << " element " << i;
    }
  }
}

TEST(SwitchReduce, EveryMemberGetsTheSumAcrossSipsInF32) {
  sums_arrive(Scope::all, DType::f32, 1e-6, components::NetworkModel::packet);
}
TEST(SwitchReduce, EveryMemberGetsTheSumAcrossCubesInBf16) {
  sums_arrive(Scope::sip, DType::bf16, 1.0 / 128, components::NetworkModel::packet);
}
TEST(SwitchReduce, EveryMemberGetsTheSumInF16WithTheFlowModel) {
  sums_arrive(Scope::all, DType::f16, 1.0 / 1024, components::NetworkModel::flow);
}
TEST(SwitchReduce, IntegersAddExactly) {
  sums_arrive(Scope::sip, DType::i32, 0.0, components::NetworkModel::packet);
}

// The uncontended time of a route for one packet of `bytes`: its hop latencies and the
// serialisation at its slowest link.
Tick one_packet(const components::Topology& t, const Route& r, std::uint64_t bytes) {
  Tick sum = 0, ser = 0;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    sum += r.latency[i];
    ser = std::max(ser, t.link(r.links[i]).bandwidth.transfer_time(bytes));
  }
  return sum + ser;
}

// Only PE 3 of cube 1 of every SIP reduces, one packet of f32: each member's wait ends when the
// sum is back, slowest part up + the adder (bytes / 25 GB/s) + its way down; a second reduction
// posted at once waits for the first on every adder, so it ends one adder time later.
void one_reduction_times(components::NetworkModel model) {
  Simulation sim(Spec::from_json(switched(3, {"f32"})), {.network = model});
  const auto& t = sim.system().network().topology();
  const auto& c = sim.config();
  const std::int64_t n = 200;  // 800 bytes: one packet of tiny's 1 KiB
  const std::uint64_t bytes = n * 4;
  Tick up = 0;
  std::vector<Tick> down;
  for (std::uint32_t sip = 0; sip < c.sips; ++sip) {
    const std::uint32_t pe = (sip * c.cubes_per_sip + 1) * c.cube.pes + 3;
    up = std::max(up, one_packet(t, t.pe_to_switch(pe, SwitchLevel::inter_sip), bytes));
    down.push_back(one_packet(
        t,
        t.switch_to_pe(SwitchLevel::inter_sip, t.switch_connection(pe, SwitchLevel::inter_sip), pe),
        bytes));
  }
  const Tick adder = emu::Bandwidth::from_GBps(25).transfer_time(bytes);
  std::vector<Tick> first(c.sips), second(c.sips);
  sim.launch([&](tl::Context& tl) {
    if (tl.program_id(1) != 1 || tl.program_id(0) != 3) return;
    const tl::Tile x = tl.full({n}, 1.5, DType::f32);
    const Tick t0 = tl.now();
    tl::ReduceHandle a = tl.switch_reduce_async(x, Scope::all);
    tl::ReduceHandle b = tl.switch_reduce_async(x, Scope::all);
    tl.wait(a);
    first[static_cast<std::size_t>(tl.program_id(2))] = tl.now() - t0;
    tl.wait(b);
    second[static_cast<std::size_t>(tl.program_id(2))] = tl.now() - t0;
  });
  for (std::uint32_t sip = 0; sip < c.sips; ++sip) {
    EXPECT_EQ(first[sip], up + adder + down[sip]) << "sip " << sip;
    // The second part follows the first up the same links (a packet behind it), so it is added
    // one adder time after the first at the latest. The flow model spaces a PE's transfers by
    // their share of its DMA window instead (flow_network.hpp): later, never earlier.
    if (model == components::NetworkModel::packet)
      EXPECT_EQ(second[sip], up + 2 * adder + down[sip]) << "sip " << sip;
    else
      EXPECT_GE(second[sip], up + 2 * adder + down[sip]) << "sip " << sip;
  }
}

TEST(SwitchReduce, OneReductionTakesTheWayUpTheAdderAndTheWayDown) {
  one_reduction_times(components::NetworkModel::packet);
}
TEST(SwitchReduce, TheFlowModelTimesItAlike) {
  one_reduction_times(components::NetworkModel::flow);
}

// ---- Misuse ----

std::string fault_of(const nlohmann::json& doc, Scope scope, DType dtype) {
  Simulation sim(Spec::from_json(doc));
  return error_of<KernelError>([&] {
    sim.launch([&](tl::Context& tl) { tl.switch_reduce(tl.full({8}, 1.0, dtype), scope); });
  });
}

TEST(SwitchReduce, ADtypeTheSwitchCannotAddIsAFaultNamingTheField) {
  EXPECT_THAT(
      fault_of(switched(2, {"f32", "bf16"}), Scope::all, DType::i32),
      AllOf(HasSubstr("switch_reduce(Scope::all) on sip0.cube0.pe0"), HasSubstr("cannot add i32"),
            HasSubstr("system.inter_sip.switch_reduction.dtypes lists bf16, f32")));
}

TEST(SwitchReduce, ALinkClassThatDoesNotReduceIsAFault) {
  nlohmann::json doc = switched(2, {"f32"});
  doc["system"]["ucie"].erase("switch_reduction");
  EXPECT_THAT(fault_of(doc, Scope::sip, DType::f32),
              AllOf(HasSubstr("system.ucie is not a switch that reduces"),
                    HasSubstr("without switch_reduction")));
  doc["system"]["ucie"] = {{"topology", "ring"}, {"latency_ns", 10}, {"bandwidth_GBps", 64}};
  EXPECT_THAT(fault_of(doc, Scope::sip, DType::f32), HasSubstr("(topology ring)"));
  EXPECT_THAT(fault_of(doc, Scope::cube, DType::f32), HasSubstr("a cube's PEs share no switch"));
}

TEST(SwitchReduce, AMemberThatNeverJoinsFailsTheLaunchNamingIt) {
  Simulation sim(Spec::from_json(switched(2, {"f32"})));
  // Posted and not waited for: the launch ends with the reduction open.
  const std::string e = error_of<KernelError>([&] {
    sim.launch([&](tl::Context& tl) {
      if (tl.program_id(2) == 0 && tl.program_id(1) == 0 && tl.program_id(0) == 2)
        tl.switch_reduce_async(tl.full({8}, 1.0, DType::f32), Scope::all);
    });
  });
  EXPECT_THAT(e, AllOf(HasSubstr("inter-SIP switch reduction 0 of sip*.cube0.pe2"),
                       HasSubstr("1 of 2 programs took part; sip1.cube0.pe2 never did")));
  // Waited for: a deadlock naming what it waits for; the Simulation survives both.
  const std::string d = error_of<DeadlockError>([&] {
    sim.launch([&](tl::Context& tl) {
      if (tl.program_id(2) == 1 && tl.program_id(1) == 1 && tl.program_id(0) == 0)
        tl.switch_reduce(tl.full({8}, 1.0, DType::f32), Scope::all);
    });
  });
  EXPECT_THAT(d, HasSubstr("not yet by sip0.cube1.pe0"));
  sim.launch([&](tl::Context& tl) { tl.switch_reduce(tl.full({8}, 1.0, DType::f32), Scope::all); });
}

TEST(SwitchReduce, MembersTilesMustMatch) {
  Simulation sim(Spec::from_json(switched(2, {"f32"})));
  EXPECT_THAT(error_of<KernelError>([&] {
                sim.launch([&](tl::Context& tl) {
                  tl.switch_reduce(tl.full({tl.program_id(2) == 0 ? 8 : 16}, 1.0, DType::f32),
                                   Scope::all);
                });
              }),
              HasSubstr("does not match"));
}

}  // namespace
}  // namespace cubesim
