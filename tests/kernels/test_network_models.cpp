// The flow network model against the packet model on every benchmark kernel (default
// parameters, default.json and tiny.json as shipped, timing-only): the same bytes on every kind
// of link, fewer events, and a simulated time within the flow model's documented accuracy on
// these kernels, 40 % (docs/hardware-model.md lists the measured differences: on default.json
// the flow model is optimistic for the bandwidth-bound kernels, since whole flows queue without
// the interleaving and head-of-line waits of packets in finite router buffers, and without a
// router input that sends one packet at a time; gemm_2d is the furthest, -37 %, since flows use
// the gaps before flows booked ahead of them that reach a link later, as packets do). Before
// the DMA window was shared between a PE's flows, gemm_2d was 3.8x off, and before the gaps a
// ring over 800 ns links was 2.3x slow: this bound catches such modelling errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kernel_test_support.hpp"

namespace cubesim::kernels {
namespace {

struct ModelRun {
  std::uint64_t sim_time_ps;
  nlohmann::json stats;
};

ModelRun run_with(const std::string& kernel, const Spec& spec, components::NetworkModel model) {
  Simulation sim(spec, {.timing_only = true, .record_accesses = false, .network = model});
  const KernelInfo& info = find_kernel(kernel);
  const Outcome o = info.run(sim, parse_params(info, {}));
  EXPECT_EQ(o.run.report["network"], components::network_model_name(model));
  return {o.run.sim_time_ps, o.run.report["stats"]};
}

class NetworkModels : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(NetworkModels, FlowCarriesTheSameBytesAndKeepsTheTimeWithin40Percent) {
  const auto& [kernel, spec_name] = GetParam();
  const Spec spec = testing::spec_named(spec_name);
  const ModelRun packet = run_with(kernel, spec, components::NetworkModel::packet);
  const ModelRun flow = run_with(kernel, spec, components::NetworkModel::flow);
  for (const char* k : {"hbm_bytes", "noc_bytes", "ucie_bytes", "inter_sip_bytes"})
    EXPECT_EQ(flow.stats[k], packet.stats[k]) << k;
  EXPECT_LT(flow.stats["events"].get<std::uint64_t>(), packet.stats["events"].get<std::uint64_t>());
  const double p = static_cast<double>(packet.sim_time_ps);
  const double f = static_cast<double>(flow.sim_time_ps);
  EXPECT_LE(std::abs(f - p), 0.40 * p) << "packet " << p << " ps, flow " << f << " ps";
  std::printf("%s on %s: packet %.3f us, flow %.3f us (%+.1f %%)\n", kernel.c_str(),
              spec_name.c_str(), p / 1e6, f / 1e6, 100 * (f - p) / p);
}

INSTANTIATE_TEST_SUITE_P(Kernels, NetworkModels,
                         ::testing::Combine(::testing::Values("vector_add", "sharded_gemm",
                                                              "gemm_2d", "softmax_rows",
                                                              "attention_similarity"),
                                            ::testing::Values("default.json", "tiny.json")),
                         [](const auto& p) {
                           std::string s = std::get<0>(p.param) + "_" + std::get<1>(p.param);
                           for (char& ch : s)
                             if (ch == '.') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace cubesim::kernels
