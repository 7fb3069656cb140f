#!/usr/bin/env python3
"""The time one kernel launch costs on the GPU itself (specs/h200.json's system.dispatch.launch_ns,
docs/data/gpu-gemm-h200/): 2000 launches of a kernel that does almost nothing (an add to one
element), replayed from a CUDA graph so that the host's cost per call is not in it, timed with CUDA
events; the time per launch is what a launch costs back to back, its start-up and its drain. The
same issued eagerly from Python, for comparison (the host's cost per call).

    python3 tools/gpu/launch_gap.py > launch_gap.csv
"""

import statistics

import torch

REPS, SAMPLES = 2000, 20


def per_launch(run):
    times = []
    for _ in range(SAMPLES):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / REPS)
    return statistics.median(times), min(times), max(times)


def main():
    x = torch.zeros(1, device="cuda")
    eager = lambda: [x.add_(1) for _ in range(REPS)]  # noqa: E731
    eager()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        with torch.cuda.graph(g, stream=stream):
            eager()
    torch.cuda.current_stream().wait_stream(stream)
    g.replay()
    torch.cuda.synchronize()
    print("how,median_s,min_s,max_s")
    for how, run in (("graph", g.replay), ("eager", eager)):
        med, lo, hi = per_launch(run)
        print(f"{how},{med:.4e},{lo:.4e},{hi:.4e}")


if __name__ == "__main__":
    main()
