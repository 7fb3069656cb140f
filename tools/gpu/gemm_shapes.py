#!/usr/bin/env python3
"""Measures cuBLAS GEMMs (through torch.matmul) and a bandwidth-bound copy on one GPU, for
checking cubesim's prediction of a GPU modelled as a spec (issue 38 item 9, docs/validation.md):

    python3 tools/gpu/gemm_shapes.py --out gemm.csv

Shapes: square, skinny (one dimension 16-256) and a wave sweep (N stepping over the number of
128 x 128 tiles one wave of the SMs holds, where a tiled kernel's time should step). For each
shape and dtype (f16, bf16): a few warm-up products, then `samples` timings of `reps` products
back to back between two CUDA events (the host's launch cost is high there, so one product per
pair of events would time the launch path), and the median time per product over the samples.
C = A @ B with A M x K row-major and B stored K x N row-major (--b-layout kn, torch.matmul(x, w))
or N x K row-major (nk: torch.nn.Linear's weight, x @ w.t()), the two layouts of cubesim's
matmul kernel.

The copy: y.copy_(x) of `bytes` (read once and written once), timed the same way; the row's
GB/s counts the bytes read plus the bytes written.
"""

import argparse
import csv
import statistics

import torch


def square():
    return [(n, n, n) for n in (512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384)]


def skinny():
    rows = []
    for m in (16, 32, 64, 128, 256):
        rows.append((m, 8192, 8192))  # a small batch through a big layer
    for k in (64, 128, 256):
        rows.append((8192, k, 8192))  # attention's q.k^T per head: tiny K
    for n in (16, 64, 256):
        rows.append((8192, 8192, n))  # sharded_gemm's N = 16 slices
    return rows


def waves(sms):
    # 12 rows of 128-row tiles; N from 8 to 24 column tiles: 96-288 tiles, the wave edge at
    # sms / 12 column tiles.
    return [(12 * 128, 4096, 128 * n) for n in range(8, 25)]


def time_op(op, reps, samples, warmup=3, graph=False):
    """Median, min and max seconds per op over `samples` timings of `reps` ops back to back
    (graph: the reps captured once into a CUDA graph and replayed, so the host's cost per call,
    some 10 us through torch, is not in the time; the GPU's own gaps between kernels are)."""
    for _ in range(warmup):
        op()
    torch.cuda.synchronize()
    run = lambda: [op() for _ in range(reps)]  # noqa: E731
    if graph:
        g = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            with torch.cuda.graph(g, stream=stream):
                run()
        torch.cuda.current_stream().wait_stream(stream)
        run = g.replay
        run()  # the first replay uploads the graph
        torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / reps)  # s per op
    return statistics.median(times), min(times), max(times)


def reps_for(seconds_guess):
    """Enough products back to back to fill ~2 ms between the events (at least 5)."""
    return max(5, min(2000, int(2e-3 / max(seconds_guess, 1e-7))))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--b-layout", choices=("kn", "nk"), default="kn")
    p.add_argument("--graph", action="store_true",
                   help="replay each timing's products from a CUDA graph (no host cost per call)")
    a = p.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    g = torch.Generator(device="cuda").manual_seed(1)
    rows = []
    groups = [("square", square()), ("skinny", skinny()), ("wave", waves(sms))]
    for dtype_name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for group, shapes in groups:
            for m, k, n in shapes:
                x = torch.randn(m, k, device="cuda", dtype=dtype, generator=g)
                shape = (k, n) if a.b_layout == "kn" else (n, k)
                w = torch.randn(*shape, device="cuda", dtype=dtype, generator=g)
                wb = w if a.b_layout == "kn" else w.t()  # a K x N view either way
                out = torch.empty(m, n, device="cuda", dtype=dtype)
                op = lambda: torch.matmul(x, wb, out=out)  # noqa: E731
                guess, _, _ = time_op(op, 3, 1)
                med, lo, hi = time_op(op, reps_for(guess), a.samples, graph=a.graph)
                rows.append(dict(kind="gemm", graph=a.graph, group=group, dtype=dtype_name,
                                 b_layout=a.b_layout, M=m, K=k, N=n,
                                 bytes=0, median_s=med, min_s=lo, max_s=hi,
                                 tflops=2 * m * n * k / med / 1e12, GBps=0))
                print(f"{dtype_name} {group} {m}x{k}x{n}: {med * 1e6:.1f} us "
                      f"{rows[-1]['tflops']:.0f} TFLOP/s", flush=True)
                del x, w, wb, out
    for nbytes in (1 << 24, 1 << 26, 1 << 28, 1 << 30, 1 << 32):
        x = torch.ones(nbytes // 4, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        op = lambda: y.copy_(x)  # noqa: E731
        guess, _, _ = time_op(op, 3, 1)
        med, lo, hi = time_op(op, reps_for(guess), a.samples)
        rows.append(dict(kind="copy", graph=False, group="copy", dtype="f32", b_layout="",
                         M=0, K=0, N=0, bytes=nbytes,
                         median_s=med, min_s=lo, max_s=hi, tflops=0,
                         GBps=2 * nbytes / med / 1e9))
        print(f"copy {nbytes >> 20} MiB: {rows[-1]['GBps']:.0f} GB/s", flush=True)
        del x, y
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"{props.name}, {sms} SMs, torch {torch.__version__}", flush=True)


if __name__ == "__main__":
    main()
