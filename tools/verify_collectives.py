#!/usr/bin/env python3
"""Runs every collective with every algorithm it has at a size per PE, functionally (the data
moved and checked against an fp64 host reference), and writes one CSV row per run: whether it
verified, its error, its simulated time, bus bandwidth and the alpha-beta model's time, the SRAM
its busiest PE held at the peak (the untimed copy of what is never written, before the clock, in
runs of up to half the free SRAM, included), and the host's wall time and peak memory. The all-to-alls put their
message slots in HBM (--set system.messages.memory=hbm): a program receives on a channel from
every other, whose slots do not fit a PE's SRAM on systems of many PEs. The direct all-to-all
sends to every program in each row, and mesh2d's first level sends a quarter of the vector in
each step, so their rows are of 1 KiB (-p chunk_bytes=1024) to fit the SRAM.

    python3 tools/verify_collectives.py --spec specs/default.json --bytes 67108864 \\
        --out docs/data/collectives-verified-64MiB.csv
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

ALGORITHMS = {
    "allreduce": ["ring", "bidir_ring", "hierarchical", "mesh2d", "tree", "dtree"],
    "reduce_scatter": ["ring", "bidir_ring", "hierarchical", "mesh2d"],
    "allgather": ["ring", "bidir_ring", "hierarchical", "mesh2d"],
    "broadcast": ["ring", "tree"],
    "alltoall": ["pairwise", "direct"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default="specs/default.json")
    ap.add_argument("--bytes", type=int, default=64 << 20, help="bytes_per_pe")
    ap.add_argument("--buffer", default="hbm")
    ap.add_argument("--binary", default="build/release/bin/cubesim")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    fields = ["kernel", "algorithm", "bytes_per_pe", "buffer", "verified", "max_rel_error",
              "tolerance", "collective_time_us", "busbw_GBps", "model_time_us", "rows",
              "chunk_bytes", "sram_peak_bytes", "wall_s", "host_max_rss_MiB"]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        total = sum(len(v) for v in ALGORITHMS.values())
        done = 0
        for kernel, algorithms in ALGORITHMS.items():
            for algorithm in algorithms:
                done += 1
                with tempfile.TemporaryDirectory() as tmp:
                    report = os.path.join(tmp, "r.json")
                    extra = ["--set", "system.messages.memory=hbm"] if kernel == "alltoall" else []
                    if algorithm in ("direct", "mesh2d"):
                        extra += ["-p", "chunk_bytes=1024"]
                    start = time.time()
                    err = os.path.join(tmp, "stderr")
                    with open(err, "w") as e, open(os.devnull, "w") as out:
                        child = subprocess.Popen(
                            [a.binary, "run", a.spec, kernel, "-p", f"algorithm={algorithm}",
                             "-p", f"bytes_per_pe={a.bytes}", "-p", f"buffer={a.buffer}",
                             "--json", report] + extra, stdout=out, stderr=e)
                        _, status, usage = os.wait4(child.pid, 0)
                    wall = time.time() - start
                    rss = usage.ru_maxrss  # KiB: this run's own peak
                    r = subprocess.CompletedProcess(child.args, os.waitstatus_to_exitcode(status),
                                                    "", open(err).read())
                    if r.returncode != 0 or not os.path.exists(report):
                        print(f"[{done}/{total}] {kernel} {algorithm}: exit {r.returncode}: "
                              f"{r.stderr.strip()[-300:]}", file=sys.stderr, flush=True)
                        w.writerow({"kernel": kernel, "algorithm": algorithm, "bytes_per_pe": a.bytes,
                                    "buffer": a.buffer, "verified": f"exit {r.returncode}"})
                        f.flush()
                        continue
                    d = json.load(open(report))
                det = d["details"]
                row = {"kernel": kernel, "algorithm": algorithm, "bytes_per_pe": a.bytes,
                       "buffer": a.buffer, "verified": d["verified"],
                       "max_rel_error": f"{d['max_rel_error']:.3g}", "tolerance": f"{d['tolerance']:.3g}",
                       "collective_time_us": f"{det['collective_time_ps'] / 1e6:.3f}",
                       "busbw_GBps": f"{det['busbw_GBps']:.1f}",
                       "model_time_us": f"{det['model_time_ps'] / 1e6:.3f}",
                       "rows": det["rows"], "chunk_bytes": det["chunk_bytes"],
                       "sram_peak_bytes": max(p["sram_peak_bytes"] for p in d["stats"]["pes"]),
                       "wall_s": f"{wall:.1f}",
                       "host_max_rss_MiB": f"{rss / 1024:.0f}"}
                w.writerow(row)
                f.flush()
                print(f"[{done}/{total}] {kernel} {algorithm}: verified={row['verified']} "
                      f"busbw={row['busbw_GBps']} GB/s wall={row['wall_s']} s", flush=True)


if __name__ == "__main__":
    main()
