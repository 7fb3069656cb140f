#include "components/network/link_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "components/network/topology.hpp"

namespace cubesim::components {

LinkTrace parse_link_trace(const std::string& name) {
  if (name == "none") return LinkTrace::none;
  if (name == "busy") return LinkTrace::busy;
  if (name == "all") return LinkTrace::all;
  throw std::invalid_argument("unknown link trace mode '" + name +
                              "': use 'none', 'busy' (busy periods, the default) or 'all' (every "
                              "uninterrupted busy interval)");
}

void LinkTracer::start(emu::TraceWriter* trace, LinkTrace mode, emu::Tick busy_gap) {
  trace_ = mode == LinkTrace::none ? nullptr : trace;
  mode_ = mode;
  gap_ = mode == LinkTrace::busy ? busy_gap : 0;
  slices_.assign(trace_ ? topology_.links().size() : 0, Slice{});
}

emu::TraceWriter::Track LinkTracer::track(LinkId id) {
  Slice& s = slices_[id];
  if (!s.has_track) {
    s.track = trace_->track("links", topology_.link_name(id));
    s.has_track = true;
  }
  return s.track;
}

void LinkTracer::write(LinkId id) {
  const Slice& s = slices_[id];
  if (!trace_->wants(s.start, s.end)) return;
  const emu::Tick duration = s.end - s.start;
  const std::string args =
      mode_ == LinkTrace::busy
          ? fmt::format(R"({{"bytes":{},"busy_ps":{},"utilisation":{:.4f}}})", s.bytes, s.busy,
                        static_cast<double>(s.busy) / static_cast<double>(duration))
          : fmt::format(R"({{"bytes":{}}})", s.bytes);
  trace_->complete_json_args(track(id), "busy", s.start, duration, "link", args);
}

void LinkTracer::busy(LinkId id, emu::Tick start, emu::Tick end, std::uint64_t bytes, Transfer& t) {
  if (trace_->full()) return;
  Slice& s = slices_[id];
  if (s.end > s.start && start <= s.end + gap_) {
    s.end = std::max(s.end, end);
  } else {
    if (s.end > s.start) write(id);
    s.start = start;
    s.end = end;
    s.busy = 0;
    s.bytes = 0;
  }
  s.busy += end - start;
  s.bytes += bytes;
  // The step sits inside this reservation, so inside the slice that will hold it, and after the
  // flow's start (the transfer's issue).
  if (t.trace_flow == 0 || end <= start) return;
  const emu::Tick step_at = start + (end - start) / 2;
  if (trace_->wants(step_at, step_at) &&
      std::find(t.traced_links.begin(), t.traced_links.end(), id) == t.traced_links.end()) {
    t.traced_links.push_back(id);
    trace_->flow_step(track(id), t.trace_flow, step_at);
  }
}

void LinkTracer::flush() {
  if (!trace_) return;
  for (LinkId id = 0; id < slices_.size(); ++id) {
    Slice& s = slices_[id];
    if (s.end <= s.start) continue;
    write(id);
    s.start = s.end = 0;
  }
}

}  // namespace cubesim::components
