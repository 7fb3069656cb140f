#!/usr/bin/env python3
"""cubesim's router against BookSim2's on matched meshes (issue 37, item 3).

For every configuration in docs/data/booksim/booksim_saturation.csv (BookSim2 runs: mesh k x k,
dimension-order routing, input-queued router with separable allocators), runs `cubesim traffic`
on the matched network and writes, per configuration, both saturation throughputs (flits per
node per cycle) and both mean latencies at half of BookSim's saturation load, as absolute
cycles and as queueing delay above each simulator's own zero-load latency (offered 0.02).

The match: a flit is 16 B and a link moves one flit per ns (16 GB/s), so a cycle is 1 ns and
the router clock is 1 GHz; a packet of p flits is `--packet-bytes 16p`; each router input buffer
holds `num_vcs` channels of `vc_buf_size` flits with a 1-cycle credit; BookSim's routing, VC
allocation and switch allocation (1 cycle each) are cubesim's router pipeline (3 cycles), its
crossbar and channel (1 cycle each) cubesim's hop latency (2 ns); input speedup 1; BookSim's
round-robin arbiters are cubesim's `round_robin` allocation, its `age` priority cubesim's `age`.
cubesim's ports carry no latency where BookSim's injection and ejection channels take a cycle
each and the last router's crossbar one more: cubesim's latencies are compared with those 3
cycles added (PORT_CYCLES), a constant that holds no queueing. Bernoulli injection at the same
rate per node and cycle, uniform and transpose alike (both include self-traffic). Saturation is
the stability edge in both: BookSim's, a mean latency past 500 cycles; cubesim's, a source
getting under 95 % of its packets through (`saturated`), searched here to 0.005
flits/node/cycle. `tests/tools/` holds a cheap test of a few 4x4 rows against the same data.

    python3 tools/compare_booksim.py [--binary build/release/bin/cubesim] \\
        [--out docs/data/booksim/cubesim-vs-booksim.csv] [--cycles 4000]
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLIT = 16  # bytes; a link of 16 GB/s moves one per ns
PORT_CYCLES = 3  # BookSim's injection and ejection channels and last crossbar (see above)


ALLOCATION = {"none": "round_robin", "age": "age"}


def bound(k, pattern):
    """The pattern's channel-load bound per node, as a fraction of a link (hardware-model.md)."""
    if pattern == "uniform":
        return min(1.0, k / ((k // 2) * ((k + 1) // 2)))
    if pattern == "transpose":
        return 1.0 / (k - 1)
    raise ValueError(pattern)


def command(binary, row, flits_per_cycle, cycles, out):
    k, vcs, buf, ps = (int(row[c]) for c in ("k", "num_vcs", "vc_buf_size", "packet_size"))
    load = flits_per_cycle / bound(k, row["traffic"])
    return [binary, "traffic", os.path.join(ROOT, "specs", "default.json"),
            "--pattern", row["traffic"], "--load", f"{load:.6f}", "--cycles", str(cycles),
            "--packet-bytes", str(FLIT * ps), "--json", out,
            "--set", "system.sips.count=1", "--set", "system.sips.cubes_per_sip=1",
            "--set", f"system.cube.noc.mesh=[{k},{k}]", "--set", f"system.cube.pes={k * k}",
            "--set", "system.ucie.input_buffer_bytes=0",
            "--set", "system.cube.noc.link_bandwidth_GBps=16",
            "--set", "system.cube.noc.hop_latency_ns=2",
            "--set", "system.cube.noc.router.pipeline_cycles=3",
            "--set", "system.cube.noc.router.clock_GHz=1",
            "--set", "system.cube.noc.router.input_speedup=1",
            "--set", f"system.cube.noc.router.allocation={ALLOCATION[row['priority']]}",
            "--set", "system.cube.noc.router.credit_latency_ns=1",
            "--set", f"system.cube.noc.router.virtual_channels={vcs}",
            "--set", f"system.cube.noc.router.input_buffer_bytes={vcs * buf * FLIT}",
            "--set", "system.pe.dma.max_outstanding_packets=4096"]


def run(binary, row, flits_per_cycle, cycles, tmp):
    out = os.path.join(tmp, "t.json")
    p = subprocess.run(command(binary, row, flits_per_cycle, cycles, out),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_booksim: cubesim failed:\n{p.stdout[-2000:]}")
    with open(out) as f:
        return json.load(f)


def saturation(binary, row, cycles, tmp):
    """The highest rate (flits/node/cycle, to 0.005) at which no source falls behind."""
    k = int(row["k"])
    lo, hi = 0.0, min(1.0, 1.2 * bound(k, row["traffic"]))
    while hi - lo > 0.005:
        mid = (lo + hi) / 2
        if run(binary, row, mid, cycles, tmp)["saturated"]:
            hi = mid
        else:
            lo = mid
    return lo


def half_load_latency(curves, row, rate):
    """BookSim's mean packet latency at `rate`, interpolated on its curve of stable runs."""
    keys = ("k", "traffic", "num_vcs", "vc_buf_size", "packet_size", "priority")
    pts = sorted((float(c["injection_rate"]), float(c["avg_packet_latency"])) for c in curves
                 if all(c[x] == row[x] for x in keys) and c["stable"] == "1")
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= rate <= x1:
            return y0 + (y1 - y0) * (rate - x0) / (x1 - x0) if x1 > x0 else y0
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "release", "bin", "cubesim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "data", "booksim",
                                                  "cubesim-vs-booksim.csv"))
    ap.add_argument("--cycles", type=int, default=4000)
    a = ap.parse_args()
    data = os.path.join(ROOT, "docs", "data", "booksim")
    with open(os.path.join(data, "booksim_saturation.csv")) as f:
        configs = list(csv.DictReader(f))
    with open(os.path.join(data, "booksim_curves.csv")) as f:
        curves = list(csv.DictReader(f))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(configs):
            b_sat = float(r["saturation_accepted_flit_rate"])
            c_sat = saturation(a.binary, r, a.cycles, tmp)
            half = b_sat / 2
            b_zero, b_half = float(r["zero_load_packet_latency"]), half_load_latency(curves, r, half)
            c_zero = run(a.binary, r, 0.02, a.cycles, tmp)["latency_ns_mean"] + PORT_CYCLES
            c_half = run(a.binary, r, half, a.cycles, tmp)["latency_ns_mean"] + PORT_CYCLES
            rows.append({
                "k": r["k"], "traffic": r["traffic"], "num_vcs": r["num_vcs"],
                "vc_buf_size": r["vc_buf_size"], "packet_size": r["packet_size"],
                "priority": r["priority"],
                "booksim_saturation": f"{b_sat:.3f}", "cubesim_saturation": f"{c_sat:.3f}",
                "saturation_ratio": f"{c_sat / b_sat:.2f}",
                "booksim_latency_half": f"{b_half:.2f}", "cubesim_latency_half": f"{c_half:.2f}",
                "latency_ratio": f"{c_half / b_half:.2f}",
                "booksim_queueing_half": f"{b_half - b_zero:.2f}",
                "cubesim_queueing_half": f"{c_half - c_zero:.2f}",
            })
            print(f"[{i + 1}/{len(configs)}] k={r['k']} {r['traffic']} vcs={r['num_vcs']} "
                  f"buf={r['vc_buf_size']} ps={r['packet_size']} {r['priority']}: "
                  f"saturation {c_sat:.3f} vs "
                  f"{b_sat:.3f}, queueing at half load {c_half - c_zero:.2f} vs "
                  f"{b_half - b_zero:.2f} cycles", flush=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for column, target in (("saturation_ratio", 0.10), ("latency_ratio", 0.15)):
        ratios = sorted(float(r[column]) for r in rows)
        missed = sum(abs(x - 1) > target + 1e-9 for x in ratios)
        print(f"{column} cubesim / BookSim: {ratios[0]:.2f} to {ratios[-1]:.2f}, median "
              f"{ratios[len(ratios) // 2]:.2f}; {missed} of {len(rows)} outside +-{target:.0%}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
