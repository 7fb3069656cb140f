#include "components/system/system.hpp"

#include "components/network/message_window.hpp"
#include "components/network/virtual_channels.hpp"

namespace cubesim::components {

System::System(const SystemConfig& config, emu::Scheduler& scheduler, SystemOptions options)
    : config_(config),
      scheduler_(scheduler),
      options_(options),
      map_(config_),
      topology_(config_),
      network_(Network::make(options_.network, scheduler, topology_, map_)),
      gemm_(config_.pe.gemm),
      vector_(config_.pe.vector, config_.pe.clock) {
  if (!options_.timing_only)
    memory_ = std::make_unique<SparseMemory>(map_, config_.memory.page_bytes);
}

PeCoord System::pe_coord(std::uint32_t global_pe) const {
  const std::uint32_t pes = config_.cube.pes;
  const std::uint32_t cube = global_pe / pes;
  return {cube / config_.cubes_per_sip, cube % config_.cubes_per_sip, global_pe % pes};
}

std::uint32_t System::global_pe(PeCoord c) const {
  return (c.sip * config_.cubes_per_sip + c.cube) * config_.cube.pes + c.pe;
}

std::string System::pe_name(std::uint32_t global_pe) const {
  const PeCoord c = pe_coord(global_pe);
  return "sip" + std::to_string(c.sip) + ".cube" + std::to_string(c.cube) + ".pe" +
         std::to_string(c.pe);
}

namespace {
// The input buffers of each class of link, and the virtual-channel classes they serve.
nlohmann::json buffers_json(const SystemConfig& c) {
  const VcPlan plan = VcPlan::of(c);
  const auto one = [](const BufferConfig& b, std::uint32_t classes) {
    return nlohmann::json{{"input_buffer_bytes", b.input_buffer_bytes},
                          {"virtual_channels", b.virtual_channels},
                          {"classes", classes},
                          {"credit_latency_ps", b.credit_latency}};
  };
  return {{"classes", plan.classes()},
          {"router", one(c.cube.noc.router, plan.classes(BufferKind::router))},
          {"ucie", one(c.ucie.buffers, plan.classes(BufferKind::ucie))},
          {"inter_sip", one(c.inter_sip.buffers, plan.classes(BufferKind::inter_sip))}};
}

// tl.send / tl.recv channels: slots, where they live, what reading one costs.
nlohmann::json reduction_json(const SwitchReduction& r) {
  if (!r.enabled()) return nullptr;
  nlohmann::json dtypes = nlohmann::json::array();
  for (const DType t : kAllDTypes)
    if (r.adds(t)) dtypes.push_back(std::string(dtype_name(t)));
  return {{"dtypes", dtypes},
          {"bandwidth_GBps", static_cast<double>(r.bandwidth.bytes_per_s()) / 1e9}};
}

nlohmann::json messages_json(const SystemConfig& c) {
  const MessagesConfig& m = c.messages;
  const auto bw = [](Bandwidth b) { return static_cast<double>(b.bytes_per_s()) / 1e9; };
  nlohmann::json read = nullptr;  // hbm slots are read over the network, as loads are
  if (m.memory == SlotMemory::pe_sram)
    read = {{"bandwidth_GBps", bw(m.pe_sram_bandwidth)}, {"latency_ps", m.pe_sram_latency}};
  else if (m.memory == SlotMemory::cube_sram)
    read = {{"bandwidth_GBps", bw(m.cube_sram_bandwidth)}, {"latency_ps", m.cube_sram_latency}};
  // Each class the system has: its window and the credit loop it is to cover.
  nlohmann::json windows = nlohmann::json::object();
  for (ChannelClass k : kAllChannelClasses) {
    if (!has_channel_class(c, k)) continue;
    const MessageWindow& w = m.window(k);
    const CreditLoop loop = credit_loop(c, k, w.slot_bytes);
    windows[channel_class_name(k)] = {{"slots", w.slots},
                                      {"slot_bytes", w.slot_bytes},
                                      {"channel_bytes", w.bytes()},
                                      {"automatic", w.automatic},
                                      {"round_trip_ps", loop.round_trip},
                                      {"rate_GBps", static_cast<double>(loop.rate()) / 1e9},
                                      {"bdp_bytes", loop.bdp_bytes()},
                                      {"slots_needed", loop.slots_needed()},
                                      {"covered", loop.covered(w.slots)}};
  }
  return {{"windows", windows},
          {"memory", slot_memory_name(m.memory)},
          {"credit_bytes", m.credit_bytes},
          {"slot_read", read},
          {"cube_sram_bytes", m.cube_sram_bytes}};
}

}  // namespace

namespace {

// The cube cache (system.cube.cache); null without one.
nlohmann::json cache_json(const CacheConfig& k) {
  if (!k.enabled()) return nullptr;
  return {{"model", cache_models().name_of(k.model)},
          {"size_bytes", k.size_bytes},
          {"ways", k.ways},
          {"line_bytes", k.line_bytes},
          {"hit_latency_ns", static_cast<double>(k.hit_latency) / 1e3},
          {"bandwidth_GBps", static_cast<double>(k.bandwidth.bytes_per_s()) / 1e9}};
}

// How the HBM serves (system.cube.hbm.model); with banked, its DRAM's figures and the rate a
// long stream sustains per cube.
nlohmann::json hbm_json(const HbmConfig& h, const HbmModel& model) {
  nlohmann::json j = {{"model", h.model}, {"channels", h.channels}};
  if (!model.scheduled()) return j;
  const DramTiming& t = h.banked;
  const auto ns = [](Tick v) { return static_cast<double>(v) / 1e3; };
  j["banked"] = {{"row_policy", row_policies().name_of(t.row_policy)},
                 {"bank_groups", t.bank_groups},
                 {"banks_per_group", t.banks_per_group},
                 {"row_bytes", t.row_bytes},
                 {"burst_bytes", t.burst_bytes},
                 {"trcd_ns", ns(t.trcd)},
                 {"tcl_ns", ns(t.tcl)},
                 {"trp_ns", ns(t.trp)},
                 {"tras_ns", ns(t.tras)},
                 {"trfc_ns", ns(t.trfc)},
                 {"trefi_ns", ns(t.trefi)},
                 {"stream_GBps_per_cube",
                  static_cast<double>(model.stream_bandwidth().bytes_per_s()) * h.channels / 1e9}};
  return j;
}

// The energy figures (system.energy); null without any.
nlohmann::json energy_json(const EnergyConfig& e) {
  if (!e.on) return nullptr;
  nlohmann::json flops = nlohmann::json::object();
  for (DType t : kAllDTypes)
    if (const double v = e.gemm_pj_per_flop[static_cast<int>(t)]; v > 0)
      flops[std::string(dtype_name(t))] = v;
  return {{"noc_pJ_per_byte", e.noc_pj_per_byte},
          {"ucie_pJ_per_byte", e.ucie_pj_per_byte},
          {"inter_sip_pJ_per_byte", e.inter_sip_pj_per_byte},
          {"hbm_pJ_per_byte", e.hbm_pj_per_byte},
          {"cache_pJ_per_byte", e.cache_pj_per_byte},
          {"sram_pJ_per_byte", e.sram_pj_per_byte},
          {"vector_pJ_per_element", e.vector_pj_per_element},
          {"gemm_pJ_per_flop", flops},
          {"static_W_per_pe", e.static_w_per_pe}};
}

}  // namespace

nlohmann::json System::describe() const {
  const auto& c = config_;
  nlohmann::json peak = nlohmann::json::object();
  for (DType t : kAllDTypes) {
    if (t == DType::boolean) continue;  // no GEMM dtype: the spec has no rate for it
    const double per_pe = static_cast<double>(gemm_.peak_flops_per_s(t));
    peak[std::string(dtype_name(t))] = {{"per_pe", per_pe},
                                        {"system", per_pe * static_cast<double>(c.total_pes())}};
  }
  const auto bw = [](Bandwidth b) { return static_cast<double>(b.bytes_per_s()) / 1e9; };
  nlohmann::json io_nodes = nlohmann::json::array();
  for (const MeshCoord n : c.host.io_nodes) io_nodes.push_back({n.x, n.y});
  return {
      {"name", c.name},
      {"description", c.description},
      {"sips", c.sips},
      {"cubes_per_sip", c.cubes_per_sip},
      {"pes_per_cube", c.cube.pes},
      {"total_cubes", c.total_cubes()},
      {"total_pes", c.total_pes()},
      {"mesh", {c.cube.noc.mesh_x, c.cube.noc.mesh_y}},
      {"ucie_topology", to_string(c.ucie.topology)},
      {"ucie_connections", c.ucie.connections},
      {"inter_sip_connections", c.inter_sip.connections},
      {"inter_sip_topology", to_string(c.inter_sip.topology)},
      // A crossing between neighbouring cubes or SIPs: through a switch, its two links and
      // the crossbar.
      {"crossing_ns",
       {{"ucie", static_cast<double>(c.ucie.crossing()) / 1e3},
        {"inter_sip", static_cast<double>(c.inter_sip.crossing()) / 1e3}}},
      // In-network reduction by a switch: the dtypes it adds and its adders' rate; null
      // where it does not reduce.
      {"switch_reduction",
       {{"ucie", reduction_json(c.ucie.reduction)},
        {"inter_sip", reduction_json(c.inter_sip.reduction)}}},
      {"links", topology_.links().size()},
      {"peak_flops_per_s", peak},
      {"bandwidth_GBps",
       {{"noc_link", bw(c.cube.noc.link_bandwidth)},
        {"hbm_per_cube", bw(c.cube.hbm.bandwidth)},
        {"hbm_system", bw(c.cube.hbm.bandwidth) * static_cast<double>(c.total_cubes())},
        {"ucie_link", bw(c.ucie.bandwidth)},
        {"inter_sip_link", bw(c.inter_sip.bandwidth)}}},
      {"hbm_capacity_bytes",
       {{"per_cube", c.cube.hbm.capacity_bytes},
        {"system", c.cube.hbm.capacity_bytes * c.total_cubes()}}},
      {"hbm", hbm_json(c.cube.hbm, topology_.hbm())},
      {"cache", cache_json(c.cube.cache)},
      {"energy", energy_json(c.energy)},
      {"sram_bytes_per_pe", c.pe.sram_bytes},
      {"sram_banks",
       {{"banks", vector_.banks()},
        {"bank_bytes", c.pe.vector.sram_bank_bytes},
        {"mapping", bank_mappings().name_of(c.pe.vector.sram_bank_mapping)}}},
      {"clock_hz", c.pe.clock.hz()},
      {"buffers", buffers_json(c)},
      {"router",
       {{"pipeline_cycles", c.cube.noc.router_timing.pipeline_cycles},
        {"pipeline_ps", c.cube.noc.router_timing.pipeline},
        {"input_speedup", c.cube.noc.router_timing.input_speedup},
        {"allocation", router_allocations().name_of(c.cube.noc.router_timing.allocation)}}},
      {"messages", messages_json(c)},
      {"host",
       {{"link_bandwidth_GBps", bw(c.host.link_bandwidth)},
        {"link_latency_ps", c.host.link_latency},
        {"setup_ps", c.host.setup},
        {"io_die",
         {{"cubes", c.host.io_cubes},
          {"nodes", io_nodes},
          {"bandwidth_GBps", bw(c.host.io_bandwidth)},
          {"latency_ps", c.host.io_latency}}}}},
  };
}

}  // namespace cubesim::components
