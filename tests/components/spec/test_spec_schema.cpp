// The schema against the code it describes: every choice field lists exactly its table's names
// (emu/name_table.hpp), and every default the schema states is the one SystemConfig's members
// start with, so a hand-built config and a loaded spec that leaves the field out agree.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "components/hbm/hbm_model.hpp"
#include "components/spec/schema.hpp"
#include "components/spec/spec.hpp"
#include "components/system_config.hpp"

namespace cubesim::components::spec {
namespace {

using nlohmann::json;

TEST(SpecSchema, ChoiceFieldsListTheirTablesNames) {
  const std::map<std::string, std::vector<std::string>> tables = {
      {"system.cube.hbm.model", hbm_models().names()},
      {"system.cube.hbm.banked.row_policy", row_policies().names()},
      {"system.cube.cache.model", cache_models().names()},
      {"system.ucie.topology", graph_kinds().names()},
      {"system.inter_sip.topology", graph_kinds().names()},
      {"system.dispatch.policy", dispatch_policies().names()},
      {"system.messages.memory", slot_memories().names()},
      {"system.cube.noc.router.allocation", router_allocations().names()},
      {"system.pe.gemm.model", gemm_models().names()},
      {"system.pe.gemm.systolic.dataflow", dataflows().names()},
      {"system.pe.vector.sram_bank_mapping", bank_mappings().names()},
  };
  for (const SpecField& f : spec_schema()) {
    if (f.type != FieldType::choice) continue;
    const auto it = tables.find(f.path);
    if (it == tables.end()) {
      ADD_FAILURE() << f.path << " is a choice field that no table here names";
      continue;
    }
    EXPECT_EQ(f.choices, it->second) << f.path;
  }
}

// A spec with only the fields the schema requires: every other field takes its default.
json required_only() {
  return json::parse(R"({
    "name": "required_only", "description": "the schema's required fields only",
    "system": {
      "sips": {"cubes_per_sip": 2},
      "cube": {"pes": 4,
               "noc": {"mesh": [2, 2], "link_bandwidth_GBps": 64,
                       "hbm_nodes": [[0, 0]], "ucie_nodes": [[1, 1]]},
               "hbm": {"capacity_GiB": 1, "bandwidth_GBps": 1000}},
      "pe": {"clock_GHz": 1.5, "sram_KiB": 1024,
             "gemm": {"peak_TFLOPS": {"f16": 1, "bf16": 1, "f32": 1, "i32": 1}}},
      "ucie": {"latency_ns": 10, "bandwidth_GBps": 256},
      "inter_sip": {"latency_ns": 500, "bandwidth_GBps": 100}}})");
}

using Member = std::function<json(const SystemConfig&)>;

json coords(const std::vector<MeshCoord>& v) {
  json a = json::array();
  for (const MeshCoord& c : v) a.push_back({c.x, c.y});
  return a;
}

json dtype_names(std::uint32_t bits) {
  json out = json::array();
  for (const DType t : kAllDTypes)
    if ((bits >> static_cast<int>(t) & 1U) != 0) out.push_back(std::string(dtype_name(t)));
  return out;
}

// Every spec field with a default, and the SystemConfig member it sets (in its own units).

const std::map<std::string, Member>& members() {
  static const std::map<std::string, Member> m = [] {
    std::map<std::string, Member> t = {
        {"system.sips.count", [](const SystemConfig& c) { return json(c.sips); }},
        {"system.cube.noc.hop_latency_ns", [](auto& c) { return json(c.cube.noc.hop_latency); }},
        {"system.cube.noc.packet_bytes", [](auto& c) { return json(c.cube.noc.packet_bytes); }},
        {"system.cube.noc.router.pipeline_cycles",
         [](auto& c) { return json(c.cube.noc.router_timing.pipeline_cycles); }},
        {"system.cube.noc.router.input_speedup",
         [](auto& c) { return json(c.cube.noc.router_timing.input_speedup); }},
        {"system.cube.noc.router.allocation",
         [](auto& c) {
           return json(router_allocations().name_of(c.cube.noc.router_timing.allocation));
         }},
        {"system.cube.noc.inter_sip_node",
         [](auto& c) { return coords(c.cube.noc.inter_sip_nodes); }},
        {"system.cube.noc.response_bytes", [](auto& c) { return json(c.cube.noc.response_bytes); }},
        {"system.cube.hbm.channels", [](auto& c) { return json(c.cube.hbm.channels); }},
        {"system.cube.hbm.latency_ns", [](auto& c) { return json(c.cube.hbm.latency); }},
        {"system.cube.hbm.atomic_ns", [](auto& c) { return json(c.cube.hbm.atomic_time); }},
        {"system.cube.hbm.channel_interleave_bytes",
         [](auto& c) { return json(c.cube.hbm.channel_interleave_bytes); }},
        {"system.cube.hbm.model", [](auto& c) { return json(c.cube.hbm.model); }},
        {"system.cube.hbm.banked.row_policy",
         [](auto& c) { return json(row_policies().name_of(c.cube.hbm.banked.row_policy)); }},
        {"system.cube.hbm.banked.bank_groups",
         [](auto& c) { return json(c.cube.hbm.banked.bank_groups); }},
        {"system.cube.hbm.banked.banks_per_group",
         [](auto& c) { return json(c.cube.hbm.banked.banks_per_group); }},
        {"system.cube.hbm.banked.row_bytes",
         [](auto& c) { return json(c.cube.hbm.banked.row_bytes); }},
        {"system.cube.hbm.banked.burst_bytes",
         [](auto& c) { return json(c.cube.hbm.banked.burst_bytes); }},
        {"system.cube.hbm.banked.queue_depth",
         [](auto& c) { return json(c.cube.hbm.banked.queue_depth); }},
        {"system.cube.hbm.banked.max_postponed_refreshes",
         [](auto& c) { return json(c.cube.hbm.banked.max_postponed_refreshes); }},
        {"system.cube.hbm.banked.trcd_ns", [](auto& c) { return json(c.cube.hbm.banked.trcd); }},
        {"system.cube.hbm.banked.tcl_ns", [](auto& c) { return json(c.cube.hbm.banked.tcl); }},
        {"system.cube.hbm.banked.tcwl_ns", [](auto& c) { return json(c.cube.hbm.banked.tcwl); }},
        {"system.cube.hbm.banked.trp_ns", [](auto& c) { return json(c.cube.hbm.banked.trp); }},
        {"system.cube.hbm.banked.tras_ns", [](auto& c) { return json(c.cube.hbm.banked.tras); }},
        {"system.cube.hbm.banked.twr_ns", [](auto& c) { return json(c.cube.hbm.banked.twr); }},
        {"system.cube.hbm.banked.trfc_ns", [](auto& c) { return json(c.cube.hbm.banked.trfc); }},
        {"system.cube.hbm.banked.trefi_ns", [](auto& c) { return json(c.cube.hbm.banked.trefi); }},
        {"system.cube.hbm.banked.twtr_ns", [](auto& c) { return json(c.cube.hbm.banked.twtr); }},
        {"system.cube.hbm.banked.trtw_ns", [](auto& c) { return json(c.cube.hbm.banked.trtw); }},
        {"system.cube.hbm.banked.tccd_l_ns",
         [](auto& c) { return json(c.cube.hbm.banked.tccd_l); }},
        {"system.cube.hbm.banked.trrd_ns", [](auto& c) { return json(c.cube.hbm.banked.trrd); }},
        {"system.energy.noc_pJ_per_byte", [](auto& c) { return json(c.energy.noc_pj_per_byte); }},
        {"system.energy.ucie_pJ_per_byte", [](auto& c) { return json(c.energy.ucie_pj_per_byte); }},
        {"system.energy.inter_sip_pJ_per_byte",
         [](auto& c) { return json(c.energy.inter_sip_pj_per_byte); }},
        {"system.energy.hbm_pJ_per_byte", [](auto& c) { return json(c.energy.hbm_pj_per_byte); }},
        {"system.energy.cache_pJ_per_byte",
         [](auto& c) { return json(c.energy.cache_pj_per_byte); }},
        {"system.energy.sram_pJ_per_byte", [](auto& c) { return json(c.energy.sram_pj_per_byte); }},
        {"system.energy.vector_pJ_per_element",
         [](auto& c) { return json(c.energy.vector_pj_per_element); }},
        {"system.energy.static_W_per_pe", [](auto& c) { return json(c.energy.static_w_per_pe); }},
        {"system.cube.cache.model",
         [](auto& c) { return json(cache_models().name_of(c.cube.cache.model)); }},
        {"system.cube.cache.size_MiB", [](auto& c) { return json(c.cube.cache.size_bytes); }},
        {"system.cube.cache.ways", [](auto& c) { return json(c.cube.cache.ways); }},
        {"system.cube.cache.line_bytes", [](auto& c) { return json(c.cube.cache.line_bytes); }},
        {"system.cube.cache.hit_latency_ns",
         [](auto& c) { return json(c.cube.cache.hit_latency); }},
        {"system.cube.cache.bandwidth_GBps",
         [](auto& c) { return json(c.cube.cache.bandwidth.bytes_per_s()); }},
        {"system.pe.issue_ns", [](auto& c) { return json(c.pe.issue); }},
        {"system.pe.vector.lanes", [](auto& c) { return json(c.pe.vector.lanes); }},
        {"system.pe.vector.latency_cycles",
         [](auto& c) { return json(c.pe.vector.latency_cycles); }},
        {"system.pe.gemm.startup_ns", [](auto& c) { return json(c.pe.gemm.startup); }},
        {"system.pe.gemm.epilogue_Gelem_per_s",
         [](auto& c) { return json(c.pe.gemm.epilogue_elements_per_s); }},
        {"system.pe.gemm.model",
         [](auto& c) { return json(gemm_models().name_of(c.pe.gemm.model)); }},
        {"system.pe.gemm.systolic.rows", [](auto& c) { return json(c.pe.gemm.rows); }},
        {"system.pe.gemm.systolic.cols", [](auto& c) { return json(c.pe.gemm.cols); }},
        {"system.pe.gemm.systolic.dataflow",
         [](auto& c) { return json(dataflows().name_of(c.pe.gemm.dataflow)); }},
        {"system.pe.gemm.systolic.sram_feed_GBps",
         [](auto& c) { return json(c.pe.gemm.sram_feed_bytes_per_s); }},
        {"system.pe.vector.sram_bank_bytes",
         [](auto& c) { return json(c.pe.vector.sram_bank_bytes); }},
        {"system.pe.vector.sram_bank_mapping",
         [](auto& c) { return json(bank_mappings().name_of(c.pe.vector.sram_bank_mapping)); }},
        {"system.pe.dma.max_outstanding_packets",
         [](auto& c) { return json(c.pe.dma.max_outstanding_packets); }},
        {"system.ucie.topology", [](auto& c) { return json(to_string(c.ucie.topology)); }},
        {"system.ucie.connections", [](auto& c) { return json(c.ucie.connections); }},
        {"system.inter_sip.topology",
         [](auto& c) { return json(to_string(c.inter_sip.topology)); }},
        {"system.inter_sip.port_cube", [](auto& c) { return json(c.inter_sip.port_cube); }},
        {"system.inter_sip.connections", [](auto& c) { return json(c.inter_sip.connections); }},
        {"system.dispatch.policy",
         [](auto& c) { return json(dispatch_policies().name_of(c.dispatch.policy)); }},
        {"system.dispatch.cost_ns", [](auto& c) { return json(c.dispatch.cost); }},
        {"system.dispatch.launch_ns", [](auto& c) { return json(c.dispatch.launch); }},
        {"system.messages.slot_KiB",
         [](auto& c) { return json(c.messages.window(ChannelClass::mesh).slot_bytes); }},
        {"system.messages.memory",
         [](auto& c) { return json(slot_memories().name_of(c.messages.memory)); }},
        {"system.messages.credit_bytes", [](auto& c) { return json(c.messages.credit_bytes); }},
        {"system.messages.pe_sram.bandwidth_GBps",
         [](auto& c) { return json(c.messages.pe_sram_bandwidth.bytes_per_s()); }},
        {"system.messages.pe_sram.latency_ns",
         [](auto& c) { return json(c.messages.pe_sram_latency); }},
        {"system.messages.cube_sram.capacity_KiB",
         [](auto& c) { return json(c.messages.cube_sram_bytes); }},
        {"system.messages.cube_sram.bandwidth_GBps",
         [](auto& c) { return json(c.messages.cube_sram_bandwidth.bytes_per_s()); }},
        {"system.messages.cube_sram.latency_ns",
         [](auto& c) { return json(c.messages.cube_sram_latency); }},
        {"system.ucie.switch_reduction.dtypes",
         [](auto& c) { return dtype_names(c.ucie.reduction.dtypes); }},
        {"system.inter_sip.switch_reduction.dtypes",
         [](auto& c) { return dtype_names(c.inter_sip.reduction.dtypes); }},
        {"system.host.link_bandwidth_GBps",
         [](auto& c) { return json(c.host.link_bandwidth.bytes_per_s()); }},
        {"system.host.link_latency_ns", [](auto& c) { return json(c.host.link_latency); }},
        {"system.host.setup_ns", [](auto& c) { return json(c.host.setup); }},
        {"system.host.io_die.cubes", [](auto& c) { return json(c.host.io_cubes); }},
        {"system.host.io_die.nodes", [](auto& c) { return coords(c.host.io_nodes); }},
        {"system.host.io_die.bandwidth_GBps",
         [](auto& c) { return json(c.host.io_bandwidth.bytes_per_s()); }},
        {"system.host.io_die.latency_ns", [](auto& c) { return json(c.host.io_latency); }},
        {"system.memory.interleave_KiB", [](auto& c) { return json(c.memory.interleave_bytes); }},
        {"system.memory.page_KiB", [](auto& c) { return json(c.memory.page_bytes); }},
    };
    for (DType d : kAllDTypes)
      t.emplace("system.energy.gemm_pJ_per_flop." + std::string(dtype_name(d)),
                [d](const SystemConfig& c) {
                  return json(c.energy.gemm_pj_per_flop[static_cast<int>(d)]);
                });
    for (VectorOp op : kAllVectorOps)
      t.emplace("system.pe.vector.op_cycles." + std::string(vector_op_name(op)),
                [op](const SystemConfig& c) {
                  return json(c.pe.vector.op_cycles[static_cast<int>(op)]);
                });
    const auto add_buffers = [&t](const std::string& prefix,
                                  std::function<const BufferConfig&(const SystemConfig&)> of) {
      t.emplace(prefix + ".input_buffer_bytes",
                [of](const SystemConfig& c) { return json(of(c).input_buffer_bytes); });
      t.emplace(prefix + ".virtual_channels",
                [of](const SystemConfig& c) { return json(of(c).virtual_channels); });
    };
    add_buffers("system.cube.noc.router",
                [](const SystemConfig& c) -> const BufferConfig& { return c.cube.noc.router; });
    add_buffers("system.ucie",
                [](const SystemConfig& c) -> const BufferConfig& { return c.ucie.buffers; });
    add_buffers("system.inter_sip",
                [](const SystemConfig& c) -> const BufferConfig& { return c.inter_sip.buffers; });
    return t;
  }();
  return m;
}

TEST(SpecSchema, EveryDefaultIsTheOneSystemConfigStartsWith) {
  const SystemConfig loaded = Spec::from_json(required_only()).config();
  const SystemConfig initialised;
  for (const SpecField& f : spec_schema()) {
    if (f.default_value.is_null()) continue;
    const auto it = members().find(f.path);
    if (it == members().end()) {
      ADD_FAILURE() << f.path << " has a default (" << f.default_value.dump()
                    << ") but no SystemConfig member here; add it to members()";
      continue;
    }
    EXPECT_EQ(it->second(loaded), it->second(initialised))
        << f.path << ": the schema's default " << f.default_value.dump()
        << " loads as the left value; SystemConfig's member starts at the right one";
  }
}

}  // namespace
}  // namespace cubesim::components::spec
