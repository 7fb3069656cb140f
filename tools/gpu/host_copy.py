#!/usr/bin/env python3
"""Host <-> device copy times on one GPU (specs/h200.json's system.host, docs/validation.md "Host
link"): cudaMemcpy of pinned host memory to the GPU's HBM and back, 4 KiB to 1 GiB, timed with
CUDA events around REPS copies issued back to back on one stream (the host's cost per call
overlaps the copies before it), the median of SAMPLES such timings; and one copy alone, event
to event, for the latency a single transfer sees.

    python3 tools/gpu/host_copy.py > host_copy.csv
"""

import statistics

import torch

SAMPLES = 20


def timed(run, reps):
    times = []
    for _ in range(SAMPLES):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / reps)
    return statistics.median(times), min(times), max(times)


def main():
    print("direction,bytes,how,median_s,min_s,max_s")
    for shift in range(12, 31, 2):
        n = 1 << shift
        host = torch.empty(n, dtype=torch.uint8).pin_memory()
        host.random_(0, 255)
        dev = torch.empty(n, dtype=torch.uint8, device="cuda")
        for direction, run in (
            ("to_device", lambda: dev.copy_(host, non_blocking=True)),
            ("to_host", lambda: host.copy_(dev, non_blocking=True)),
        ):
            run()
            torch.cuda.synchronize()
            reps = max(2, min(200, (64 << 20) // n))
            for how, r in (("back_to_back", reps), ("alone", 1)):
                med, lo, hi = timed(run, r)
                print(f"{direction},{n},{how},{med:.4e},{lo:.4e},{hi:.4e}", flush=True)
        del host, dev


if __name__ == "__main__":
    main()
