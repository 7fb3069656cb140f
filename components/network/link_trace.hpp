#pragma once
// The links' tracks of a Chrome/Perfetto trace: one slice per busy interval of a link, or per
// busy period that idle gaps shorter than a given gap do not end, and the steps of the trace
// flows of the transfers that cross them.

#include <cstdint>
#include <string>
#include <vector>

#include "components/network/link.hpp"
#include "components/network/transfer.hpp"
#include "emu/trace.hpp"

namespace cubesim::components {

class Topology;

// Which link slices a trace gets (docs/cli.md "Output files and traces"). all: one slice per
// uninterrupted busy interval of a link. busy: one slice per busy period, which idle gaps
// shorter than a given gap do not end; its args say how busy the period was. none: no links.
enum class LinkTrace : std::uint8_t { none, busy, all };
// "none", "busy" or "all"; std::invalid_argument naming the valid ones otherwise.
LinkTrace parse_link_trace(const std::string& name);

class LinkTracer {
 public:
  explicit LinkTracer(const Topology& topology) : topology_(topology) {}

  // Slices go to `trace` as `mode` says (nullptr or LinkTrace::none: no tracing).
  void start(emu::TraceWriter* trace, LinkTrace mode, emu::Tick busy_gap);
  bool on() const { return trace_ != nullptr; }
  // Link `id` carries `bytes` of transfer `t` from `start` to `end`.
  void busy(LinkId id, emu::Tick start, emu::Tick end, std::uint64_t bytes, Transfer& t);
  // Writes the slices still open.
  void flush();

 private:
  // A link's slice being built.
  struct Slice {
    emu::Tick start = 0, end = 0, busy = 0;
    std::uint64_t bytes = 0;
    bool has_track = false;
    emu::TraceWriter::Track track{};
  };
  emu::TraceWriter::Track track(LinkId id);
  void write(LinkId id);

  const Topology& topology_;
  emu::TraceWriter* trace_ = nullptr;
  LinkTrace mode_ = LinkTrace::all;
  emu::Tick gap_ = 0;
  std::vector<Slice> slices_;  // per link, while tracing
};

}  // namespace cubesim::components
