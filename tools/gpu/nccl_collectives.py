#!/usr/bin/env python3
"""Measures NCCL's collectives on the GPUs of one host, for validating cubesim's collectives
(issue 37, docs/validation.md). Run with torchrun, one process per GPU:

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \\
      torchrun --nproc_per_node=4 tools/gpu/nccl_collectives.py --out nccl.csv

For each collective and size it runs a few warm-up operations, then `iters` operations back to
back between two CUDA events (--graph: replayed from one CUDA graph), and writes one CSV row per (collective, size) from rank 0 with the
mean time per operation and the bandwidths nccl-tests reports:
  algbw = bytes / time, busbw = algbw * factor, where factor is 2(n-1)/n for all_reduce,
  (n-1)/n for all_gather, reduce_scatter and all_to_all, and 1 for broadcast.
`bytes` is nccl-tests' size: the buffer each rank holds in full (all_reduce, broadcast,
all_to_all), the gathered output (all_gather) or the input to be scattered (reduce_scatter).
The host's per-call cost (tens of microseconds with torch.distributed) dominates below a few MiB:
those rows measure the launch path more than the links.

Also measures point-to-point: rank 0 and rank 1 ping-pong with send/recv (latency, half the
round trip) and a one-way stream (bandwidth), for the link figures of a spec.
"""

import argparse
import csv
import os

import torch
import torch.distributed as dist

FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "all_to_all": lambda n: (n - 1) / n,
}


def make_op(name, nbytes, n, device):
    """A function running one `name` of `nbytes` (nccl-tests' size), buffers made once."""
    elems = nbytes // 4
    if name == "all_reduce":
        x = torch.ones(elems, dtype=torch.float32, device=device)
        return lambda: dist.all_reduce(x)
    if name == "broadcast":
        x = torch.ones(elems, dtype=torch.float32, device=device)
        return lambda: dist.broadcast(x, src=0)
    if name == "all_gather":
        out = torch.empty(elems, dtype=torch.float32, device=device)
        inp = torch.ones(elems // n, dtype=torch.float32, device=device)
        return lambda: dist.all_gather_into_tensor(out, inp)
    if name == "reduce_scatter":
        inp = torch.ones(elems, dtype=torch.float32, device=device)
        out = torch.empty(elems // n, dtype=torch.float32, device=device)
        return lambda: dist.reduce_scatter_tensor(out, inp)
    if name == "all_to_all":
        inp = torch.ones(elems, dtype=torch.float32, device=device)
        out = torch.empty(elems, dtype=torch.float32, device=device)
        return lambda: dist.all_to_all_single(out, inp)
    raise ValueError(name)


def iterations(nbytes):
    return 50 if nbytes <= 16 << 20 else 20 if nbytes <= 256 << 20 else 8


GRAPH = False  # --graph: replay the operations as one CUDA graph (no host cost per call)


def time_op(op, iters):
    for _ in range(3):
        op()
    torch.cuda.synchronize()
    run = lambda: [op() for _ in range(iters)]  # noqa: E731
    if GRAPH:
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            with torch.cuda.graph(graph, stream=stream):
                run()
        torch.cuda.current_stream().wait_stream(stream)
        run = graph.replay
        run()  # once untimed: the first replay uploads the graph
        torch.cuda.synchronize()
    dist.barrier()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters  # seconds per operation


def p2p(rank, device, writer):
    """Rank 0 <-> rank 1: ping-pong latency and one-way bandwidth, by send/recv."""
    for nbytes in [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]:
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        iters = iterations(nbytes)

        def pingpong():
            if rank == 0:
                dist.send(x, 1)
                dist.recv(x, 1)
            elif rank == 1:
                dist.recv(x, 0)
                dist.send(x, 0)

        def oneway():
            if rank == 0:
                dist.send(x, 1)
            elif rank == 1:
                dist.recv(x, 0)

        t_rt = time_op(pingpong, iters)
        t_ow = time_op(oneway, iters)
        if writer:
            writer.writerow(["p2p_pingpong", nbytes, iters, f"{t_rt / 2 * 1e6:.3f}",
                             f"{nbytes / (t_rt / 2) / 1e9:.3f}", ""])
            writer.writerow(["p2p_oneway", nbytes, iters, f"{t_ow * 1e6:.3f}",
                             f"{nbytes / t_ow / 1e9:.3f}", ""])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-bytes", type=int, default=4 << 10)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--graph", action="store_true",
                    help="time the operations replayed from a CUDA graph, without the host's "
                    "per-call cost (the small sizes then measure the GPUs and links)")
    args = ap.parse_args()
    global GRAPH
    GRAPH = args.graph
    dist.init_process_group("nccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    f = open(args.out, "w", newline="") if rank == 0 else None
    writer = csv.writer(f) if f else None
    if writer:
        writer.writerow(["collective", "bytes", "iters", "time_us", "algbw_GBps", "busbw_GBps"])
    for name, factor in FACTORS.items():
        nbytes = args.min_bytes
        while nbytes <= args.max_bytes:
            op = make_op(name, nbytes, n, device)
            t = time_op(op, iterations(nbytes))
            if writer:
                algbw = nbytes / t / 1e9
                writer.writerow([name, nbytes, iterations(nbytes), f"{t * 1e6:.3f}",
                                 f"{algbw:.3f}", f"{algbw * factor(n):.3f}"])
                f.flush()
            del op
            torch.cuda.empty_cache()
            nbytes *= 4
    p2p(rank, device, writer)
    if f:
        f.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
