#pragma once
// The validated, unit-converted description of a system, as built from a spec file
// (components/spec/). Every duration is a Tick (ps), every rate an integer Bandwidth or
// Frequency, every size in bytes: nothing downstream parses units or checks ranges again.
//
// Members the spec may leave out start at the schema's default (components/spec/schema.cpp, the
// one source: the loader fills them from there, and tests/components/spec/test_spec_schema.cpp
// checks that every initialiser below agrees); members the schema requires start at a
// placeholder that every loaded spec overrides.

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "components/dtype.hpp"
#include "components/topology/graph.hpp"
#include "emu/name_table.hpp"
#include "emu/time.hpp"

namespace cubesim::components {

using emu::Bandwidth;
using emu::Frequency;
using emu::Tick;

// A node of a cube's NOC mesh: x in [0, mesh_x), y in [0, mesh_y).
struct MeshCoord {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  friend constexpr bool operator==(MeshCoord, MeshCoord) = default;
};

// The input buffers at the far end of a class of links (credit flow control, virtual
// cut-through). input_buffer_bytes == 0: unbounded, no back-pressure.
struct BufferConfig {
  std::uint64_t input_buffer_bytes = 0;  // per input port, split evenly over the VCs
  std::uint32_t virtual_channels = 1;
  Tick credit_latency = 0;  // from the tail leaving the buffer to the credit at the sender
  bool bounded() const { return input_buffer_bytes != 0; }
  std::uint64_t vc_bytes() const { return input_buffer_bytes / virtual_channels; }
};

// How a router moves a packet from an input buffer to an output (system.cube.noc.router; the
// packet model, docs/hardware-model.md): a pipeline of routing, VC and switch allocation before
// the crossbar, inputs that send `input_speedup` packets at once, and outputs granted to waiting
// packets by `allocation`.
enum class RouterAllocation : std::uint8_t { fcfs, round_robin, age };
// By name (emu/name_table.hpp): system.cube.noc.router.allocation's allowed values.
inline const emu::NameTable<RouterAllocation>& router_allocations() {
  static const emu::NameTable<RouterAllocation> table(
      "router allocation", {{"fcfs", RouterAllocation::fcfs},
                            {"round_robin", RouterAllocation::round_robin},
                            {"age", RouterAllocation::age}});
  return table;
}

struct RouterTiming {
  std::uint32_t pipeline_cycles = 0;  // routing, VC and switch allocation, before the crossbar
  Tick pipeline = 0;                  // those cycles at the router clock
  // A virtual channel's next packet starts routing in the cycle its previous packet's tail
  // crossed in: pipeline less one cycle after that tail has left (0 without a pipeline).
  Tick turnaround = 0;
  std::uint32_t input_speedup = 1;  // packets an input port sends through the crossbar at once
  RouterAllocation allocation = RouterAllocation::fcfs;
};

struct NocConfig {
  std::uint32_t mesh_x = 4;  // columns
  std::uint32_t mesh_y = 4;  // rows; PE i sits on node (i % mesh_x, i / mesh_x)
  Bandwidth link_bandwidth = Bandwidth::from_GBps(64);  // each direction of each link
  Tick hop_latency = 1000;  // per link traversed (wire and crossbar, and the router's pipeline
                            // unless router_timing has one)
  std::uint32_t packet_bytes = 4096;               // transfers are split into packets of this size
  std::uint32_t response_bytes = 16;               // a write's response, back to the writer
  std::vector<MeshCoord> hbm_nodes;                // where HBM controllers attach (>= 1)
  std::vector<MeshCoord> ucie_nodes;               // where UCIe connections attach (>= 1)
  std::vector<MeshCoord> inter_sip_nodes{{0, 0}};  // where inter-SIP connections attach (>= 1)
  BufferConfig router;  // every router input port (mesh links, the PE, HBM controllers)
  RouterTiming router_timing;
};

// The banked HBM model's DRAM (system.cube.hbm.banked; components/hbm/banked_hbm.hpp): every
// channel of the cube is an independent pseudo-channel with its own data bus, bank groups and
// banks. The defaults are HBM3-class figures (the HBM3 preset).
enum class RowPolicy : std::uint8_t { open, closed };
// By name (emu/name_table.hpp): system.cube.hbm.banked.row_policy's values.
inline const emu::NameTable<RowPolicy>& row_policies() {
  static const emu::NameTable<RowPolicy> table(
      "row policy", {{"open", RowPolicy::open}, {"closed", RowPolicy::closed}});
  return table;
}

struct DramTiming {
  RowPolicy row_policy = RowPolicy::open;
  std::uint32_t bank_groups = 4;
  std::uint32_t banks_per_group = 4;
  std::uint32_t row_bytes = 1024;             // a bank's row (page)
  std::uint32_t burst_bytes = 32;             // one column access's data
  std::uint32_t queue_depth = 64;             // requests the scheduler chooses among
  Tick trcd = 14'000;                         // activate to column command
  Tick tcl = 14'000;                          // read command to data
  Tick tcwl = 6'000;                          // write command to data
  Tick trp = 14'000;                          // precharge to activate
  Tick tras = 33'000;                         // activate to precharge
  Tick twr = 16'000;                          // end of write data to precharge
  Tick trfc = 350'000;                        // an all-bank refresh
  Tick trefi = 3'900'000;                     // from one refresh to the next
  std::uint32_t max_postponed_refreshes = 8;  // refreshes a busy channel may owe
  Tick twtr = 8'000;                          // end of write data to a read command
  Tick trtw = 4'000;                          // end of read data to write data (bus turnaround)
  Tick tccd_l = 1'500;                        // column commands to one bank group
  Tick trrd = 2'000;                          // activates in one channel
};

struct HbmConfig {
  std::uint64_t capacity_bytes = 0;                  // per cube
  Bandwidth bandwidth = Bandwidth::from_GBps(1000);  // per cube, all channels together
  std::uint32_t channels = 16;                       // bandwidth is split evenly over channels
  Tick latency = 100'000;                            // access latency, per request (100 ns)
  Tick atomic_time = 2'000;  // a channel's atomic unit, per read-modify-write request (2 ns)
  std::uint64_t channel_interleave_bytes = 4096;  // consecutive granules go to the next channel
  std::string model = "simple";                   // the HbmModel, by name (components/hbm/)
  DramTiming banked;                              // for model banked
};

// Where a channel's slots lie in HBM (system.messages.memory=hbm), `slots` of `slot_bytes`
// from the buffer's address: the distance from one slot to the next. Where a slot is a whole
// number of turns of the cube's channel interleave, consecutive slots are skewed a share of a
// turn apart, so that a channel's messages start on different HBM channels instead of every
// one on the first (which would leave the rest of the channels idle).
inline std::uint64_t hbm_slot_stride(const HbmConfig& hbm, std::uint64_t slot_bytes,
                                     std::uint32_t slots) {
  const std::uint64_t granule = std::max<std::uint64_t>(hbm.channel_interleave_bytes, 1);
  const std::uint64_t turn = granule * std::max<std::uint32_t>(hbm.channels, 1);
  if (slot_bytes % turn != 0 || slots <= 1) return slot_bytes;
  return slot_bytes + std::max(granule, turn / slots / granule * granule);
}

// A cube's shared cache in front of its HBM (components/cache/cube_cache.hpp), sliced by
// HBM channel: every access to the cube's memory, from any PE of the system, goes through the
// slice of its channel.
enum class CacheModel : std::uint8_t { none, lru };
// By name (emu/name_table.hpp): system.cube.cache.model's values.
inline const emu::NameTable<CacheModel>& cache_models() {
  static const emu::NameTable<CacheModel> table(
      "cube cache model", {{"none", CacheModel::none}, {"lru", CacheModel::lru}});
  return table;
}

struct CacheConfig {
  CacheModel model = CacheModel::none;
  std::uint64_t size_bytes = 32ULL << 20;  // per cube
  std::uint32_t ways = 16;
  std::uint32_t line_bytes = 128;                    // divides the HBM channel granule
  Tick hit_latency = 20'000;                         // a hit's access, instead of the HBM's (20 ns)
  Bandwidth bandwidth = Bandwidth::from_GBps(4000);  // per cube, split evenly over its slices
  bool enabled() const { return model != CacheModel::none; }
};

struct CubeConfig {
  std::uint32_t pes = 16;  // == mesh_x * mesh_y (one PE per node)
  NocConfig noc;
  HbmConfig hbm;
  CacheConfig cache;
};

// Classes of vector-unit operation, each with its own issue cost (cycles per element per lane;
// system.pe.vector.op_cycles; docs/hardware-model.md gives the defaults' rationale).
enum class VectorOp : std::uint8_t {
  simple,          // add, sub, mul, compare, select, bitwise, shifts, abs, floor, ceil, copies
  convert,         // dtype casts
  reduce,          // sum/max/min/argmax/argmin, cumsum (per element reduced)
  divide,          // float division, integer division and remainder
  sqrt,            // sqrt, rsqrt
  exp,             // exp, exp2, log, log2
  transcendental,  // tanh, sigmoid, erf, pow
};
inline constexpr VectorOp kAllVectorOps[] = {
    VectorOp::simple, VectorOp::convert, VectorOp::reduce,        VectorOp::divide,
    VectorOp::sqrt,   VectorOp::exp,     VectorOp::transcendental};
inline constexpr int kVectorOpCount = static_cast<int>(std::size(kAllVectorOps));

constexpr std::string_view vector_op_name(VectorOp op) {
  switch (op) {
    case VectorOp::simple:
      return "simple";
    case VectorOp::convert:
      return "convert";
    case VectorOp::reduce:
      return "reduce";
    case VectorOp::divide:
      return "divide";
    case VectorOp::sqrt:
      return "sqrt";
    case VectorOp::exp:
      return "exp";
    case VectorOp::transcendental:
      return "transcendental";
  }
  return "?";
}

// The default cycles per element of each class, used when the spec leaves it out.
constexpr std::uint32_t default_vector_op_cycles(VectorOp op) {
  switch (op) {
    case VectorOp::simple:
    case VectorOp::convert:
    case VectorOp::reduce:
      return 1;
    case VectorOp::divide:
    case VectorOp::sqrt:
    case VectorOp::exp:
      return 4;
    case VectorOp::transcendental:
      return 8;
  }
  return 1;
}

// How a word of PE SRAM maps to a bank (system.pe.vector.sram_bank_mapping): word w in bank
// w mod banks (linear), or (w + w / banks) mod banks (skewed: a row of banks' words later
// starts one bank on, so a column of a tile whose rows are a multiple of the banks spreads).
enum class BankMapping : std::uint8_t { linear, skewed };
inline const emu::NameTable<BankMapping>& bank_mappings() {
  static const emu::NameTable<BankMapping> table(
      "SRAM bank mapping", {{"linear", BankMapping::linear}, {"skewed", BankMapping::skewed}});
  return table;
}

struct VectorConfig {
  std::uint32_t lanes = 64;          // elements per cycle for element-wise math
  std::uint32_t latency_cycles = 4;  // pipeline latency added once per operation
  std::array<std::uint32_t, kVectorOpCount> op_cycles = [] {
    std::array<std::uint32_t, kVectorOpCount> a{};
    for (VectorOp op : kAllVectorOps) a[static_cast<int>(op)] = default_vector_op_cycles(op);
    return a;
  }();
  // The SRAM banks the unit reads tiles through: a cycle reads one word of each bank.
  std::uint32_t sram_banks = 0;  // 0: one per lane
  std::uint32_t sram_bank_bytes = 8;
  BankMapping sram_bank_mapping = BankMapping::linear;
};

// How the GEMM engine's compute time follows from a GEMM's shape (components/pe/gemm_timing.hpp).
enum class GemmModel : std::uint8_t { simple, systolic };
enum class Dataflow : std::uint8_t { weight_stationary, output_stationary };
// By name (emu/name_table.hpp): system.pe.gemm.model's and .systolic.dataflow's values.
inline const emu::NameTable<GemmModel>& gemm_models() {
  static const emu::NameTable<GemmModel> table(
      "GEMM engine model", {{"simple", GemmModel::simple}, {"systolic", GemmModel::systolic}});
  return table;
}
inline const emu::NameTable<Dataflow>& dataflows() {
  static const emu::NameTable<Dataflow> table("systolic dataflow",
                                              {{"weight_stationary", Dataflow::weight_stationary},
                                               {"output_stationary", Dataflow::output_stationary}});
  return table;
}

struct GemmConfig {
  Tick startup = 0;                              // fixed cost per composite GEMM
  std::array<double, kDTypeCount> peak_flops{};  // per DType (index = static_cast<int>(DType))
  double peak(DType t) const { return peak_flops[static_cast<int>(t)]; }
  double epilogue_elements_per_s = 96e9;  // one epilogue step (scale, bias, activation)
  GemmModel model = GemmModel::simple;
  // systolic: an array of rows x cols multiply-add cells at the PE's clock, its dataflow, and
  // the bytes per second the SRAM feeds it (0: no limit).
  std::uint32_t rows = 128, cols = 128;
  Dataflow dataflow = Dataflow::weight_stationary;
  double sram_feed_bytes_per_s = 0;
  Frequency clock = Frequency::from_GHz(1.5);  // the PE's
};

struct DmaConfig {
  std::uint32_t max_outstanding_packets = 32;  // per PE: packets in flight at once
};

struct PeConfig {
  Frequency clock = Frequency::from_GHz(1.5);
  std::uint64_t sram_bytes = 0;
  Tick issue = 0;  // the PE's control core issuing one TL call
  VectorConfig vector;
  GemmConfig gemm;
  DmaConfig dma;
};

// A switch's in-network reduction (system.{ucie,inter_sip}.switch_reduction): the dtypes it
// adds (none: it does not reduce) and the rate of the adder on each link up to it.
struct SwitchReduction {
  bool on = false;  // the section is there
  // bit 1 << DType per dtype; the schema's default
  std::uint32_t dtypes = 1U << static_cast<int>(DType::f32) | 1U << static_cast<int>(DType::f16) |
                         1U << static_cast<int>(DType::bf16);
  Bandwidth bandwidth = Bandwidth::from_GBps(1);  // absent in the spec: the links' bandwidth
  bool enabled() const { return on; }
  bool adds(DType t) const { return on && (dtypes >> static_cast<int>(t) & 1U) != 0; }
};

struct UcieConfig {
  GraphKind topology = GraphKind::ring;             // of the cubes of a SIP
  std::uint32_t mesh_x = 0;                         // mesh or torus: cubes per row (ucie.mesh)
  std::uint32_t mesh_y = 0;                         //   and rows (mesh_x * mesh_y == cubes_per_sip)
  Tick latency = 0;                                 // per die-to-die link
  Bandwidth bandwidth = Bandwidth::from_GBps(256);  // per link, per direction
  std::uint32_t connections = 1;  // links between two neighbouring cubes, on distinct nodes
  BufferConfig buffers;           // at the receiving end of each link
  Tick switch_latency = 0;        // switch: through the crossbar, between its two links
  SwitchReduction reduction;      // switch: what it adds in the network
  // From one cube to a neighbour: a link, or through a switch its two links and the crossbar.
  Tick crossing() const {
    return topology == GraphKind::switch_ ? 2 * latency + switch_latency : latency;
  }
};

struct InterSipConfig {
  GraphKind topology = GraphKind::ring;             // of the SIPs
  std::uint32_t grid_x = 0;                         // mesh or torus: SIPs per row (sips.grid)
  std::uint32_t grid_y = 0;                         //   and rows (grid_x * grid_y == sips)
  std::uint32_t port_cube = 0;                      // the cube of each SIP that holds the port
  Tick latency = 0;                                 // per SIP-to-SIP link
  Bandwidth bandwidth = Bandwidth::from_GBps(100);  // per link, per direction
  std::uint32_t connections = 1;  // links between two neighbouring SIPs, on distinct nodes
  BufferConfig buffers;           // at the receiving end of each link
  Tick switch_latency = 0;        // switch: through the crossbar, between its two links
  SwitchReduction reduction;      // switch: what it adds in the network
  // From one SIP to a neighbour: a link, or through a switch its two links and the crossbar.
  Tick crossing() const {
    return topology == GraphKind::switch_ ? 2 * latency + switch_latency : latency;
  }
};

struct MemoryConfig {
  std::uint64_t interleave_bytes = 4096;  // granule of buffers interleaved across cubes
  std::uint64_t page_bytes = 65536;       // functional-storage page (sparse memory)
};

// Where the slots of a message channel live (system.messages.memory).
enum class SlotMemory : std::uint8_t { pe_sram, cube_sram, hbm };
// By name (emu/name_table.hpp): system.messages.memory's allowed values.
inline const emu::NameTable<SlotMemory>& slot_memories() {
  static const emu::NameTable<SlotMemory> table("message slot memory",
                                                {{"pe_sram", SlotMemory::pe_sram},
                                                 {"cube_sram", SlotMemory::cube_sram},
                                                 {"hbm", SlotMemory::hbm}});
  return table;
}
inline const char* slot_memory_name(SlotMemory m) {
  return slot_memories().name_of(m).c_str();
}

// The classes of message channel, by the farthest kind of link a channel's route crosses:
// between PEs of one cube (the mesh), of one SIP (UCIe), or of different SIPs (inter-SIP).
enum class ChannelClass : std::uint8_t { mesh, ucie, inter_sip };
inline constexpr std::array<ChannelClass, 3> kAllChannelClasses = {
    ChannelClass::mesh, ChannelClass::ucie, ChannelClass::inter_sip};
// By name (emu/name_table.hpp): the sections system.messages.mesh, .ucie and .inter_sip.
inline const emu::NameTable<ChannelClass>& channel_classes() {
  static const emu::NameTable<ChannelClass> table("message channel class",
                                                  {{"mesh", ChannelClass::mesh},
                                                   {"ucie", ChannelClass::ucie},
                                                   {"inter_sip", ChannelClass::inter_sip}});
  return table;
}
inline const char* channel_class_name(ChannelClass c) {
  return channel_classes().name_of(c).c_str();
}

inline constexpr std::uint32_t kMaxMessageSlots = 1024;  // per channel, the spec's limit

// The credit window of one class of channel: `slots` slots of `slot_bytes` each.
struct MessageWindow {
  std::uint32_t slots = 4;
  std::uint64_t slot_bytes = 4096;
  // The spec left the slot count out: the loader chose it to cover the class's round trip
  // (components/network/message_window.hpp).
  bool automatic = true;
  std::uint64_t bytes() const { return std::uint64_t{slots} * slot_bytes; }
};

// Messages between programs (tl.send / tl.recv): each (sender, receiver) channel is a queue of
// slots in the receiver's memory, as many and as large as its class's window; a recv that frees
// a slot sends a credit of `credit_bytes` back over the network.
struct MessagesConfig {
  std::array<MessageWindow, 3> windows;  // per ChannelClass, resolved by the loader
  SlotMemory memory = SlotMemory::pe_sram;
  std::uint32_t credit_bytes = 16;
  // The cost of reading a slot into a tile, or of a slot's write once its payload has arrived
  // (the latency only: the network's last link already serialised it). HBM slots are reached
  // over the network, as loads and stores are.
  Bandwidth pe_sram_bandwidth = Bandwidth::from_GBps(512);
  Tick pe_sram_latency = 0;
  std::uint64_t cube_sram_bytes = 8 << 20;  // per cube, shared by the channels into it
  Bandwidth cube_sram_bandwidth = Bandwidth::from_GBps(128);
  Tick cube_sram_latency = 2000;

  const MessageWindow& window(ChannelClass c) const { return windows[static_cast<int>(c)]; }
  MessageWindow& window(ChannelClass c) { return windows[static_cast<int>(c)]; }
};

// How the programs of a logical grid (one larger than the hardware, or launched as logical) are
// placed on PEs: program i (axis 0 fastest) goes to a PE chosen by `policy`, programs beyond the
// PE count run in later waves, each starting on its PE when the PE's previous program ends.
// The dispatcher hands out one program at a time, `cost` each (a serial resource).
enum class DispatchPolicy : std::uint8_t { round_robin, cube_major, pe_major };
// By name (emu/name_table.hpp): system.dispatch.policy's allowed values.
inline const emu::NameTable<DispatchPolicy>& dispatch_policies() {
  static const emu::NameTable<DispatchPolicy> table("dispatch policy",
                                                    {{"round_robin", DispatchPolicy::round_robin},
                                                     {"cube_major", DispatchPolicy::cube_major},
                                                     {"pe_major", DispatchPolicy::pe_major}});
  return table;
}
inline const char* dispatch_policy_name(DispatchPolicy p) {
  return dispatch_policies().name_of(p).c_str();
}

struct DispatchConfig {
  DispatchPolicy policy = DispatchPolicy::round_robin;
  Tick cost = 0;    // per program dispatched
  Tick launch = 0;  // per launch, before its first program (any grid)
};

// The host and the way to it (system.host; components/host/host_path.hpp): a host link (PCIe
// or CXL class) per SIP into the SIP's IO die, which joins the cubes `io_cubes` (indices
// within a SIP) through ports on the mesh nodes `io_nodes` of each. Host transfers a user asks
// to time cross it; untimed ones, the default, are free.
struct HostConfig {
  Bandwidth link_bandwidth = Bandwidth::from_GBps(55);  // per SIP, per direction
  Tick link_latency = 1000000;                          // one way, host to the IO die
  Tick setup = 2000000;                                 // per transfer: the DMA's descriptor
  std::vector<std::uint32_t> io_cubes{0};
  std::vector<MeshCoord> io_nodes{{0, 0}};
  Bandwidth io_bandwidth = Bandwidth::from_GBps(128);  // per port, per direction
  Tick io_latency = 20000;                             // across the IO die to a port's router
};

// Energy per action (system.energy; components/energy/energy_model.hpp): what each byte a
// link, HBM, the cube cache or SRAM moves, each GEMM FLOP and each vector element-op costs, and
// each PE's static power. Absent from the spec: nothing is accounted.
struct EnergyConfig {
  bool on = false;
  double noc_pj_per_byte = 0;        // per byte per NOC link or PE port crossed
  double ucie_pj_per_byte = 0;       // per byte per UCIe link crossed
  double inter_sip_pj_per_byte = 0;  // per byte per inter-SIP link crossed
  double hbm_pj_per_byte = 0;        // per byte read from or written to HBM
  double cache_pj_per_byte = 0;      // per byte the cube cache serves or fills
  double sram_pj_per_byte = 0;       // per byte written into or read out of PE SRAM by transfers
  double vector_pj_per_element = 0;  // per element of a vector-unit operation
  std::array<double, kDTypeCount> gemm_pj_per_flop{};  // per dtype of the inputs
  double static_w_per_pe = 0;
};

struct SystemConfig {
  std::string name;
  std::string description;
  std::uint32_t sips = 1;           // system.sips.count
  std::uint32_t cubes_per_sip = 1;  // system.sips.cubes_per_sip (ADR-0022)
  CubeConfig cube;
  PeConfig pe;
  UcieConfig ucie;
  InterSipConfig inter_sip;
  MemoryConfig memory;
  MessagesConfig messages;
  DispatchConfig dispatch;
  HostConfig host;
  EnergyConfig energy;

  std::uint64_t total_cubes() const { return std::uint64_t{sips} * cubes_per_sip; }
  std::uint64_t total_pes() const { return total_cubes() * cube.pes; }
  // The class of the channel between two global PEs.
  ChannelClass channel_class(std::uint64_t from_pe, std::uint64_t to_pe) const {
    const std::uint64_t a = from_pe / cube.pes, b = to_pe / cube.pes;
    if (a == b) return ChannelClass::mesh;
    return a / cubes_per_sip == b / cubes_per_sip ? ChannelClass::ucie : ChannelClass::inter_sip;
  }
  // The window of the channel between two global PEs.
  const MessageWindow& message_window(std::uint64_t from_pe, std::uint64_t to_pe) const {
    return messages.window(channel_class(from_pe, to_pe));
  }
};

}  // namespace cubesim::components
