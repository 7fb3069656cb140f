#!/usr/bin/env python3
"""The SM clock an H100/H200 holds under a long tensor-core load (docs/data/gpu-gemm-h200/):
700 back-to-back f16 GEMMs of 16384^3 (~10 s) while nvidia-smi is polled every 0.2 s for the
SM clock (MHz), memory clock (MHz), power draw (W) and temperature (C). The board's power limit,
not its boost clock, sets the tensor-core peak a spec of it should take.

    python3 tools/gpu/sustained_clock.py > clocks.txt
"""

import subprocess
import threading
import time

import torch

N, OPS = 16384, 700
QUERY = "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu"


def main():
    x = torch.randn(N, N, device="cuda", dtype=torch.float16)
    w = torch.randn_like(x)
    o = torch.empty_like(x)
    samples, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            r = subprocess.run(["nvidia-smi", QUERY, "--format=csv,noheader,nounits"],
                               capture_output=True, text=True)
            samples.append(r.stdout.strip())
            time.sleep(0.2)

    t = threading.Thread(target=poll)
    t.start()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        torch.matmul(x, w, out=o)
    torch.cuda.synchronize()
    start.record()
    for _ in range(OPS):
        torch.matmul(x, w, out=o)
    end.record()
    end.synchronize()
    stop.set()
    t.join()
    per_op = start.elapsed_time(end) / OPS * 1e-3
    print("per op us", per_op * 1e6, "TFLOPs", 2 * N**3 / per_op / 1e12)
    for line in samples:
        print(line)


if __name__ == "__main__":
    main()
