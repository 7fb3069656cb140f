#include "triton_emu/ops/messages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "emu/log.hpp"
#include "triton_emu/ops/channels.hpp"
#include "triton_emu/ops/launch_state.hpp"
#include "triton_emu/tile/tile_access.hpp"

namespace cubesim::ops {

using detail::LaunchState;
using detail::Messages;
using detail::PeState;
using detail::Program;
using detail::Receipt;
using tl::Peer;
using tl::Shape;
using tl::Tile;
using tl::TileAccess;

void send(Program& program, const Peer& dst, const Tile& tile) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  program.sync();
  if (launch.waves > 1)
    program.require_one_wave("send(" + dst.str() + ")");  // names built only then
  if (!tile.valid()) program.fault("send(" + dst.str() + ") on " + pe.name + ": the tile is empty");
  if (!program.owns(tile))
    program.fault("send(" + dst.str() + ") on " + pe.name +
                  ": the tile belongs to another program");
  Messages& m = *launch.messages;
  const std::uint32_t to = m.resolve(program, program.index(), dst, "send");
  if (launch.trace_calls)
    emu::log().trace("{}: send {} bytes to {}", pe.name, tile.bytes(), dst.str());
  const emu::Tick t0 = launch.sched.now();
  if (launch.log) launch.log->sent(program.index(), to);
  m.send(program, program.index(), to, tile, launch.tracing(pe) ? &launch : nullptr);
  pe.hw.counters().send_wait_ps += launch.sched.now() - t0;
  // A send takes time on the program's own track only while it waits for a free slot.
  // (its arguments are built only then: most sends never wait).
  if (launch.sched.now() > t0 && launch.tracing(pe))
    launch.trace_slice(pe, false, "send (waiting for a slot)", t0, launch.sched.now(),
                       fmt::format(R"({{"to":"{}","bytes":{}}})", m.pe_name(to), tile.bytes()));
  ++pe.hw.counters().messages_sent;
  pe.hw.counters().bytes_sent += tile.bytes();
}

std::shared_ptr<Receipt> recv_async(Program& program, const Peer& src, Shape shape, DType dtype) {
  LaunchState& launch = program.launch();
  program.sync();
  if (launch.waves > 1) program.require_one_wave("recv(" + src.str() + ")");
  Messages& m = *launch.messages;
  const std::uint32_t from = m.resolve(program, program.index(), src, "recv");
  // Its SRAM is taken now, as the DMA writes into it.
  Tile t = program.make_tile(shape, dtype, program.tile_bytes("recv", shape, dtype), true);
  std::shared_ptr<Receipt> receipt = m.recv(program, program.index(), from, std::move(t));
  receipt->owner = program.index();
  if (launch.log) launch.log->recv_posted(program.index(), from);
  return receipt;
}

Tile wait_recv(Program& program, Receipt* receipt, const char* what) {
  LaunchState& launch = program.launch();
  PeState& pe = program.pe();
  program.sync();
  if (receipt == nullptr)
    program.fault("wait on " + pe.name + ": the RecvHandle came from no recv_async");
  Receipt& r = *receipt;
  program.require_this_launch(r.tile, "RecvHandle", "recv_async",
                              "its message was received (or missed) in that launch");
  if (r.owner != program.index())
    program.fault("wait on " + pe.name +
                  ": the RecvHandle belongs to another program's recv_async");
  if (r.taken) return r.tile;  // waited on before: counted and logged then
  const emu::Tick t0 = launch.sched.now();
  if (launch.log) launch.log->recv_done(program.index(), r.from, r.seq);
  launch.messages->wait(program.index(), r);
  if (launch.log) launch.log->returned(program.index());
  pe.hw.counters().recv_wait_ps += launch.sched.now() - t0;
  if (!r.error.empty()) program.fault("recv on " + pe.name + ": " + r.error);
  Tile t = r.tile;
  if (launch.sched.now() > t0 && launch.tracing(pe))
    launch.trace_slice(pe, false, what, t0, launch.sched.now(),
                       fmt::format(R"({{"from":"{}","bytes":{},"channel":"{}","seq":{}}})",
                                   launch.messages->pe_name(r.from), t.bytes(),
                                   launch.messages->channel_name(r.channel), r.seq));
  ++pe.hw.counters().messages_received;
  pe.hw.counters().bytes_received += t.bytes();
  if (std::byte* dst = !r.values.empty() && t.valid() ? TileAccess::raw(t) : nullptr)
    std::memcpy(dst, r.values.data(), std::min<std::size_t>(r.values.size(), t.bytes()));
  r.values.clear();
  r.taken = true;
  return t;
}

}  // namespace cubesim::ops
