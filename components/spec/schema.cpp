#include "components/spec/schema.hpp"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "components/dtype.hpp"
#include "components/hbm/hbm_model.hpp"
#include "components/system_config.hpp"

namespace cubesim::components::spec {

std::string_view SpecField::key() const {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
}

std::string_view SpecField::parent_path() const {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string_view() : std::string_view(path).substr(0, dot);
}

std::string SpecField::pointer() const {
  std::string p = "/" + path;
  for (char& c : p)
    if (c == '.') c = '/';
  return p;
}

SpecField& SpecField::range(double lo, double hi) {
  has_range = true;
  min = lo;
  max = hi;
  return *this;
}

SpecField& SpecField::above(double lo, double hi) {
  range(lo, hi);
  min_exclusive = true;
  return *this;
}

SpecField& SpecField::def(nlohmann::json value) {
  presence = Presence::optional;
  default_value = std::move(value);
  return *this;
}

SpecField& SpecField::optional() {
  presence = Presence::optional;
  return *this;
}

SpecField& SpecField::when(std::string condition_text) {
  presence = Presence::conditional;
  condition = std::move(condition_text);
  return *this;
}

SpecField& SpecField::pow2() {
  power_of_two = true;
  return *this;
}

SpecField& SpecField::desc(std::string text) {
  description = std::move(text);
  return *this;
}

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * 1024 * 1024;
// Mesh coordinates are bounded by the largest mesh; the real mesh is checked across fields.
constexpr double kMaxMeshDim = 64;
// Generous physical ceilings: they catch unit mistakes (ps for ns, MB/s for GB/s) and keep
// every conversion to ps and B/s far from overflow, without limiting what-if studies.
constexpr double kMaxLatencyNs = 1e9;      // 1 s
constexpr double kMaxBandwidthGBps = 1e6;  // 1 PB/s per link
constexpr double kMaxPeakTflops = 1e6;

SpecField field(std::string path, FieldType type, std::string unit = {}) {
  SpecField f;
  f.path = std::move(path);
  f.type = type;
  f.unit = std::move(unit);
  return f;
}

SpecField object(std::string path) {
  return field(std::move(path), FieldType::object);
}
SpecField text(std::string path) {
  return field(std::move(path), FieldType::string);
}
SpecField integer(std::string path, std::string unit = {}) {
  return field(std::move(path), FieldType::integer, std::move(unit));
}
SpecField number(std::string path, std::string unit) {
  return field(std::move(path), FieldType::number, std::move(unit));
}
SpecField latency(std::string path) {
  return std::move(number(std::move(path), "ns").range(0, kMaxLatencyNs));
}
SpecField bandwidth(std::string path) {
  return std::move(number(std::move(path), "GB/s").above(0, kMaxBandwidthGBps));
}
SpecField size(std::string path, std::string unit, std::uint64_t bytes_per_unit) {
  SpecField f = field(std::move(path), FieldType::size, std::move(unit));
  f.bytes_per_unit = bytes_per_unit;
  return f;
}
SpecField choice(std::string path, std::vector<std::string> choices) {
  SpecField f = field(std::move(path), FieldType::choice);
  f.choices = std::move(choices);
  return f;
}
SpecField choice_list(std::string path, std::vector<std::string> choices) {
  SpecField f = field(std::move(path), FieldType::choice_list);
  f.choices = std::move(choices);
  return f;
}
SpecField extent(std::string path) {
  return std::move(field(std::move(path), FieldType::extent).range(1, kMaxMeshDim));
}
SpecField index_list(std::string path, std::string unit) {
  return field(std::move(path), FieldType::index_list, std::move(unit));
}
SpecField coord_list(std::string path) {
  return std::move(field(std::move(path), FieldType::coord_list).range(0, kMaxMeshDim - 1));
}

// The input buffers at the far end of a class of links (prefix: their section), which give
// the packet model back-pressure: credits, virtual channels, and how long a credit takes back.
void add_buffers(std::vector<SpecField>& s, const std::string& prefix, const std::string& where,
                 const std::string& latency_field) {
  if (prefix.ends_with(".router"))
    s.push_back(std::move(object(prefix).optional().desc(
        "Router input ports: buffers, virtual channels and credit flow control.")));
  s.push_back(std::move(
      integer(prefix + ".input_buffer_bytes", "bytes")
          .range(0, 1 << 30)
          .def(0)
          .desc(fmt::format("Buffer of {}, split evenly over its virtual channels; a packet "
                            "crosses a link only when a channel of the buffer beyond it has room "
                            "for the whole packet (virtual cut-through, credit flow control), so "
                            "congestion spreads backwards. Each channel must hold a packet "
                            "(`noc.packet_bytes`). 0: unbounded, no back-pressure.",
                            where))));
  s.push_back(std::move(integer(prefix + ".virtual_channels", "VCs")
                            .range(1, 64)
                            .def(1)
                            .desc("Virtual channels per input buffer. Packets are of a few "
                                  "classes, fixed by the UCIe and inter-SIP topologies and not "
                                  "by their size, and each class has channels of its own, which "
                                  "keeps routes between cubes free of deadlock "
                                  "(docs/hardware-model.md).")));
  s.push_back(std::move(latency(prefix + ".credit_latency_ns")
                            .optional()
                            .desc(fmt::format("Time a credit takes back to the sender after a "
                                              "packet's tail has left the buffer; default "
                                              "`{}`.",
                                              latency_field))));
}

std::string vector_op_description(VectorOp op) {
  switch (op) {
    case VectorOp::simple:
      return "Add, subtract, multiply, compare, select (`where`), bitwise and shifts, abs, "
             "floor, ceil, min/max of two tiles, fills and data movement (`permute`, `cat`, "
             "`broadcast_to`), and each multiply-add of `dot`.";
    case VectorOp::convert:
      return "A dtype cast (`Tile::to`).";
    case VectorOp::reduce:
      return "Each element reduced by sum, max, min, argmax, argmin, or scanned by cumsum.";
    case VectorOp::divide:
      return "Float division, integer division (`floordiv`) and remainder (`%`).";
    case VectorOp::sqrt:
      return "sqrt and rsqrt.";
    case VectorOp::exp:
      return "exp, exp2, log and log2.";
    case VectorOp::transcendental:
      return "tanh, sigmoid, erf and pow.";
  }
  return "";
}

// The document, the system and its SIPs.
void add_document_and_sips(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };

  add(
      text("name").desc("Short name of the system; reports and sweeps label results with it. "
                        "A spec that extends another must set its own."));
  add(text("description").desc("What the spec models, in a sentence or two."));
  add(text("extends").optional().desc(
      "Path of a spec this one builds on, relative to this file. The base is loaded first and "
      "this file is applied to it as a JSON merge patch (RFC 7386; `null` deletes a field)."));
  add(object("system").desc("The hardware."));

  add(object("system.sips").desc("How many SIPs (systems-in-package) and how many cubes each."));
  add(integer("system.sips.count", "SIPs")
          .range(1, 4096)
          .def(1)
          .desc("Number of SIPs; `program_id(2)` ranges over them."));
  add(integer("system.sips.cubes_per_sip", "cubes")
          .range(1, 256)
          .desc("Cubes (dies) per SIP; `num_programs(1)` (ADR-0022)."));
  add(extent("system.sips.grid")
          .range(1, 4096)
          .when("required when `inter_sip.topology` is `mesh` or `torus`; with another topology, "
                "refused unless the topology was set after it (then ignored)")
          .desc("SIP grid [x, y] for the mesh and torus inter-SIP topologies; x * y == `count`. "
                "SIP i sits at (i % x, i / x)."));
}

// A cube: its PEs and NOC.
void add_cube(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.cube").desc("One cube (die): PEs on a NOC mesh, sharing the cube's HBM."));
  add(integer("system.cube.pes", "PEs")
          .range(1, kMaxMeshDim * kMaxMeshDim)
          .desc("PEs per cube; one sits on each mesh node, PE i on node (i % x, i / x)."));

  add(object("system.cube.noc").desc("The cube's 2D mesh network (dimension-order XY routing)."));
  add(extent("system.cube.noc.mesh").desc("Mesh size [x (columns), y (rows)]; x * y == pes."));
  add(bandwidth("system.cube.noc.link_bandwidth_GBps")
          .desc("Bandwidth of each direction of each mesh link."));
  add(latency("system.cube.noc.hop_latency_ns")
          .def(1.0)
          .desc("Latency per link traversed: the wire and the crossbar, and the rest of the "
                "router unless `router.pipeline_cycles` gives its pipeline."));
  add(integer("system.cube.noc.packet_bytes", "bytes")
          .range(16, 1 << 20)
          .def(4096)
          .desc("Transfers are split into packets of this size; each occupies each link on its "
                "path for "
                "its serialisation time."));
  add(integer("system.cube.noc.response_bytes", "bytes")
          .range(1, 1 << 20)
          .def(16)
          .desc("A write's response (AXI's B channel): a packet this long goes back from the "
                "memory controller to the writing PE over the reverse route, and the write, and "
                "its DMA slot, complete when it arrives; at most `packet_bytes`."));
  add(coord_list("system.cube.noc.hbm_nodes")
          .desc("Mesh nodes [x, y] where HBM controllers attach, no repeats; channel c is served "
                "by the controller on node c mod (number of nodes). `\"every_node\"`: one "
                "HBM slice at every router."));
  add(coord_list("system.cube.noc.ucie_nodes")
          .desc("Mesh nodes [x, y] where UCIe connections attach, no repeats: connection j of "
                "the side toward a cube's r-th neighbour (neighbours in increasing index) sits "
                "on node (r * `ucie.connections` + j) mod (number of nodes)."));
  add(coord_list("system.cube.noc.inter_sip_node")
          .def(nlohmann::json::array({0, 0}))
          .desc("Mesh node [x, y], or nodes, where the inter-SIP port's connections attach "
                "(on `inter_sip.port_cube`): connection j on node j mod (number of nodes)."));

  add_buffers(s, "system.cube.noc.router",
              "each router input port (from a mesh link, the PE, "
              "or an HBM controller)",
              "noc.hop_latency_ns");
  add(integer("system.cube.noc.router.pipeline_cycles", "cycles")
          .range(0, 64)
          .def(0)
          .desc("Router cycles from a packet's head reaching a router input to its crossing the "
                "crossbar (routing, VC allocation, switch allocation), per router crossed, on top "
                "of `hop_latency_ns` (then the crossbar and the wire). With bounded buffers a "
                "virtual channel starts its next packet's pipeline in the cycle its previous "
                "packet's tail crossed, so one channel passes a packet per pipeline at most. 0: "
                "`hop_latency_ns` holds the whole router."));
  add(number("system.cube.noc.router.clock_GHz", "GHz")
          .range(0.001, 100)
          .optional()
          .desc("Router clock, for `pipeline_cycles`; default `system.pe.clock_GHz`."));
  add(integer("system.cube.noc.router.input_speedup", "packets")
          .range(1, 16)
          .def(1)
          .desc("Packets a router input port with a bounded buffer sends through the crossbar at "
                "once, over all its virtual channels (an input with one crossbar port: 1)."));
  add(choice("system.cube.noc.router.allocation", router_allocations().names())
          .def("fcfs")
          .desc("How a router output is allocated among the packets of bounded input buffers "
                "that are ready for it. `fcfs`: each books it ahead in the order they ask, first "
                "come first served (the fastest to simulate); `round_robin`: they wait, and when "
                "it frees it goes to the first waiting packet of the next input after the one "
                "last granted; `age`: likewise, to the packet of the transfer asked for first."));
}

// A cube's HBM.
void add_hbm(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.cube.hbm").desc("The cube's HBM: capacity, bandwidth over channels."));
  add(size("system.cube.hbm.capacity_GiB", "GiB", kGiB)
          .above(0, 65536)
          .desc("Capacity per cube; a multiple of `channel_interleave_bytes` and of "
                "`memory.interleave_KiB`. Each cube owns this much of the flat address space."));
  add(bandwidth("system.cube.hbm.bandwidth_GBps")
          .desc("Bandwidth per cube, all channels together; split evenly over the channels."));
  add(integer("system.cube.hbm.channels", "channels")
          .range(1, 1024)
          .def(16)
          .desc(
              "Independent channels; consecutive interleave granules go to consecutive channels."));
  add(latency("system.cube.hbm.latency_ns").def(100.0).desc("Access latency per request."));
  add(latency("system.cube.hbm.atomic_ns")
          .def(2.0)
          .desc("Time a channel's atomic unit spends on one read-modify-write request "
                "(tl.atomic_*), on top of reading its words at the channel's bandwidth; a "
                "channel's unit serves requests one at a time."));
  add(integer("system.cube.hbm.channel_interleave_bytes", "bytes")
          .range(32, 1 << 30)
          .pow2()
          .def(4096)
          .desc("Granule of the address interleave across channels; a power of two."));
  add(choice("system.cube.hbm.model", hbm_models().names())
          .def("simple")
          .desc("How the channels serve requests. `simple`: each channel serves `bandwidth_GBps` "
                "/ `channels` after `latency_ns` per request, whatever the address. `banked`: "
                "each channel is a pseudo-channel with the banks, rows, refresh and bus "
                "turnaround of `banked`, its requests scheduled first-ready first-come "
                "(FR-FCFS) in the packet model; `latency_ns` is then the controller's and PHY's "
                "share (docs/hardware-model.md, \"Banked HBM\")."));
  add(object("system.cube.hbm.banked")
          .optional()
          .desc("The DRAM of every channel for `model` banked. The defaults are an HBM3-class "
                "preset: 4 bank groups of 4 banks, 1 KiB rows, 32-byte bursts, all-bank "
                "refresh."));
  add(choice("system.cube.hbm.banked.row_policy", row_policies().names())
          .def("open")
          .desc("`open`: a row stays open after an access (the next access to it hits). "
                "`closed`: every access precharges its banks after it."));
  add(integer("system.cube.hbm.banked.bank_groups", "groups")
          .range(1, 64)
          .def(4)
          .desc("Bank groups per channel; consecutive bursts rotate over them."));
  add(integer("system.cube.hbm.banked.banks_per_group", "banks")
          .range(1, 64)
          .def(4)
          .desc("Banks per bank group."));
  add(integer("system.cube.hbm.banked.row_bytes", "bytes")
          .range(32, 1 << 20)
          .pow2()
          .def(1024)
          .desc("A bank's row (page); a whole number of bursts."));
  add(integer("system.cube.hbm.banked.burst_bytes", "bytes")
          .range(1, 4096)
          .pow2()
          .def(32)
          .desc("The data of one column access; a power of two."));
  add(integer("system.cube.hbm.banked.queue_depth", "requests")
          .range(1, 4096)
          .def(64)
          .desc("Requests the scheduler chooses among; later ones wait in order behind them."));
  const auto timing = [&](const char* name, double def, const char* what) {
    add(latency(std::string("system.cube.hbm.banked.") + name).def(def).desc(what));
  };
  timing("trcd_ns", 14.0, "tRCD: activate to a column command of that row.");
  timing("tcl_ns", 14.0, "tCL: a read command to its data.");
  timing("tcwl_ns", 6.0, "tCWL: a write command to its data.");
  timing("trp_ns", 14.0, "tRP: precharge to the next activate of the bank.");
  timing("tras_ns", 33.0, "tRAS: activate to precharge of the bank.");
  timing("twr_ns", 16.0, "tWR: end of a bank's write data to its precharge.");
  timing("trfc_ns", 350.0, "tRFC: an all-bank refresh, during which the channel serves nothing.");
  timing("trefi_ns", 3900.0, "tREFI: from one refresh to the next; longer than `trfc_ns`.");
  add(integer("system.cube.hbm.banked.max_postponed_refreshes", "refreshes")
          .range(0, 64)
          .def(8)
          .desc("Refreshes a busy channel may put off (JEDEC DRAMs allow 8): it does them in "
                "idle time, or before serving once it owes more."));
  timing("twtr_ns", 8.0, "tWTR: end of write data to the next read command.");
  timing("trtw_ns", 4.0, "Read to write: end of read data to write data (bus turnaround).");
  timing("tccd_l_ns", 1.5, "tCCD_L: column commands to one bank group.");
  timing("trrd_ns", 2.0, "tRRD: activates in one channel.");
}

// A cube's shared cache in front of its HBM.
void add_cache(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.cube.cache")
          .optional()
          .desc("A cache shared by the cube in front of its HBM, one slice per HBM channel, that "
                "every access to the cube's memory passes through (a GPU's L2): reads allocate "
                "on a miss, writes go through to HBM and allocate the lines they cover whole "
                "(docs/hardware-model.md)."));
  add(choice("system.cube.cache.model", cache_models().names())
          .def("none")
          .desc("`none`: no cache. `lru`: set-associative, least recently used line replaced."));
  add(size("system.cube.cache.size_MiB", "MiB", kMiB)
          .above(0, 1 << 20)
          .def(32)
          .desc("Capacity per cube; whole sets of `ways` x `line_bytes`, at most the cube's "
                "HBM."));
  add(integer("system.cube.cache.ways", "lines").range(1, 1024).def(16).desc("Lines per set."));
  add(integer("system.cube.cache.line_bytes", "bytes")
          .range(32, 1 << 20)
          .pow2()
          .def(128)
          .desc("Line size: the unit looked up, allocated and replaced; a power of two, at most "
                "`hbm.channel_interleave_bytes` (a line lies in one channel)."));
  add(latency("system.cube.cache.hit_latency_ns")
          .def(20.0)
          .desc("A hit's access, in place of `hbm.latency_ns`; a miss pays the HBM's."));
  add(bandwidth("system.cube.cache.bandwidth_GBps")
          .def(4000.0)
          .desc("What the cube's slices serve together, split evenly over them (one per HBM "
                "channel)."));
}

// Every PE: clock, SRAM, vector unit, GEMM engine, DMA.
void add_pe(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.pe").desc("Every PE: clock, local SRAM, vector unit, GEMM engine, DMA."));
  add(number("system.pe.clock_GHz", "GHz").range(0.001, 100).desc("PE clock."));
  add(size("system.pe.sram_KiB", "KiB", kKiB)
          .above(0, 1 << 20)
          .desc("Local SRAM; `tl.load` fails when a tile would overflow it."));
  add(latency("system.pe.issue_ns")
          .def(0.0)
          .desc("Time the PE's control core takes to issue one TL call that acts (a load, store, "
                "wait, composite, message, barrier, atomic or in-network reduction, or a vector "
                "operation on a tile), before the call does: a GPU's instruction issue, a "
                "dataflow PE's command processor. 0: calls are free."));
  add(object("system.pe.vector").optional().desc("The vector unit that costs tile math."));
  add(integer("system.pe.vector.lanes", "elements/cycle")
          .range(1, 65536)
          .def(64)
          .desc("Elements processed per cycle by element-wise tile math."));
  add(integer("system.pe.vector.latency_cycles", "cycles")
          .range(0, 1'000'000)
          .def(4)
          .desc("Pipeline latency added once per vector operation."));
  add(object("system.pe.vector.op_cycles")
          .optional()
          .desc("Lane slots one element of each class of operation takes: an operation on n "
                "elements costs ceil(n * op_cycles / lanes) + latency_cycles cycles "
                "(docs/hardware-model.md)."));
  for (VectorOp op : kAllVectorOps) {
    add(integer(fmt::format("system.pe.vector.op_cycles.{}", vector_op_name(op)), "cycles/element")
            .range(1, 1'000'000)
            .def(default_vector_op_cycles(op))
            .desc(vector_op_description(op)));
  }
  add(integer("system.pe.vector.sram_banks", "banks")
          .range(1, 65536)
          .optional()
          .desc("Banks of PE SRAM the vector unit reads tiles through, each giving one word a "
                "cycle. Default: one per lane. Element-wise math reads whole words in order; a "
                "data movement (trans, permute, broadcast_to, cat) reads the elements it "
                "gathers, and a bank asked for k different words in one cycle's group of `lanes` "
                "elements takes k cycles (docs/hardware-model.md, \"SRAM banks\")."));
  add(integer("system.pe.vector.sram_bank_bytes", "bytes")
          .range(1, 1024)
          .pow2()
          .def(8)
          .desc("Width of a bank's word: elements in one word are read together."));
  add(choice("system.pe.vector.sram_bank_mapping", bank_mappings().names())
          .def("linear")
          .desc("Which bank holds word w: `linear`, w mod banks (a tile's column, rows a "
                "multiple of the banks' width apart, falls in one bank); `skewed`, (w + w / banks) "
                "mod banks (each row of banks starts one bank on, as padding a row by a word "
                "does, so columns spread)."));
  add(object("system.pe.gemm").desc("The GEMM engine that runs composite ops asynchronously."));
  add(latency("system.pe.gemm.startup_ns").def(0.0).desc("Fixed cost of each composite GEMM."));
  add(object("system.pe.gemm.peak_TFLOPS")
          .desc("Peak rate per input dtype, in 10^12 FLOP/s. bool has none: a composite GEMM "
                "multiplies no masks (cast them to i8)."));
  for (DType t : kAllDTypes) {
    if (t == DType::boolean) continue;
    auto f = number(fmt::format("system.pe.gemm.peak_TFLOPS.{}", dtype_name(t)), "TFLOP/s")
                 .above(0, kMaxPeakTflops)
                 .desc(fmt::format("Peak GEMM rate with {} inputs.", dtype_name(t)));
    // The dtypes a GEMM engine need not have: without a rate, a GEMM of them is an error.
    if (t != DType::f16 && t != DType::bf16 && t != DType::f32 && t != DType::i32)
      f.optional().desc(
          fmt::format("Peak GEMM rate with {} inputs; without it a {} composite GEMM is an error.",
                      dtype_name(t), dtype_name(t)));
    add(f);
  }
  add(number("system.pe.gemm.epilogue_Gelem_per_s", "Gelem/s")
          .above(0, kMaxPeakTflops * 1e3)
          .def(96.0)
          .desc("Output elements per second, in 10^9, through one step of a composite GEMM's "
                "epilogue (alpha scale, beta scale of the accumulator, bias, activation); each "
                "step adds M * N / rate after the compute."));
  add(choice("system.pe.gemm.model", gemm_models().names())
          .def("simple")
          .desc("How a GEMM's compute time follows from its shape. `simple`: 2 M N K at the "
                "dtype's peak. `systolic`: an array of `systolic.rows` x `systolic.cols` cells "
                "that cuts the GEMM into folds, each paying its fill and drain, fed from SRAM "
                "at `systolic.sram_feed_GBps` (docs/hardware-model.md)."));
  add(object("system.pe.gemm.systolic")
          .optional()
          .desc("The array of `model: systolic`. Each cell does peak_TFLOPS(dtype) / (2 rows "
                "cols clock) multiply-adds of K per cycle."));
  add(integer("system.pe.gemm.systolic.rows", "cells")
          .range(1, 65536)
          .def(128)
          .desc("Rows of the array: K of a weight-stationary fold, M of an output-stationary "
                "one."));
  add(integer("system.pe.gemm.systolic.cols", "cells")
          .range(1, 65536)
          .def(128)
          .desc("Columns of the array: N of a fold."));
  add(choice("system.pe.gemm.systolic.dataflow", dataflows().names())
          .def("weight_stationary")
          .desc("What stays in the cells: B's K x N tile (A's rows stream through), or C's M x "
                "N tile (K streams through)."));
  add(number("system.pe.gemm.systolic.sram_feed_GBps", "GB/s")
          .range(0, kMaxBandwidthGBps)
          .def(0.0)
          .desc("Bytes per second, in 10^9, the SRAM feeds the array (operands in, partial "
                "sums and results out); 0: no limit."));
  add(object("system.pe.dma").optional().desc("The engine that moves data for load/store."));
  add(integer("system.pe.dma.max_outstanding_packets", "packets")
          .range(1, 65536)
          .def(32)
          .desc("Packets the PE's DMA engine keeps in flight at once, over all its transfers."));
}

// A switch's in-network reduction (as NVLink SHARP / NVLS or InfiniBand SHARP): the switch of
// `prefix` adds what the members of a reduction send up and sends the sum down to each.
void add_switch_reduction(std::vector<SpecField>& s, const std::string& prefix,
                          const std::string& nodes, const std::string& node) {
  std::vector<std::string> dtypes;
  for (const DType t : kAllDTypes)
    if (t != DType::boolean) dtypes.emplace_back(dtype_name(t));
  s.push_back(std::move(
      object(prefix + ".switch_reduction")
          .when("only with `topology` `switch`; absent: the switch does not reduce")
          .desc(fmt::format(
              "In-network reduction: the switch adds the tiles the {0} of a reduction send up "
              "(one program at the same place in each {1}) and sends the sum down to each of "
              "them, as NVLink SHARP does; `tl.switch_reduce` and the `switch` all-reduce use "
              "it.",
              nodes, node))));
  s.push_back(std::move(choice_list(prefix + ".switch_reduction.dtypes", std::move(dtypes))
                            .def(nlohmann::json::array({"f32", "f16", "bf16"}))
                            .desc("Element types the switch can add (in f32 for the 16-bit "
                                  "floats); a reduction of another is refused.")));
  s.push_back(std::move(
      bandwidth(prefix + ".switch_reduction.bandwidth_GBps")
          .optional()
          .desc(fmt::format("Rate at which the switch adds what arrives on each link up to it "
                            "(one adder per link, in order of arrival); absent: the links' "
                            "`bandwidth_GBps` (line rate). A reduction's sum leaves once every "
                            "{}'s part has been added.",
                            node))));
}

// The UCIe and inter-SIP links.
void add_links(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.ucie").desc("UCIe die-to-die links between the cubes of a SIP."));
  add(choice("system.ucie.topology", graph_kinds().names())
          .def("ring")
          .desc("How the cubes of a SIP are linked. A ring of 2 cubes is one link; a torus "
                "wraps each row and column of the grid around; a switch gives every cube a "
                "port (`connections` links each way, `bandwidth_GBps` each) on one crossbar "
                "that never blocks, so a crossing between any two cubes is two links."));
  add(extent("system.ucie.mesh")
          .when("required when `topology` is `mesh` or `torus`; with another topology, refused "
                "unless the topology was set after it (then ignored)")
          .desc("Cube grid [x, y] for the mesh and torus topologies; x * y == "
                "`sips.cubes_per_sip`."));
  add(latency("system.ucie.latency_ns")
          .desc("Latency of one die-to-die link; with topology `switch`, of the link from a cube "
                "to the switch and of the link from the switch to a cube."));
  add(latency("system.ucie.switch_latency_ns")
          .optional()
          .when("only with `topology` `switch` (default 0 there); with another topology, refused "
                "unless the topology was set after it (then ignored)")
          .desc("Latency through the switch, from the link into it to the link out of it: a "
                "crossing between two cubes takes `latency_ns` twice plus this."));
  add(bandwidth("system.ucie.bandwidth_GBps")
          .desc("Bandwidth of each link (each connection of a side), per direction."));
  add_switch_reduction(s, "system.ucie", "cubes", "cube");
  add(integer("system.ucie.connections", "links")
          .range(1, 64)
          .def(1)
          .desc("Links between two neighbouring cubes, each on its own mesh node of either "
                "cube (`noc.ucie_nodes`); a packet takes the one nearest the node it is on, "
                "the lowest-numbered on a tie."));

  add_buffers(s, "system.ucie", "the receiving end of each UCIe link", "ucie.latency_ns");

  add(object("system.inter_sip").desc("Links between SIPs (unused when `sips.count` is 1)."));
  add(choice("system.inter_sip.topology", graph_kinds().names())
          .def("ring")
          .desc("How the SIPs are linked; mesh and torus lay them out on `sips.grid`; a switch "
                "(as NVSwitch or a UALink or PCIe switch joins devices) gives every SIP a port "
                "(`connections` links each way, `bandwidth_GBps` each) on one crossbar that never "
                "blocks, so a crossing between any two SIPs is two links."));
  add(integer("system.inter_sip.port_cube", "cube")
          .range(0, 255)
          .def(0)
          .desc("The cube of each SIP that holds the inter-SIP port; < `sips.cubes_per_sip`."));
  add(latency("system.inter_sip.latency_ns")
          .desc("Latency of one SIP-to-SIP link; with topology `switch`, of the link from a "
                "SIP to the switch and of the link from the switch to a SIP."));
  add(latency("system.inter_sip.switch_latency_ns")
          .optional()
          .when("only with `topology` `switch` (default 0 there); with another topology, refused "
                "unless the topology was set after it (then ignored)")
          .desc("Latency through the switch, from the link into it to the link out of it: a "
                "crossing between two SIPs takes `latency_ns` twice plus this."));
  add(bandwidth("system.inter_sip.bandwidth_GBps")
          .desc("Bandwidth of each link (each connection), per direction."));
  add_switch_reduction(s, "system.inter_sip", "SIPs", "SIP");
  add(integer("system.inter_sip.connections", "links")
          .range(1, 64)
          .def(1)
          .desc("Links between two neighbouring SIPs, each on its own node of the port cube "
                "(`noc.inter_sip_node`); a transfer takes connection (source node mod "
                "connections)."));

  add_buffers(s, "system.inter_sip", "the receiving end of each inter-SIP link",
              "inter_sip.latency_ns");
}

// The dispatcher and the messages between programs.
void add_dispatch_and_messages(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.dispatch")
          .optional()
          .desc("How a launch starts its programs: its launch time, and the dispatcher that "
                "places the programs of a logical grid (larger than the hardware, or launched as "
                "logical) on PEs, in waves."));
  add(choice("system.dispatch.policy", dispatch_policies().names())
          .def("round_robin")
          .desc("Where program i (axis 0 fastest) runs. `round_robin`: consecutive programs on "
                "consecutive cubes (program i on cube i mod cubes), spreading them over every "
                "cube's HBM; `cube_major`: consecutive programs fill a cube's PEs first; "
                "`pe_major`: each PE runs a contiguous range of programs, one after another. "
                "Programs beyond the PE count wait for their PE's previous program to end."));
  add(latency("system.dispatch.cost_ns")
          .def(0.0)
          .desc("Time the dispatcher takes to start one program on a PE; it starts one at a "
                "time, so a wave of n programs takes n times this to start."));
  add(latency("system.dispatch.launch_ns")
          .def(0.0)
          .desc("A kernel launch's own time, on any grid: from the host's launch call until "
                "programs may start (the driver, the command's way to the device, its fan-out "
                "to the PEs). Every launch pays it once, before its first program; the "
                "simulated time includes it."));

  add(object("system.messages")
          .optional()
          .desc("Messages between programs (tl.send / tl.recv): each (sender, receiver) channel "
                "is an in-order queue of slots in the receiver's memory."));
  add(integer("system.messages.slots", "slots")
          .range(1, kMaxMessageSlots)
          .optional()
          .desc("Slots per channel of every class that does not set its own "
                "(`messages.mesh`, `.ucie`, `.inter_sip`): a sender with every slot full waits "
                "until the receiver frees one and its credit is back. Default: per class, enough "
                "slots to cover the class's credit loop (its bandwidth-delay product, "
                "docs/hardware-model.md), at most a quarter of the memory the slots live in; "
                "`cubesim info` shows each window and what it covers."));
  add(size("system.messages.slot_KiB", "KiB", kKiB)
          .range(0.0625, 1 << 20)
          .def(4)
          .desc("Bytes per slot of every class that does not set its own; a message (one tile) "
                "must fit one slot."));
  for (ChannelClass c : kAllChannelClasses) {
    const std::string name = channel_class_name(c);
    const char* between = c == ChannelClass::mesh   ? "PEs of one cube"
                          : c == ChannelClass::ucie ? "PEs of different cubes of one SIP"
                                                    : "PEs of different SIPs";
    add(object("system.messages." + name)
            .optional()
            .desc(fmt::format("The credit window of channels between {}.", between)));
    add(integer("system.messages." + name + ".slots", "slots")
            .range(1, kMaxMessageSlots)
            .optional()
            .desc(fmt::format("Slots per channel between {}; default `messages.slots`, else "
                              "enough to cover the class's credit loop.",
                              between)));
    add(size("system.messages." + name + ".slot_KiB", "KiB", kKiB)
            .range(0.0625, 1 << 20)
            .optional()
            .desc(fmt::format("Bytes per slot of channels between {}; default "
                              "`messages.slot_KiB`.",
                              between)));
  }
  add(choice("system.messages.memory", slot_memories().names())
          .def("pe_sram")
          .desc("Where the slots of a channel live: the receiving PE's SRAM (taken from "
                "`pe.sram_KiB` while the channel is in use), the receiving cube's shared SRAM "
                "(`messages.cube_sram`), or the receiving cube's HBM (written and read over the "
                "network)."));
  add(integer("system.messages.credit_bytes", "bytes")
          .range(1, 65536)
          .def(16)
          .desc("Size of the credit a receiver sends back over the network for each slot it "
                "frees."));
  add(object("system.messages.pe_sram")
          .optional()
          .desc("Access cost of slots in the receiving PE's SRAM."));
  add(bandwidth("system.messages.pe_sram.bandwidth_GBps")
          .def(512.0)
          .desc("Rate at which a recv copies a slot into a tile."));
  add(latency("system.messages.pe_sram.latency_ns")
          .def(0.0)
          .desc("Latency of a slot's write (after its payload arrived) and of its read."));
  add(object("system.messages.cube_sram")
          .optional()
          .desc("The cube's shared SRAM, when slots live there (a slice at every router)."));
  add(size("system.messages.cube_sram.capacity_KiB", "KiB", kKiB)
          .range(1, 1 << 30)
          .def(8192)
          .desc("Capacity per cube, shared by the slots of every channel into the cube."));
  add(bandwidth("system.messages.cube_sram.bandwidth_GBps")
          .def(128.0)
          .desc("Rate at which a recv copies a slot into a tile."));
  add(latency("system.messages.cube_sram.latency_ns")
          .def(2.0)
          .desc("Latency of a slot's write (after its payload arrived) and of its read."));
}

// The flat address space.
void add_memory(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.memory").optional().desc("The flat address space and functional storage."));
  add(size("system.memory.interleave_KiB", "KiB", kKiB)
          .range(0.0625, 1 << 20)
          .pow2()
          .def(4)
          .desc("Granule of buffers interleaved across cubes; a power of two, at least 64 bytes."));
  add(size("system.memory.page_KiB", "KiB", kKiB)
          .range(4, 1 << 20)
          .pow2()
          .def(64)
          .desc("Page of the sparse functional storage (made on first write); a power of two "
                "that divides a cube's HBM. A page costs host memory only where a run touches "
                "it."));
}

// Energy per action and static power.
// The host link and the IO die (components/host/host_path.hpp).
void add_host(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.host")
          .optional()
          .desc("The host and the way to it, for the host transfers a user asks to time "
                "(`Simulation::write(..., timed)`, `cubesim run --host`): each SIP has a host "
                "link (PCIe or CXL class) into its IO die, which joins some of its cubes through "
                "ports on their meshes. Untimed transfers (the default) take no simulated time."));
  add(bandwidth("system.host.link_bandwidth_GBps")
          .def(55.0)
          .desc("Each SIP's host link, per direction, as a long copy sustains it (PCIe 5.0 x16: "
                "55, measured on an H200, docs/validation.md)."));
  add(latency("system.host.link_latency_ns")
          .def(1000.0)
          .desc("One way over the host link, from host memory to the IO die."));
  add(latency("system.host.setup_ns")
          .def(2000.0)
          .desc("Each transfer's own start: the driver's call and the DMA engine's descriptors, "
                "before its first byte leaves."));
  add(object("system.host.io_die")
          .optional()
          .desc("The IO die of each SIP: the host link ends on it, and it joins cubes of the SIP "
                "through ports on their meshes."));
  add(index_list("system.host.io_die.cubes", "cube")
          .range(0, 255)
          .def(nlohmann::json::array({0}))
          .desc("The cubes of each SIP (indices < `sips.cubes_per_sip`) the IO die joins; a "
                "transfer to or from a cube goes through the joined cube nearest it (fewest "
                "UCIe hops, the lowest index on a tie)."));
  add(coord_list("system.host.io_die.nodes")
          .def(nlohmann::json::array({0, 0}))
          .desc("Mesh nodes [x, y] of each joined cube where the IO die's ports enter its "
                "mesh: the bytes of HBM channel c use port c mod (number of nodes)."));
  add(bandwidth("system.host.io_die.bandwidth_GBps")
          .def(128.0)
          .desc("Each port between the IO die and a cube's mesh, per direction."));
  add(latency("system.host.io_die.latency_ns")
          .def(20.0)
          .desc("Across the IO die, from the host link to a port's router."));
}

void add_energy(std::vector<SpecField>& s) {
  const auto add = [&s](SpecField& f) { s.push_back(std::move(f)); };
  add(object("system.energy")
          .optional()
          .desc("Energy per action and static power: with any figure above 0, a run reports its "
                "energy and average power per part (docs/hardware-model.md, \"Energy\"); "
                "without, none."));
  const auto per = [&](const char* key, const char* unit, const char* what) {
    add(number(fmt::format("system.energy.{}", key), unit).range(0, 1e6).def(0.0).desc(what));
  };
  per("noc_pJ_per_byte", "pJ/B",
      "Per byte per NOC link or PE port crossed (a router traversal and its wire).");
  per("ucie_pJ_per_byte", "pJ/B", "Per byte per UCIe link crossed.");
  per("inter_sip_pJ_per_byte", "pJ/B", "Per byte per inter-SIP link crossed.");
  per("hbm_pJ_per_byte", "pJ/B", "Per byte read from or written to HBM (through a channel).");
  per("cache_pJ_per_byte", "pJ/B",
      "Per byte the cube cache serves (hits) or takes in (lines filled by read misses).");
  per("sram_pJ_per_byte", "pJ/B",
      "Per byte a transfer writes into a PE's SRAM or reads out of it (loads, stores, messages "
      "sent and received).");
  per("vector_pJ_per_element", "pJ/element",
      "Per element of a vector-unit operation, its operands' SRAM accesses included.");
  add(object("system.energy.gemm_pJ_per_flop")
          .optional()
          .desc("Per FLOP of a composite GEMM, by input dtype, its operands' feed included; a "
                "dtype left out costs nothing."));
  for (DType t : kAllDTypes) {
    if (t == DType::boolean) continue;
    add(number(fmt::format("system.energy.gemm_pJ_per_flop.{}", dtype_name(t)), "pJ/FLOP")
            .range(0, 1e6)
            .def(0.0)
            .desc(fmt::format("Per FLOP of a GEMM with {} inputs.", dtype_name(t))));
  }
  add(number("system.energy.static_W_per_pe", "W")
          .range(0, 1e6)
          .def(0.0)
          .desc("Static (leakage and idle) power of every PE of the system, over the whole run, "
                "busy or not; a cube's shared parts folded in."));
}

std::vector<SpecField> build_schema() {
  std::vector<SpecField> s;
  add_document_and_sips(s);
  add_cube(s);
  add_hbm(s);
  add_cache(s);
  add_pe(s);
  add_links(s);
  add_dispatch_and_messages(s);
  add_host(s);
  add_memory(s);
  add_energy(s);
  return s;
}

}  // namespace

const std::vector<SpecField>& spec_schema() {
  static const std::vector<SpecField> schema = build_schema();
  return schema;
}

const SpecField* find_field(std::string_view dotted_path) {
  static const std::map<std::string, const SpecField*, std::less<>> index = [] {
    std::map<std::string, const SpecField*, std::less<>> m;
    for (const SpecField& f : spec_schema()) m.emplace(f.path, &f);
    return m;
  }();
  const auto it = index.find(dotted_path);
  return it == index.end() ? nullptr : it->second;
}

const std::vector<const SpecField*>& child_fields(std::string_view parent_path) {
  static const std::map<std::string, std::vector<const SpecField*>, std::less<>> children = [] {
    std::map<std::string, std::vector<const SpecField*>, std::less<>> m;
    for (const SpecField& f : spec_schema()) m[std::string(f.parent_path())].push_back(&f);
    return m;
  }();
  static const std::vector<const SpecField*> none;
  const auto it = children.find(parent_path);
  return it == children.end() ? none : it->second;
}

const std::vector<std::string>& cross_field_rules() {
  static const std::vector<std::string> rules = {
      "`system.cube.pes` equals `noc.mesh` x * y: one PE sits on each mesh node.",
      "Every node in `noc.hbm_nodes`, `noc.ucie_nodes`, `noc.inter_sip_node` and "
      "`host.io_die.nodes` lies inside "
      "the mesh; a node list names each node once.",
      "`ucie.mesh` is given when `ucie.topology` is `mesh` or `torus`, and its x * y equals "
      "`sips.cubes_per_sip`; likewise `sips.grid` for `inter_sip.topology` and `sips.count`. A "
      "grid given with another topology is refused, unless the topology was set after it (an "
      "extending file or an override of a grid spec's topology, a sweep over topologies): then "
      "it is ignored.",
      "`inter_sip.port_cube` < `sips.cubes_per_sip`, and so is every cube of "
      "`host.io_die.cubes`.",
      "`ucie.connections` <= the number of `noc.ucie_nodes`, and `inter_sip.connections` <= the "
      "number of `noc.inter_sip_node`: each connection of a side has a node of its own.",
      "`hbm.bandwidth_GBps` / `hbm.channels` is at least 1 B/s per channel.",
      "A bounded buffer (`noc.router`, `ucie`, `inter_sip`: `input_buffer_bytes` > 0) gives each "
      "virtual channel at least `noc.packet_bytes` (`input_buffer_bytes` / `virtual_channels`).",
      "A bounded buffer has a virtual channel for each class of packet that can reach it "
      "(docs/hardware-model.md, deadlock freedom): with unbounded inter-SIP buffers, router "
      "buffers need the classes of the routes between cubes (ring 3, torus 4, mesh and "
      "all-to-all 2; one when the UCIe buffers are unbounded too) and UCIe buffers those that "
      "cross one link; with bounded inter-SIP buffers both need twice that, and inter-SIP "
      "buffers the classes of the routes between SIPs plus one.",
      "`hbm.capacity_GiB` is a whole multiple of `hbm.channel_interleave_bytes`, of "
      "`memory.interleave_KiB` and of `memory.page_KiB`.",
      fmt::format("Total PEs (`sips.count` * `cubes_per_sip` * `pes`) <= {}.", kMaxTotalPes),
      fmt::format("Total cubes (`sips.count` * `cubes_per_sip`) <= {}.", kMaxTotalCubes),
      fmt::format("UCIe links in the system, and inter-SIP links, <= {} each (all-to-all "
                  "grows as n^2).",
                  kMaxLinksPerClass),
      "Total HBM (`capacity_GiB` * total cubes) < 2^60 bytes, so every address fits the flat "
      "64-bit space with room to spare.",
      "Every time converts to whole picoseconds, every rate to a whole, non-zero number of "
      "B/s or Hz (emu/time.hpp).",
  };
  return rules;
}

}  // namespace cubesim::components::spec
