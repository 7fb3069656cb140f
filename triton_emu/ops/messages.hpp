#pragma once
// tl.send, tl.recv and tl.recv_async (DESIGN.md "Communication"): a message goes into the next
// slot of the channel from sender to receiver (ops/channels.hpp keeps the channels, slots and
// credits); send blocks only while every slot is full, a receive until its message has
// arrived and been read out of its slot.

#include <memory>

#include "triton_emu/api/vocabulary.hpp"
#include "triton_emu/ops/program.hpp"

namespace cubesim::detail {
struct Receipt;
}

namespace cubesim::ops {

void send(detail::Program& program, const tl::Peer& dst, const tl::Tile& tile);
// The receive posted (its tile's SRAM taken now), for its handle.
std::shared_ptr<detail::Receipt> recv_async(detail::Program& program, const tl::Peer& src,
                                            tl::Shape shape, DType dtype);
// Blocks until the message of `receipt` (a RecvHandle's; nullptr: a fault) has been read into its
// tile; the time waited is traced as `what` ("recv", "recv_async wait").
tl::Tile wait_recv(detail::Program& program, detail::Receipt* receipt, const char* what);

}  // namespace cubesim::ops
