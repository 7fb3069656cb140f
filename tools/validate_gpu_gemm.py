#!/usr/bin/env python3
"""cubesim's prediction of an H200's GEMMs against cuBLAS (issue 38 item 9, docs/validation.md).

For every GEMM of docs/data/gpu-gemm-h200/nk_graph_run*.csv (torch.matmul(x, w.t()) with w N x K,
f16 and bf16, replayed from CUDA graphs; the mean of the runs' medians of 20), runs cubesim's `matmul` kernel on specs/h200.json
with the same shape, dtype and layout (b_layout=nk), timing-only on the flow network, and takes
the fastest of a few tile shapes, as Triton's autotuner takes the fastest config it measured.
Writes predicted against measured per shape, and the geometric-mean error (exp of the mean
|log(predicted / measured)|, minus one) over the shapes measured above 0.1 ms and over all.

    python3 tools/validate_gpu_gemm.py [--binary build/release/bin/cubesim] \\
        [--out docs/data/gpu-gemm-h200/cubesim-vs-cublas.csv] [--plot docs/img/validation-gemm.png]
"""

import argparse
import concurrent.futures
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "data", "gpu-gemm-h200")
RUNS = ("nk_graph_run1.csv", "nk_graph_run2.csv")
# (block_m, block_n) the autotuner tries, as Triton's matmul tutorial lists its configs for
# Hopper: a large tile for large problems, smaller ones that give a small or skinny problem more
# programs than SMs, or fewer waves.
TILES = ((128, 256), (256, 128), (128, 128), (64, 256), (128, 64), (64, 128), (64, 64))
# Problems of this many 128 x 256 tiles or more take only the two largest tiles: smaller ones
# would read more of A and B through the cache for no fewer waves (Triton's prune_configs_by).
LARGE = 4 * 132

def measured():
    """{(group, dtype, M, K, N): mean of the runs' median seconds}, in the first run's order."""
    rows = {}
    for name in RUNS:
        with open(os.path.join(DATA, name)) as f:
            for r in csv.DictReader(f):
                if r["kind"] != "gemm":
                    continue
                key = (r["group"], r["dtype"], int(r["M"]), int(r["K"]), int(r["N"]))
                rows.setdefault(key, []).append(float(r["median_s"]))
    return {k: sum(v) / len(v) for k, v in rows.items()}


def command(dtype, m, k, n, tile):
    """The `cubesim run` command (as the docs write it) predicting one GEMM with one tile."""
    return (f"cubesim run specs/h200.json matmul -p M={m} -p K={k} -p N={n} -p dtype={dtype} "
            f"-p b_layout=nk -p block_m={tile[0]} -p block_n={tile[1]} --timing-only "
            "--network flow")


def outcome(report):
    """(seconds, waves, cache hit rate) of a run's --json report."""
    return (report["sim_time_ps"] * 1e-12, report["launch"]["waves"],
            report["stats"]["cache"]["hit_rate"])


def predict(binary, dtype, m, k, n, tile):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        args = command(dtype, m, k, n, tile).split()[2:]
        cmd = [binary, "run", os.path.join(ROOT, args[0])] + args[1:] + ["--json", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)}\nexit {p.returncode}: {p.stderr.strip()}")
        with open(out) as f:
            return outcome(json.load(f))


def tiles_for(m, n):
    tiles = -(-m // 128) * -(-n // 256)
    return TILES[:2] if tiles >= LARGE else TILES


def geomean_error(rows):
    if not rows:
        return float("nan")
    return math.exp(sum(abs(math.log(r["predicted_s"] / r["measured_s"])) for r in rows)
                    / len(rows)) - 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "release", "bin", "cubesim"))
    p.add_argument("--out", default=os.path.join(DATA, "cubesim-vs-cublas.csv"))
    p.add_argument("--plot", default=None)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()

    meas = measured()
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for key in meas:
            _, dtype, m, k, n = key
            for tile in tiles_for(m, n):
                jobs[(key, tile)] = pool.submit(predict, a.binary, dtype, m, k, n, tile)
        done = 0
        for f in concurrent.futures.as_completed(jobs.values()):
            f.result()
            done += 1
            print(f"\r{done}/{len(jobs)} runs", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    rows = []
    for key, seconds in meas.items():
        group, dtype, m, k, n = key
        best = min(tiles_for(m, n), key=lambda t: jobs[(key, t)].result()[0])
        pred, waves, hit = jobs[(key, best)].result()
        rows.append({"group": group, "dtype": dtype, "M": m, "K": k, "N": n,
                     "measured_s": seconds, "predicted_s": pred,
                     "error": pred / seconds - 1, "tile": f"{best[0]}x{best[1]}",
                     "waves": waves, "cache_hit_rate": round(hit, 4)})
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "measured_s": f"{r['measured_s']:.6e}",
                        "predicted_s": f"{r['predicted_s']:.6e}", "error": f"{r['error']:.4f}"})
    long = [r for r in rows if r["measured_s"] > 1e-4]
    print(f"geomean error: {100 * geomean_error(long):.1f} % over {len(long)} shapes above 0.1 ms, "
          f"{100 * geomean_error(rows):.1f} % over all {len(rows)}")
    if a.plot:
        plot(rows, a.plot)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    for group, marker in (("square", "o"), ("skinny", "s"), ("wave", "^")):
        for dtype, colour in (("f16", "tab:blue"), ("bf16", "tab:orange")):
            pts = [r for r in rows if r["group"] == group and r["dtype"] == dtype]
            ax1.scatter([r["measured_s"] * 1e6 for r in pts], [r["predicted_s"] * 1e6 for r in pts],
                        marker=marker, color=colour, label=f"{group} {dtype}", s=22)
    lo, hi = 1, 2e4
    ax1.plot([lo, hi], [lo, hi], color="grey", lw=0.8)
    ax1.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="grey", alpha=0.15)
    ax1.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
            xlabel="cuBLAS on an H200 (us)", ylabel="cubesim, specs/h200.json (us)",
            title="GEMMs: predicted against measured (band: +-10 %)")
    ax1.legend(fontsize=7)
    for dtype, colour in (("f16", "tab:blue"), ("bf16", "tab:orange")):
        pts = sorted((r for r in rows if r["group"] == "wave" and r["dtype"] == dtype),
                     key=lambda r: r["N"])
        ax2.plot([r["N"] for r in pts], [r["measured_s"] * 1e6 for r in pts], "o-", color=colour,
                 label=f"cuBLAS {dtype}", ms=3)
        ax2.plot([r["N"] for r in pts], [r["predicted_s"] * 1e6 for r in pts], "x--",
                 color=colour, label=f"cubesim {dtype}", ms=4)
    ax2.set(xlabel="N (M = 1536, K = 4096)", ylabel="time (us)",
            title="Waves: 12 x 8 to 12 x 24 tiles of 128 (cubesim: f16 = bf16)")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
