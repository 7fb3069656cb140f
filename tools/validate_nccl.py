#!/usr/bin/env python3
"""cubesim's collectives against NCCL's on 4 H200 GPUs joined by NVSwitch (issue 37, item 5).

For every collective and size of docs/data/nccl-h200x4/graph.csv (NCCL 2.28 through
torch.distributed, replayed from a CUDA graph so that no host launch cost is in the time) from
1 MiB up, runs the same collective on specs/h200x4-nvlink.json with the algorithm and channel
count NCCL chose (nccl_choices.txt: a ring over all 24 channels from 1 MiB up; all_to_all goes
through NCCL's point-to-point path, every peer at once; cubesim's `direct` does that but does not fit
the shared memory beyond 1 MiB, so `pairwise`, a peer per step):
the four GPUs are the ranks (`-p ranks=sips`), each of the 24 channels one SM (PE) of every GPU
with its 1/24 of the buffer (rounded down to what shards), data in HBM (`buffer=hbm`). Writes
predicted against measured bus bandwidth per size.

    python3 tools/validate_nccl.py [--binary build/release/bin/cubesim] \\
        [--out docs/data/nccl-h200x4/cubesim-vs-nccl.csv] [--plot docs/img/validation-nccl.png]
"""

import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "data", "nccl-h200x4")
RANKS = 4
CHANNELS = 24  # NCCL's channels from 1 MiB up (nccl_choices.txt)
# NCCL's name -> cubesim's kernel, algorithm, and what a channel's bytes must be a multiple of.
KERNELS = {
    "all_reduce": ("allreduce", "ring", 4 * RANKS),
    "all_gather": ("allgather", "ring", 4 * RANKS),
    "reduce_scatter": ("reduce_scatter", "ring", 4 * RANKS),
    "broadcast": ("broadcast", "ring", 4),
    "all_to_all": ("alltoall", "pairwise", 4 * RANKS),
}


def arguments(collective, nccl_bytes):
    """cubesim's `run` arguments (after the binary and `run`) for NCCL's `collective` of
    `nccl_bytes` per GPU: each channel's share, rounded down to what shards."""
    kernel, algorithm, multiple = KERNELS[collective]
    per_pe = nccl_bytes // CHANNELS // multiple * multiple
    return ["specs/h200x4-nvlink.json", kernel, "-p", f"algorithm={algorithm}", "-p", "ranks=sips",
            "-p", f"channels={CHANNELS}", "-p", f"bytes_per_pe={per_pe}", "-p", "buffer=hbm",
            "--timing-only"]


def run(binary, collective, nccl_bytes):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        args = arguments(collective, nccl_bytes)
        cmd = [binary, "run", os.path.join(ROOT, args[0])] + args[1:] + ["--json", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)}\nexit {p.returncode}: {p.stderr.strip()}")
        with open(out) as f:
            d = json.load(f)["details"]
    return {"cubesim_bytes_per_rank": d["bytes_per_rank"],
            "predicted_time_us": d["collective_time_ps"] / 1e6,
            "predicted_busbw_GBps": d["busbw_GBps"],
            "model_time_us": d["model_time_ps"] / 1e6,
            "command": " ".join(["cubesim", "run"] + args)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "release", "bin", "cubesim"))
    ap.add_argument("--out", default=os.path.join(DATA, "cubesim-vs-nccl.csv"))
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "validation-nccl.png"))
    ap.add_argument("--min-bytes", type=int, default=1 << 20)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    with open(os.path.join(DATA, "graph.csv")) as f:
        measured = [r for r in csv.DictReader(f)
                    if r["collective"] in KERNELS and int(r["bytes"]) >= args.min_bytes]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(lambda r: run(args.binary, r["collective"], int(r["bytes"])),
                             measured))
    rows = []
    for m, c in zip(measured, runs):
        busbw = float(m["busbw_GBps"])
        rows.append({"collective": m["collective"], "nccl_bytes": int(m["bytes"]),
                     "cubesim_bytes_per_rank": c["cubesim_bytes_per_rank"],
                     "algorithm": KERNELS[m["collective"]][1], "channels": CHANNELS,
                     "measured_time_us": float(m["time_us"]),
                     "measured_busbw_GBps": busbw,
                     "predicted_time_us": round(c["predicted_time_us"], 3),
                     "predicted_busbw_GBps": round(c["predicted_busbw_GBps"], 3),
                     "predicted_over_measured": round(c["predicted_busbw_GBps"] / busbw, 4),
                     "model_time_us": round(c["model_time_us"], 3),
                     "command": c["command"]})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'collective':<15}{'bytes':>12}{'measured':>10}{'predicted':>11}{'ratio':>8}")
    for r in rows:
        print(f"{r['collective']:<15}{r['nccl_bytes']:>12}{r['measured_busbw_GBps']:>10.1f}"
              f"{r['predicted_busbw_GBps']:>11.1f}{r['predicted_over_measured']:>8.3f}")
    if args.plot:
        plot(rows, args.plot)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(KERNELS), figsize=(16, 3.8), sharey=True)
    for ax, name in zip(axes, KERNELS):
        rs = [r for r in rows if r["collective"] == name]
        x = [r["nccl_bytes"] / 2**20 for r in rs]
        ax.plot(x, [r["measured_busbw_GBps"] for r in rs], "o-", label="NCCL, measured")
        ax.plot(x, [r["predicted_busbw_GBps"] for r in rs], "s--", label="cubesim")
        ax.set_xscale("log", base=2)
        ax.set_title(name)
        ax.set_xlabel("bytes per GPU (MiB)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("bus bandwidth (GB/s)")
    axes[0].legend()
    fig.suptitle("4 x H200 on NVSwitch: NCCL (CUDA graph) against cubesim on "
                 "specs/h200x4-nvlink.json, ring over 24 channels")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
