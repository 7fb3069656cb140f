"""The simulated figures of the docs and the commands they come from (tools/doc_figures.py).

Each figure names its file, its cost and a render function that runs its commands through
`ctx` (ctx.session: a block of program output; ctx.output: stdout and stderr; ctx.report: a
`run --json` report; ctx.sweep: a sweep's CSV rows) and returns its text. Commands are written
as the docs show them, from the repository root. A figure is `cheap` when its commands take a
few seconds (`doc_figures.py --check --cheap`, run by ctest), `expensive` otherwise.
"""

import json
import math
import os

from doc_figures import Block, Plot, Values

# ---------------------------------------------------------------------------------------------
# Formatting and picking rows.


def us(ps, digits=1):
    return f"{float(ps) / 1e6:.{digits}f}"


def ratio(a, b, digits=2):
    return f"{float(a) / float(b):.{digits}f}"


def pct(x, digits=0):
    return f"{100 * float(x):.{digits}f}"


def sig3(x):
    """Three significant digits, as the summaries print rates."""
    x = float(x)
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def row(rows, **where):
    """The one row whose columns have these values: row(rows, **{"param.heads": 12})."""
    want = {k: str(v) for k, v in where.items()}
    found = [r for r in rows if all(r.get(k) == v for k, v in want.items())]
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows match {want}")
    if found[0]["status"] != "ok":
        raise ValueError(f"the point {want} is {found[0]['status']}: {found[0]['error']}")
    return found[0]


def col(r, name):
    return float(r[name])


def link_kind(name):
    for key, kind in ((".hbm.", "HBM"), (".noc.", "NOC"), (".ucie.", "UCIe"),
                      ("inter_sip", "inter-SIP")):
        if key in name:
            return kind
    return name


def busiest(r):
    return f"{link_kind(r['busiest_link'])} {pct(r['busiest_link_utilisation'])} %"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


WALL = r"^  wall .*$"
SWEEP_WALL = r"; [0-9.]+ [a-z]+ on [0-9]+ jobs$"
HOST_MEMORY = r"[0-9.]+ [KMGT]iB available"

FIGURES = []

# The reader's own spec in docs/cli.md's validate example: tiny.json with a misspelt field.
MINE_JSON = """{
  "extends": "specs/tiny.json",
  "name": "mine",
  "system": {"ucie": {"bandwith_GBps": 128}}
}
"""

# ---------------------------------------------------------------------------------------------
# docs/cli.md

CLI = "docs/cli.md"

FIGURES += [
    Block("cli-run-sharded-gemm", CLI, "cheap",
          lambda ctx: ctx.session("cubesim run specs/default.json sharded_gemm"),
          volatile=[WALL]),
    Block("cli-run-vector-add", CLI, "cheap",
          lambda ctx: ctx.session("cubesim run specs/tiny.json vector_add -p n=100000 -p dtype=f16"),
          volatile=[WALL]),
    Block("cli-sweep-table", CLI, "cheap",
          lambda ctx: ctx.session("cubesim sweep specs/tiny.json sharded_gemm --vary "
                                  "system.sips.cubes_per_sip=1:4 --vary param.K=32,64 -p M=32 "
                                  "-p N=64", exit_code=2),
          volatile=[SWEEP_WALL]),
    Block("cli-sweep-refusals", CLI, "cheap",
          lambda ctx: "```\n" + "".join(
              "$ " + c + "\n" + ctx.output(c, exit_code=2) for c in (
                  "cubesim sweep specs/tiny.json vector_add --vary system.ucie.bandwith_GBps=64,128",
                  "cubesim sweep specs/tiny.json vector_add --vary system.ucie.bandwidth_GBps=64,-1",
                  "cubesim sweep specs/tiny.json vector_add --vary param.n=1000,lots",
                  "cubesim sweep specs/tiny.json vector_add --vary param.n=8:1:+1",
                  "cubesim sweep specs/tiny.json vector_add --vary system.ucie.topology=ring,mesh",
              )) + "```\n"),
    Block("cli-probe-default", CLI, "cheap",
          lambda ctx: ctx.session("cubesim probe specs/default.json --case hbm.ucie")),
    Block("cli-info-default", CLI, "cheap",
          lambda ctx: ctx.session("cubesim info specs/default.json"), volatile=[HOST_MEMORY]),
    Block("cli-info-warning", CLI, "cheap",
          lambda ctx: "```\n" + "".join(
              line + "\n" for line in
              ctx.output("cubesim info specs/default-fast-ucie.json").splitlines()
              if line.startswith("cubesim: warning:")) + "```\n"),
    Block("cli-validate", CLI, "cheap",
          lambda ctx: ctx.session("cubesim validate specs/tiny.json mine.json", exit_code=2,
                                  files={"mine.json": MINE_JSON})),
    Block("cli-traffic-transpose", CLI, "cheap",
          lambda ctx: ctx.session("cubesim traffic specs/default.json --pattern transpose "
                                  "--load 1.1")),
]

FLOW_KERNELS = ["vector_add", "sharded_gemm", "gemm_2d", "softmax_rows", "attention_similarity",
                "allreduce"]


def flow_vs_packet(ctx, spec, kernel, extra=""):
    cmd = f"cubesim run {spec} {kernel} --timing-only{extra}"
    packet = ctx.report(cmd)["sim_time_ps"]
    flow = ctx.report(cmd + " --network flow")["sim_time_ps"]
    return f"{100 * (flow - packet) / packet:+.1f}"


FIGURES.append(Values(
    "cli-flow-vs-packet", CLI, "cheap",
    ["timing-only with default parameters, " + ", ".join(f"{k} {{}} %" for k in FLOW_KERNELS)],
    lambda ctx: [tuple(flow_vs_packet(ctx, "specs/default.json", k) for k in FLOW_KERNELS)]))

# ---------------------------------------------------------------------------------------------
# docs/hardware-model.md: the flow model against the packet model.

HW = "docs/hardware-model.md"
UNBOUNDED = (" --set system.cube.noc.router.input_buffer_bytes=0"
             " --set system.ucie.input_buffer_bytes=0")
FIGURES.append(Block(
    "hw-flow-vs-packet", HW, "cheap",
    lambda ctx: table(
        ["kernel", "default.json", "tiny.json", "default.json, buffers unbounded"],
        [[k, flow_vs_packet(ctx, "specs/default.json", k) + " %",
          flow_vs_packet(ctx, "specs/tiny.json", k) + " %",
          flow_vs_packet(ctx, "specs/default.json", k, UNBOUNDED) + " %"]
         for k in FLOW_KERNELS[:5]])))

# docs/hardware-model.md: an HBM channel's queued writes held in the router buffers.

MESH2D_CHANNEL0 = ("cubesim run default allreduce -p algorithm=mesh2d -p bytes_per_pe=131072 "
                   "--set system.sips.cubes_per_sip=1 --set system.messages.slot_KiB=0.25 "
                   "--set system.messages.slots=4 "
                   "--timing-only")


def hbm_sink(ctx):
    bounded, unbounded = ctx.report(MESH2D_CHANNEL0), ctx.report(MESH2D_CHANNEL0 + UNBOUNDED)
    collective = [us(r["details"]["collective_time_ps"], 3) for r in (bounded, unbounded)]
    staging = [us(r["sim_time_ps"] - r["details"]["collective_time_ps"], 3)
               for r in (bounded, unbounded)]
    return [(*collective, *staging)]


FIGURES.append(Values("hw-hbm-sink", HW, "cheap", [
    "its collective takes {} us with the shipped buffers and {} us with unbounded ones, but its "
    "staging (the loads before it and the stores after it) takes {} us against {} us unbounded"],
    hbm_sink))

# docs/hardware-model.md: the cube cache on a kernel whose programs share their operands.


def cube_cache(ctx):
    rows = []
    for model in ("none", "lru"):
        r = ctx.report("cubesim run default gemm_2d --timing-only "
                       f"--set system.cube.cache.model={model}")
        st = r["stats"]
        hit = f"{100 * st['cache']['hit_rate']:.0f} %" if "cache" in st else "-"
        served = f"{st['cache']['bytes'] / 2**20:.1f} MiB" if "cache" in st else "-"
        rows.append([f"`{model}`", f"{us(r['sim_time_ps'], 2)} us", hit,
                     f"{st['hbm_bytes'] / 2**20:.1f} MiB", served,
                     f"{st['ucie_bytes'] / 2**20:.1f} MiB"])
    return table(["`cube.cache.model`", "simulated", "lines read that hit", "HBM carried",
                  "cache served", "UCIe carried"], rows)


FIGURES.append(Block("hw-cube-cache", HW, "cheap", cube_cache))

# docs/hardware-model.md: the banked HBM model against the simple one, packet and flow models.

BANKED_KERNELS = ("vector_add -p n=16777216", "softmax_rows", "gemm_2d")


def banked_hbm(ctx):
    rows = []
    for kernel in BANKED_KERNELS:
        for model, extra in (("simple", ""), ("banked", ""),
                             ("banked", " --set system.cube.hbm.banked.row_policy=closed")):
            base = (f"cubesim run default {kernel} --timing-only "
                    f"--set system.cube.hbm.model={model}{extra}")
            packet, flow = ctx.report(base), ctx.report(base + " --network flow")
            d = packet["stats"].get("dram")
            name = f"`{model}`" + (" closed" if extra else "")
            rows.append([f"`{kernel}`", name, f"{us(packet['sim_time_ps'], 2)} us",
                         f"{us(flow['sim_time_ps'], 2)} us",
                         f"{100 * d['row_hit_rate']:.0f} %" if d else "-",
                         str(d["row_conflicts"]) if d else "-",
                         str(d["refreshes"]) if d else "-"])
    return table(["kernel", "`hbm.model`", "packet", "flow", "row hits", "conflicts",
                  "refreshes"], rows)


FIGURES.append(Block("hw-banked-hbm", HW, "cheap", banked_hbm))

# docs/hardware-model.md: each class's message window against its credit loop, as info says.

WINDOWS = "cubesim info specs/large.json"


def message_windows(ctx):
    lines = ctx.output(WINDOWS).splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("messages"))
    rows = [lines[at]] + [line for line in lines[at + 1:at + 4] if line.startswith("    ")]
    warnings = [line for line in lines if "channels:" in line and "warning" in line]
    return "```\n$ " + WINDOWS + "\n...\n" + "\n".join(rows + warnings) + "\n```\n"


FIGURES.append(Block("hw-message-windows", HW, "cheap", message_windows))

# ---------------------------------------------------------------------------------------------
# docs/hardware-model.md: synthetic traffic on default.json's cube, 256 B packets.

TRAFFIC = "cubesim traffic specs/default.json --pattern {} --sweep --packet-bytes 256"
TRAFFIC_UNBOUNDED = (TRAFFIC + " --cycles 4000 --set system.cube.noc.router.input_buffer_bytes=0"
                     " --set system.ucie.input_buffer_bytes=0")
TRAFFIC_BUFFERS = (TRAFFIC + " --set system.ucie.input_buffer_bytes=0"
                   " --set system.cube.noc.router.input_buffer_bytes={}"
                   " --set system.cube.noc.router.virtual_channels={}")
PATTERNS = [("uniform", "uniform"), ("transpose", "transpose"),
            ("bit-complement", "bit-complement"), ("hotspot", "hotspot 0.5")]
# (bytes, channels) of the router buffers; None: unbounded.
BUFFERS = [(None, "unbounded"), ((256, 1), "1 packet, 1 VC (256, 1)"),
           ((2048, 1), "8 packets, 1 VC (2048, 1)"), ((8192, 4), "8 packets x 4 VCs (8192, 4)")]


def traffic(ctx, pattern, buffers=None, flow=False):
    cmd = (TRAFFIC_UNBOUNDED.format(pattern) if buffers is None
           else TRAFFIC_BUFFERS.format(pattern, *buffers))
    return ctx.report(cmd + (" --network flow" if flow else ""))


def at_load(t, load):
    """The point of a sweep at this load (a fraction of the bound), or None past its end."""
    found = [p for p in t["points"] if abs(p["load"] - load) < 1e-9]
    return found[0] if found else None


def ns(x):
    return f"{x:.1f}" if x < 100 else f"{x:.0f}"


def latency(p):
    return (f"{ns(p['latency_ns_mean'])} / {ns(p['latency_ns_p99'])}"
            + (", saturated" if p["saturated"] else ""))


def bound_label(t):
    b = t["bound_fraction_of_link"]
    fraction = "1" if abs(b - 1) < 1e-9 else f"1/{round(1 / b, 2):g}"
    link = t["bottleneck"].split(".", 2)[-1]  # sip0.cube0.noc.(0,0)->(0,1).south
    link = link.removeprefix("noc.").rsplit(".", 1)[0] if link.startswith("noc.") else link
    return f"{fraction}: `{link}`"


def traffic_table(ctx):
    rows = []
    for pattern, label in PATTERNS + [("neighbor", "neighbor")]:
        t = traffic(ctx, pattern)
        cells = [at_load(t, load) for load in (0.1, 0.5, 0.9, 1.0, 1.1, 1.2)]
        rows.append([f"{label} ({bound_label(t)})"]
                    + ["-" if p is None else latency(p) for p in cells])
    return table(["pattern (bound, set by)", "10 %", "50 %", "90 %", "100 %", "110 %", "120 %"],
                 rows)


def highest_unsaturated(t):
    ok = [p["offered_load"] for p in t["points"] if p["saturated"] is False]
    return f"{max(ok):.2f}" if ok else "none"


def traffic_buffers_table(ctx):
    rows = []
    for pattern, label in PATTERNS:
        for i, (buffers, buffers_label) in enumerate(BUFFERS):
            t = traffic(ctx, pattern, buffers)
            last = t["points"][-1]
            rows.append([label, buffers_label if pattern == "uniform" else
                         buffers_label.split(" (")[0],
                         f"{last['delivered_load']:.3f} at {last['offered_load']:.2f}",
                         highest_unsaturated(t), latency(at_load(t, 0.5))])
    return table(["pattern", "buffers (B, V)", "delivered at the highest load (of the bound)",
                  "highest load not saturated", "mean / p99 latency at 50 % (ns)"], rows)


def flow_vs_packet_traffic(ctx, pattern, buffers):
    """Delivered at the sweep's end (1.2 of the bound, or 1.0 where a node can offer no more)
    and mean latency at 0.5, of the packet and the flow model."""
    out = []
    for flow in (False, True):
        t = traffic(ctx, pattern, buffers, flow)
        out.append((t["points"][-1]["delivered_load"], at_load(t, 0.5)["latency_ns_mean"]))
    return out


TRAFFIC_FLOW_BUFFERS = [b for b in BUFFERS if b[0] != (256, 1)]


def traffic_flow_table(ctx):
    rows = []
    for pattern, label in PATTERNS:
        cells = []
        for buffers, buffers_label in TRAFFIC_FLOW_BUFFERS:
            (pd, pl), (fd, fl) = flow_vs_packet_traffic(ctx, pattern, buffers)
            cells.append((buffers_label.split(" (")[0], f"{pd:.3f} / {fd:.3f}",
                          f"{ns(pl)} / {ns(fl)}"))
        if len({c[1:] for c in cells}) == 1:
            rows.append([label, "all three", *cells[0][1:]])
        else:
            rows += [[label, *c] for c in cells]
    return table(["pattern", "buffers", "delivered: packet / flow",
                  "mean latency (ns): packet / flow"], rows)


def traffic_prose(ctx):
    last = lambda pattern, buffers=None: traffic(ctx, pattern, buffers)["points"][-1]
    bc = traffic(ctx, "bit-complement")
    past = {f"{at_load(bc, load)['delivered_load']:.3f}" for load in (1.1, 1.2)}
    if len(past) != 1:
        raise ValueError(f"bit-complement delivers {sorted(past)} at 1.1 and 1.2 of the bound; "
                         "the prose names one figure for both")
    loss = [1 - last(p, (8192, 4))["delivered_load"] / last(p)["delivered_load"]
            for p, _ in PATTERNS]
    flow = {(p, b): flow_vs_packet_traffic(ctx, p, b) for p, _ in PATTERNS
            for b, _ in TRAFFIC_FLOW_BUFFERS}
    hol = flow[("uniform", (2048, 1))]
    elsewhere = [abs(f[0] - q[0]) / q[0] for (_, b), (q, f) in flow.items() if b != (2048, 1)]
    return [
        (past.pop(),),
        (f"{last('bit-complement', (256, 1))['delivered_load']:.3f}",),
        (f"{last('uniform', (256, 1))['delivered_load']:.2f}",),
        (f"{last('uniform', (2048, 1))['delivered_load']:.2f}",
         f"{last('bit-complement', (2048, 1))['delivered_load']:.2f}"),
        (f"{100 * max(0, min(loss)):.0f}", f"{100 * max(loss):.0f}"),
        (f"{hol[1][0] - hol[0][0]:.2f}", f"{100 * min(elsewhere):.0f}",
         f"{100 * max(elsewhere):.0f}"),
    ]


FIGURES += [
    Block("hw-traffic-unbounded", HW, "cheap", traffic_table),
    Block("hw-traffic-buffers", HW, "cheap", traffic_buffers_table),
    Block("hw-traffic-flow", HW, "cheap", traffic_flow_table),
    Values("hw-traffic-prose", HW, "cheap", [
        "(bit-complement: {} of the bound at 110 % and 120 % offered)",
        "(bit-complement, whose flows all cross the middle links, stops at exactly {})",
        "where flows also wait for each other uniform traffic falls to {}",
        "saturates at about {} of the bound (an input-queued switch with large ports: 0.59), and "
        "bit-complement at {}",
        "saturation comes within {}-{} % of unbounded",
        "(up to {} of the bound for uniform with one channel); with unbounded buffers or four "
        "channels it is within {}-{} %",
    ], traffic_prose),
]

# ---------------------------------------------------------------------------------------------
# docs/what-if.md

WHATIF = "docs/what-if.md"

# Study 1: sharded_gemm and gemm_2d against UCIe bandwidth and cubes per SIP.
GEMM_SWEEP = ("cubesim sweep specs/default.json --vary system.ucie.bandwidth_GBps=16:512:x2 "
              "--vary kernel=sharded_gemm,gemm_2d --vary system.sips.cubes_per_sip=1,2,4,8")
BW, CPS = "system.ucie.bandwidth_GBps", "system.sips.cubes_per_sip"


def gemm_point(ctx, cubes, bw, kernel):
    return row(ctx.sweep(GEMM_SWEEP), **{BW: bw, CPS: cubes, "kernel": kernel})


def gemm_table(ctx):
    rows = []
    for cubes, bws in ((1, [512]), (2, [16, 128, 256, 512]), (4, [16, 128, 256, 512]),
                       (8, [16, 256, 512])):
        for bw in bws:
            s, g = gemm_point(ctx, cubes, bw, "sharded_gemm"), gemm_point(ctx, cubes, bw, "gemm_2d")
            if cubes == 1:
                # One cube has no UCIe traffic: every bandwidth gives the same point.
                for other in (16, 32, 64, 128, 256):
                    for k, r in (("sharded_gemm", s), ("gemm_2d", g)):
                        if gemm_point(ctx, 1, other, k)["sim_time_ps"] != r["sim_time_ps"]:
                            raise ValueError(f"{k} on one cube depends on UCIe bandwidth")
            first = "any" if cubes == 1 else f"{bw} ({4 * bw}) GB/s"
            rows.append([cubes, first, us(s["sim_time_ps"]), us(g["sim_time_ps"]),
                         f"{busiest(s)} / {busiest(g)}"])
    return table(["cubes per SIP", "UCIe per link (per side)", "sharded_gemm", "gemm_2d",
                  "busiest link: sharded / 2D, busy"], rows)


FIGURES.append(Block("whatif-gemm-table", WHATIF, "cheap", gemm_table))
FIGURES.append(Plot(
    "what-if-gemm-ucie", "cheap", lambda ctx: ctx.sweep(GEMM_SWEEP),
    columns=["index", BW, "kernel", CPS, "status", "sim_time_ps"],
    image="docs/img/what-if-gemm-ucie.svg",
    plot_args=["--x", BW, "--lines", "kernel", "--panels", CPS, "--metric", "sim_time_ps",
               "--title", "sharded_gemm vs gemm_2d on default"]))


def gemm_prose(ctx):
    t = lambda c, bw, k: col(gemm_point(ctx, c, bw, k), "sim_time_ps")
    p = lambda c, bw, k: gemm_point(ctx, c, bw, k)
    mib = lambda c, k, field: f"{col(p(c, 512, k), field) / 2**20:.0f}"
    s4 = (t(4, 256, "sharded_gemm"), t(4, 512, "sharded_gemm"))
    best = max((r for r in ctx.sweep(GEMM_SWEEP) if r["status"] == "ok"),
               key=lambda r: col(r, "achieved_flops_per_second"))
    one = p(1, 512, "sharded_gemm")
    return [
        (ratio(*s4), us(s4[1]), us(s4[0]),
         ratio(t(8, 256, "sharded_gemm"), t(8, 512, "sharded_gemm")),
         f"{100 * (t(4, 256, 'gemm_2d') / t(4, 512, 'gemm_2d') - 1):.0f}",
         mib(4, "gemm_2d", "ucie_bytes"), mib(4, "sharded_gemm", "ucie_bytes")),
        (mib(1, "sharded_gemm", "hbm_bytes"), mib(8, "sharded_gemm", "hbm_bytes"),
         mib(1, "sharded_gemm", "noc_bytes"),
         f"{col(p(8, 512, 'sharded_gemm'), 'noc_bytes') / 2**30:.1f}",
         mib(8, "sharded_gemm", "ucie_bytes"),
         *(us(t(c, 512, "sharded_gemm")) for c in (1, 2, 4, 8))),
        (mib(1, "gemm_2d", "hbm_bytes"), mib(8, "gemm_2d", "hbm_bytes"),
         mib(8, "gemm_2d", "ucie_bytes"), *(us(t(c, 512, "gemm_2d")) for c in (1, 2, 4, 8)),
         ratio(t(4, 512, "sharded_gemm"), t(4, 512, "gemm_2d")),
         f"{t(8, 512, 'sharded_gemm') / t(8, 512, 'gemm_2d'):.1f}"),
        (f"{col(best, 'achieved_flops_per_second') / 1e12:.0f}", f"{100 * col(best, 'peak_fraction'):.1f}",
         f"{100 * col(one, 'peak_fraction'):.0f}", f"{col(one, 'achieved_flops_per_second') / 1e12:.0f}",
         pct(one["busiest_link_utilisation"])),
    ]


FIGURES.append(Values("whatif-gemm-prose", WHATIF, "cheap", [
    "costs `sharded_gemm` {}x on 4 cubes ({} to {} µs) and {}x on 8; `gemm_2d` loses {} % on 4 "
    "cubes, since it moves a third of the UCIe bytes ({} vs {} MiB)",
    "from 1 to 8 cubes HBM traffic grows from {} to {} MiB, NOC traffic from {} MiB to {} GiB "
    "and UCIe traffic from 0 to {} MiB, while each program's share of the FLOPs shrinks. Time "
    "goes {} -> {} -> {} -> {} µs",
    "(HBM {} -> {} MiB, UCIe 0 -> {} MiB), so time falls {} -> {} -> {} -> {} µs from 1 to 8 "
    "cubes. On one cube it is slower than `sharded_gemm` (its staged, strided blocks cost more "
    "than one contiguous A); from 2 cubes on it is faster: {}x on the default system, {}x at 8 "
    "cubes",
    "The best point reaches {} TFLOP/s, {} % of the 4.1 PFLOP/s f16 peak of 8 cubes; on one "
    "cube `sharded_gemm` reaches {} % ({} of 512 TFLOP/s) and is bound by HBM ({} % busy)",
], gemm_prose))

# Study 2: attention_similarity, heads and variants.
ATTN_SWEEP = ("cubesim sweep specs/default.json attention_similarity --vary param.heads=1,4,8,12 "
              "--vary param.variant=single,multi_fused,multi_preprojected,multi_per_head "
              "--metric details.pairs_per_second")
ATTN_NOC_SWEEP = ("cubesim sweep specs/default.json attention_similarity "
                  "--vary system.cube.noc.link_bandwidth_GBps=128:1024:x2 "
                  "--vary param.variant=single,multi_fused,multi_per_head")
HEADS, VARIANT = "param.heads", "param.variant"


def attn(ctx, heads, variant):
    return row(ctx.sweep(ATTN_SWEEP), **{HEADS: heads, VARIANT: variant})


def pairs(r, time_ps):
    return int(r["param.queries"]) * int(r["param.keys"]) / (float(time_ps) * 1e-12)


def attention_table(ctx):
    single = attn(ctx, 12, "single")
    per_head = attn(ctx, 12, "multi_per_head")
    base, slow = col(single, "sim_time_ps"), col(per_head, "sim_time_ps")
    pre = attn(ctx, 12, "multi_preprojected")
    search = col(pre, "details.search_sim_time_ps")
    rows = []
    for label, r, t in (("`single` (1 head)", single, base),
                        ("`multi_per_head`", per_head, slow),
                        ("`multi_fused`", attn(ctx, 12, "multi_fused"), None),
                        ("`multi_preprojected`, both launches", pre, None),
                        ("`multi_preprojected`, search only (keys projected once, "
                         f"{us(pre['details.preprojection_sim_time_ps'])} µs)", pre, search)):
        t = col(r, "sim_time_ps") if t is None else t
        rows.append([label, f"{us(t)} µs", f"{sig3(pairs(r, t) / 1e9)} G",
                     f"{ratio(t, base)}x", "-" if r is single else f"{ratio(slow, t)}x"])
    return table(["variant", "simulated time", "pairs/s", "slower than single",
                  "faster than per-head"], rows)


def attention_slowdown(ctx):
    base = col(attn(ctx, 12, "single"), "sim_time_ps")
    return table(["heads", "`multi_per_head`", "`multi_fused`"], [
        [h, f"{ratio(col(attn(ctx, h, 'multi_per_head'), 'sim_time_ps'), base)}x",
         f"{ratio(col(attn(ctx, h, 'multi_fused'), 'sim_time_ps'), base)}x"] for h in (4, 8, 12)])


def attention_noc_table(ctx):
    rows = []
    for bw in (128, 256, 512, 1024):
        r = {v: row(ctx.sweep(ATTN_NOC_SWEEP),
                    **{"system.cube.noc.link_bandwidth_GBps": bw, VARIANT: v})
             for v in ("single", "multi_fused", "multi_per_head")}
        t = {v: col(r[v], "sim_time_ps") for v in r}
        rows.append([f"{bw} (default)" if bw == 512 else bw, f"{us(t['single'])} µs",
                     f"{us(t['multi_fused'])} µs", f"{us(t['multi_per_head'])} µs",
                     f"{ratio(t['multi_fused'], t['single'], 1)}x", busiest(r["multi_fused"])])
    return table(["NOC GB/s", "`single`", "`multi_fused`", "`multi_per_head`", "fused / single",
                  "busiest link (fused)"], rows)


FIGURES += [
    Block("whatif-attention-table", WHATIF, "cheap", attention_table),
    Block("whatif-attention-slowdown", WHATIF, "cheap", attention_slowdown),
    Block("whatif-attention-noc", WHATIF, "cheap", attention_noc_table),
    Plot("what-if-attention-heads", "cheap", lambda ctx: ctx.sweep(ATTN_SWEEP),
         columns=["index", HEADS, VARIANT, "status", "details.pairs_per_second"],
         image="docs/img/what-if-attention-heads.svg",
         plot_args=["--x", HEADS, "--lines", VARIANT, "--metric", "details.pairs_per_second",
                    "--title", "attention_similarity on default"]),
]

# Study 3: router buffers and virtual channels.
BUF_SWEEP = ("cubesim sweep specs/default.json "
             "--vary system.cube.noc.router.input_buffer_bytes=0,24576,49152,98304,196608 "
             "--vary kernel=vector_add,sharded_gemm,gemm_2d,softmax_rows "
             "--vary system.cube.noc.router.virtual_channels=3,6")
BUF, VCS = "system.cube.noc.router.input_buffer_bytes", "system.cube.noc.router.virtual_channels"


def buf(ctx, kernel, size, vcs):
    return col(row(ctx.sweep(BUF_SWEEP), **{BUF: size, VCS: vcs, "kernel": kernel}),
               "sim_time_ps")


def buffers_table(ctx):
    cols = [(0, 6), (24576, 3), (24576, 6), (49152, 3), (49152, 6), (196608, 6)]
    for k in ("vector_add", "sharded_gemm", "gemm_2d", "softmax_rows"):
        if buf(ctx, k, 0, 3) != buf(ctx, k, 0, 6):
            raise ValueError(f"{k}: unbounded buffers depend on the channels")
    return table(["kernel", "unbounded", "24 KiB, 3 VCs (2 pkt)", "24 KiB, 6 VCs (1 pkt)",
                  "48 KiB, 3 VCs (4 pkt)", "48 KiB, 6 VCs (2 pkt, shipped)",
                  "192 KiB, 6 VCs (8 pkt)"],
                 [[k] + [us(buf(ctx, k, s, v), 3) for s, v in cols]
                  for k in ("vector_add", "sharded_gemm", "gemm_2d", "softmax_rows")])


def buffers_prose(ctx):
    b = lambda k, s, v: buf(ctx, k, s, v)
    u2 = lambda k, s, v: us(b(k, s, v), 2)
    less = lambda a, c: f"{100 * (1 - a / c):.0f}"
    return [
        (ratio(b("sharded_gemm", 24576, 6), b("sharded_gemm", 49152, 6)),),
        (u2("vector_add", 49152, 6), u2("vector_add", 49152, 3),
         u2("softmax_rows", 49152, 6), u2("softmax_rows", 49152, 3),
         u2("sharded_gemm", 49152, 6), u2("sharded_gemm", 49152, 3),
         u2("gemm_2d", 49152, 6), u2("gemm_2d", 49152, 3)),
        (u2("gemm_2d", 196608, 3), u2("gemm_2d", 196608, 6)),
        (less(b("sharded_gemm", 49152, 6), b("sharded_gemm", 0, 6)),
         less(b("gemm_2d", 49152, 6), b("gemm_2d", 0, 6)),
         f"{100 * (b('vector_add', 49152, 6) / b('vector_add', 0, 6) - 1):.0f}"),
    ]


FIGURES += [
    Block("whatif-buffers-table", WHATIF, "cheap", buffers_table),
    Values("whatif-buffers-prose", WHATIF, "cheap", [
        "which loads the mesh links to 92 %, becomes {}x slower",
        "(`vector_add` {} vs {} µs, `softmax_rows` {} vs {} µs, `sharded_gemm` {} vs {} µs, "
        "`gemm_2d` {} vs {} µs)",
        "`gemm_2d` with 3 channels of 16 packets takes {} µs, against {} µs with 6 of 8",
        "`sharded_gemm` is {} % faster with the shipped buffers than with unbounded ones and "
        "`gemm_2d` {} % (`vector_add` is {} % slower)",
    ], buffers_prose),
    Plot("what-if-buffers", "cheap", lambda ctx: ctx.sweep(BUF_SWEEP),
         columns=["index", BUF, "kernel", VCS, "status", "sim_time_ps"],
         image="docs/img/what-if-buffers.svg",
         plot_args=["--x", BUF, "--lines", "kernel", "--panels", VCS, "--metric", "sim_time_ps",
                    "--title", "vector_add vs sharded_gemm vs gemm_2d vs softmax_rows on default"]),
]

# Study 4: all-reduce algorithms on 8 cubes and on 8 SIPs.
AR_VARY = ("--vary param.bytes_per_pe=4096:262144:x4 "
           "--vary param.algorithm=ring,bidir_ring,hierarchical,mesh2d,tree "
           "--vary param.buffer=sram,hbm")
CUBES8 = "cubesim sweep specs/default.json allreduce --set system.sips.cubes_per_sip=8"
SIPS8 = ("cubesim sweep specs/default.json allreduce --set system.sips.count=8 "
         "--set system.sips.cubes_per_sip=1 --set 'system.sips.grid=[4,2]'")
AR_SYSTEMS = [
    ("8 cubes, UCIe ring", f"{CUBES8} --vary system.ucie.topology=ring {AR_VARY}"),
    ("8 cubes, UCIe 4x2 mesh",
     f"{CUBES8} --set 'system.ucie.mesh=[4,2]' --vary system.ucie.topology=mesh {AR_VARY}"),
    ("8 cubes, UCIe 4x2 torus",
     f"{CUBES8} --set 'system.ucie.mesh=[4,2]' --vary system.ucie.topology=torus {AR_VARY}"),
    ("8 cubes, UCIe all-to-all", f"{CUBES8} --vary system.ucie.topology=all_to_all {AR_VARY}"),
    ("8 SIPs, inter-SIP ring", f"{SIPS8} --vary system.inter_sip.topology=ring {AR_VARY}"),
    ("8 SIPs, inter-SIP 4x2 mesh", f"{SIPS8} --vary system.inter_sip.topology=mesh {AR_VARY}"),
    ("8 SIPs, inter-SIP 4x2 torus", f"{SIPS8} --vary system.inter_sip.topology=torus {AR_VARY}"),
]
ALGORITHMS = ["ring", "bidir_ring", "hierarchical", "mesh2d", "tree"]
COLLECTIVE = "details.collective_time_ps"


def ar(ctx, command, algorithm, size, buffer="sram"):
    return row(ctx.sweep(command), **{"param.algorithm": algorithm, "param.bytes_per_pe": size,
                                      "param.buffer": buffer})


def ar_cell(ctx, command, algorithm, buffer="sram"):
    return " / ".join(us(ar(ctx, command, algorithm, s, buffer)[COLLECTIVE], 2)
                      for s in (4096, 262144))


def allreduce_table(ctx):
    return table(["system"] + ALGORITHMS,
                 [[label] + [ar_cell(ctx, cmd, a) for a in ALGORITHMS]
                  for label, cmd in AR_SYSTEMS])


def allreduce_buffers_table(ctx):
    cmd = AR_SYSTEMS[0][1]
    return table(["8 cubes, UCIe ring, µs at 4 KiB / 256 KiB"] + ALGORITHMS,
                 [[f"buffer={b}"] + [ar_cell(ctx, cmd, a, b) for a in ALGORITHMS]
                  for b in ("sram", "hbm")])


def allreduce_prose(ctx):
    worst = 0.0
    points = 0
    for _, cmd in AR_SYSTEMS:
        for r in ctx.sweep(cmd):
            sim, model = col(r, COLLECTIVE), col(r, "details.model_time_ps")
            worst = max(worst, abs(model - sim) / sim)
            points += 1
    return [(f"{100 * worst:.1f}", str(points))]


def allreduce_rows(ctx, systems, buffer):
    out = []
    for _, cmd in systems:
        out += [r for r in ctx.sweep(cmd) if r["param.buffer"] in buffer]
    return out


AR_COLUMNS = ["param.bytes_per_pe", "param.algorithm", "param.buffer", "status", COLLECTIVE,
              "details.model_time_ps"]
AR_PLOT = ["--x", "param.bytes_per_pe", "--lines", "param.algorithm", "--metric", COLLECTIVE,
           "--reference", "details.model_time_ps", "--log-y"]
FIGURES += [
    Block("whatif-allreduce-table", WHATIF, "expensive", allreduce_table),
    Block("whatif-allreduce-buffers-table", WHATIF, "expensive", allreduce_buffers_table),
    Values("whatif-allreduce-model", WHATIF, "expensive",
           ["The model stays within {} % of the simulation at every one of the {} points"],
           allreduce_prose),
    Plot("what-if-allreduce-ucie", "expensive",
         lambda ctx: allreduce_rows(ctx, AR_SYSTEMS[:4], ("sram",)),
         columns=["system.ucie.topology"] + AR_COLUMNS,
         image="docs/img/what-if-allreduce-ucie.png",
         plot_args=AR_PLOT + ["--panels", "system.ucie.topology",
                              "--title", "allreduce on 8 cubes of default, data in SRAM"]),
    Plot("what-if-allreduce-sips", "expensive",
         lambda ctx: allreduce_rows(ctx, AR_SYSTEMS[4:], ("sram",)),
         columns=["system.inter_sip.topology"] + AR_COLUMNS,
         image="docs/img/what-if-allreduce-sips.png",
         plot_args=AR_PLOT + ["--panels", "system.inter_sip.topology",
                              "--title", "allreduce on 8 SIPs of default, data in SRAM"]),
    Plot("what-if-allreduce-buffers", "expensive",
         lambda ctx: allreduce_rows(ctx, AR_SYSTEMS[:1], ("sram", "hbm")),
         columns=AR_COLUMNS, image="docs/img/what-if-allreduce-buffers.png",
         plot_args=AR_PLOT + ["--panels", "param.buffer",
                              "--title", "allreduce on 8 cubes of default, UCIe ring"]),
]

# ---------------------------------------------------------------------------------------------
# docs/writing-kernels.md

KERNELS = "docs/writing-kernels.md"


def tp_splitk(ctx):
    tp = ctx.report("cubesim run default tp_linear --timing-only")
    sk = ctx.report("cubesim run default splitk_gemm --timing-only")
    return [(us(tp["sim_time_ps"]), us(tp["details"]["sum_time_ps"]),
             us(tp["details"]["sum_model_ps"]), us(sk["sim_time_ps"]),
             us(sk["details"]["sum_time_ps"]))]


def ring_attention(ctx):
    def run(params=""):
        return ctx.report(f"cubesim run default ring_attention --timing-only {params}".strip())
    base = run()
    big = run("--set system.messages.slot_KiB=16")
    causal = run("-p causal=true -p layout=striped")
    unmasked = run("-p layout=striped")
    causal_long = run("-p seq=8192 -p causal=true -p layout=striped")
    unmasked_long = run("-p seq=8192 -p layout=striped")
    return [(us(base["sim_time_ps"], 1),),
            (us(causal_long["sim_time_ps"], 1), us(unmasked_long["sim_time_ps"], 1),
             us(causal["sim_time_ps"], 1), us(unmasked["sim_time_ps"], 1)),
            (us(base["sim_time_ps"], 1), us(big["sim_time_ps"], 1))]


def vector_add_pipeline(ctx):
    def cell(block, pipeline):
        r = ctx.report(f"cubesim run default vector_add -p n=16777216 -p block={block} "
                       f"-p pipeline={pipeline} --timing-only")
        peak = r["system"]["bandwidth_GBps"]["hbm_system"] * 1e9
        rate = r["achieved_bytes_per_second"]
        return (f"{us(r['sim_time_ps'], 2)} us ({rate / 1e12:.1f} TB/s, "
                f"{100 * rate / peak:.0f} % of the {peak / 1e12:.1f} TB/s HBM peak)",
                r["details"]["block"])
    rows = []
    for block in (0, 4096):
        (none, chosen), (double, _) = cell(block, "none"), cell(block, "double")
        label = f"0 (automatic: {chosen})" if block == 0 else str(block)
        rows.append([label, none, double])
    return table(["block", "`pipeline=none`", "`pipeline=double`"], rows)


def vector_add_placement(ctx):
    rows = []
    for spec, label in (("default", "default.json (1 SIP, 4 cubes)"),
                        ("large", "large.json (4 SIPs, 32 cubes)")):
        cells = [label]
        for placement in ("system", "cube", "pe", "first_touch"):
            r = ctx.report(f"cubesim run specs/{spec}.json vector_add -p n=268435456 "
                           f"-p placement={placement} --timing-only")
            peak = r["system"]["bandwidth_GBps"]["hbm_system"] * 1e9
            rate = r["achieved_bytes_per_second"]
            cells.append(f"{rate / 1e12:.2f} TB/s ({100 * rate / peak:.0f} % of the HBM peak)")
        rows.append(cells)
    return table(["spec", "`system`", "`cube` (auto)", "`pe`", "`first_touch`"], rows)


def collective_model_default(ctx):
    worst = 0.0
    for algorithm in ALGORITHMS:
        for buffer in ("sram", "hbm"):
            d = ctx.report(f"cubesim run default allreduce -p algorithm={algorithm} "
                           f"-p bytes_per_pe=65536 -p buffer={buffer} --timing-only")["details"]
            worst = max(worst, abs(d["model_time_ps"] - d["collective_time_ps"])
                        / d["collective_time_ps"])
    return [(f"{100 * worst:.1f}",)]


# The large.json ring all-reduce of issue 19 (some 25 s): writing-kernels.md chapter 7 and
# performance.md's Collectives.
LARGE_ALLREDUCE = "cubesim run specs/large.json allreduce -p bytes_per_pe=1048576 --timing-only"


def large_allreduce(ctx):
    r = ctx.report(LARGE_ALLREDUCE)
    d = r["details"]
    four = ctx.report(LARGE_ALLREDUCE + " --set system.messages.slots=4")["details"]
    return [(f"{d['collective_time_ps'] / 1e9:.3f}", f"{d['algbw_GBps']:.1f}",
             f"{100 * abs(d['model_time_ps'] - d['collective_time_ps']) / d['collective_time_ps']:.1f}"),
            (str(d["slots_per_channel"]["most"]), f"{four['collective_time_ps'] / 1e9:.3f}"),
            (f"{100 * r['stats']['busiest_link']['utilisation']:.1f}",)]


FIGURES += [
    Values("kernels-collective-model", KERNELS, "cheap", [
        "for every algorithm, with the data in SRAM or in HBM (measured: within {} %)"],
        collective_model_default),
    Values("kernels-allreduce-large", KERNELS, "expensive", [
        "a 1 MiB ring all-reduce over all 2048 PEs takes {} ms (algbw {} GB/s); the model is "
        "within {} % of it",
        "the inter-SIP channels' default window ({} slots) holds more than a credit loop's worth "
        "of them, so the four 800 ns crossings are paid once per ring rather than at every step. "
        "With 4 slots per channel (`--set system.messages.slots=4`) every step waits for an "
        "inter-SIP credit and the collective takes {} ms",
        "No link is more than {} % busy"], large_allreduce),
    Values("kernels-tp-linear", KERNELS, "cheap", [
        "`tp_linear` takes {} us, of which the sum is {} us (model {} us), and `splitk_gemm` {} "
        "us, of which the sum is {} us"], tp_splitk),
    Values("kernels-ring-attention", KERNELS, "cheap", [
        "compute-bound ({} us with the defaults",
        "causal stripes take {} us against {} us without the mask; at the default 64 rows (two "
        "chunks a side) {} against {} us",
        "16 KiB slots take the default run from {} to {} us"], ring_attention),
    Block("kernels-vector-add-pipeline", KERNELS, "cheap", vector_add_pipeline),
    Block("kernels-vector-add-placement", KERNELS, "expensive", vector_add_placement),
]

# ---------------------------------------------------------------------------------------------
# docs/performance.md: its simulated figures (the wall-clock ones are measured by hand).

PERF = "docs/performance.md"


def hbm_slots(ctx):
    rows = []
    for spec in ("tiny", "default"):
        r = ctx.report(f"cubesim run {spec} allreduce -p algorithm=ring -p bytes_per_pe=16384 "
                       "--timing-only --set system.messages.memory=hbm")
        rows.append([f"{spec}.json", f"{us(r['details']['collective_time_ps'], 3)} us",
                     f"{us(r['details']['model_time_ps'], 3)} us"])
    return table(["spec", "simulated", "the collective model"], rows)


FIGURES.append(Block("perf-hbm-slots", PERF, "cheap", hbm_slots))


def attention_prose(ctx):
    t = lambda h, v: col(attn(ctx, h, v), "sim_time_ps")
    single, fused, per_head = (attn(ctx, 12, v) for v in ("single", "multi_fused",
                                                          "multi_per_head"))
    pre = attn(ctx, 12, "multi_preprojected")
    search = col(pre, "details.search_sim_time_ps")
    base = col(single, "sim_time_ps")
    noc = lambda bw, v: col(row(ctx.sweep(ATTN_NOC_SWEEP),
                                **{"system.cube.noc.link_bandwidth_GBps": bw, VARIANT: v}),
                            "sim_time_ps")
    return [
        (us(per_head["sim_time_ps"]),),
        (sig3(pairs(fused, fused["sim_time_ps"]) / 1e9),),
        (ratio(t(12, "multi_fused"), base), ratio(search, base)),
        (ratio(t(12, "multi_per_head"), t(12, "multi_fused")), ratio(t(12, "multi_per_head"), search)),
        (f"{col(fused, 'useful_flops') / 1e9:.1f}", f"{col(single, 'useful_flops') / 1e9:.2f}",
         ratio(fused["noc_bytes"], single["noc_bytes"], 1),
         f"{col(fused, 'noc_bytes') / 2**30:.1f}", f"{col(single, 'noc_bytes') / 2**20:.0f}"),
        (f"{col(fused, 'achieved_flops_per_second') / 1e12:.0f}",
         f"{col(single, 'achieved_flops_per_second') / 1e12:.0f}", pct(fused["busiest_link_utilisation"]),
         pct(single["busiest_link_utilisation"])),
        (ratio(t(12, "multi_per_head"), base, 1),),
        (ratio(t(12, "multi_per_head"), t(12, "multi_fused")), ratio(t(12, "multi_per_head"), search)),
        (ratio(noc(128, "multi_fused"), noc(128, "single"), 1),
         ratio(noc(512, "multi_fused"), noc(512, "single"), 1)),
    ]


FIGURES.append(Values("whatif-attention-prose", WHATIF, "cheap", [
    "`multi_per_head` moved most: 151.9 to {} µs at 12 heads",
    "| > 2 M pairs/s | {} G pairs/s (fused)",
    "| < 2x | {}x fused, {}x pre-projected search |",
    "| 3x or more | {}x fused, {}x pre-projected search (over per-head)",
    "so the useful work is 12x ({} GFLOP against {} GFLOP) and the bytes moved over the NOC are "
    "{}x ({} GiB against {} MiB)",
    "better than the single head ({} against {} TFLOP/s) and is held by a NOC link {} % busy; the "
    "single head is latency-bound (its busiest link is {} % busy)",
    "here the per-head baseline is {}x and",
    "as the seed intended ({}x; {}x with pre-projected keys",
    "ratio falls as the fabric widens ({}x to {}x)",
], attention_prose))


def spread(times):
    return (max(times) - min(times)) / min(times)


def allreduce_conclusions(ctx):
    import math
    slots = lambda n: ctx.report(
        "cubesim run default allreduce --set system.sips.count=8 --set system.sips.cubes_per_sip=1 "
        f"-p algorithm=ring -p bytes_per_pe=4096 --set system.messages.slots={n} --timing-only"
    )["details"]["collective_time_ps"]
    t = lambda i, a, n, b="sram": col(ar(ctx, AR_SYSTEMS[i][1], a, n, b), COLLECTIVE)
    within = lambda algorithms: math.ceil(100 * max(
        spread([t(i, a, n) for i in group]) for group in (range(4), range(4, 7))
        for a in algorithms for n in (4096, 16384, 65536, 262144)))
    rings = [t(0, a, n, "hbm") / t(0, a, n) for a in ALGORITHMS[:4] for n in (4096, 262144)]
    flat = [t(i, "ring", 4096) for i in range(4)]
    return [
        (str(within(["bidir_ring"])), str(within(["hierarchical", "mesh2d"])),
         f"{100 * (max(flat) / min(flat) - 1):.0f}"),
        (us(slots(2)), us(slots(8)), us(slots(16)), us(t(4, "ring", 4096)),
         f"{t(4, 'ring', 4096) / t(4, 'hierarchical', 4096):.1f}", us(t(4, "hierarchical", 4096))),
        (us(t(0, "tree", 4096), 2), us(t(4, "tree", 4096))),
        (f"{min(rings):.0f}", f"{max(rings):.0f}"),
        (f"{t(0, 'tree', 4096, 'hbm') / t(0, 'tree', 4096):.0f}",),
    ]


FIGURES.append(Values("whatif-allreduce-conclusions", WHATIF, "expensive", [
    "give the bidirectional ring the same times to {} %, and the hierarchical and mesh2d rings, "
    "whose cube-level steps share the mesh with the rest, to {} %. The flat ring's differ by up "
    "to {} %",
    "with 2 slots it takes {} µs, with 8 slots {} µs, with 16 slots {} µs; the default window "
    "takes it to {} µs, {}x the hierarchical ring's {} µs",
    "**Small vectors want the tree** ({} µs at 4 KiB on cubes, {} µs on SIPs",
    "**HBM-resident data costs {}-{}x for the rings**",
    "the tree, with few large pieces, loses only {}x at 4 KiB",
], allreduce_conclusions))


# performance.md's simulated values beside its wall-clock ones: each row's command, as the
# section shows it (the wall-clock columns are measured by hand and not checked).


def vector_add_grids(ctx):
    out = []
    for grid in ("hardware", "triton"):
        # The wall times are of functional runs; --timing-only has the same events and time.
        r = ctx.report(f"cubesim run specs/default.json vector_add -p n=16777216 -p grid={grid} "
                       "--timing-only")
        out.append((f"{r['stats']['events'] / 1e3:.0f}", us(r["sim_time_ps"])))
    return out


def bounded_events(ctx):
    events = lambda k, extra="": ctx.report(
        f"cubesim run specs/default.json {k} --timing-only{extra}")["stats"]["events"]
    return [(f"{events('vector_add') / 1e3:.1f}", f"{events('vector_add', UNBOUNDED) / 1e3:.1f}",
             f"{events('attention_similarity') / 1e6:.2f}",
             f"{events('attention_similarity', UNBOUNDED) / 1e6:.2f}")]


GEMM4096 = "cubesim run specs/{} sharded_gemm -p M=4096 -p K=4096 -p N=4096"


def gemm4096_events(ctx):
    flow = ctx.report(GEMM4096.format("default.json") + " --network flow")
    packet = ctx.report(GEMM4096.format("default.json"))
    large = ctx.report(GEMM4096.format("large.json") + " --timing-only --network flow")
    return [(f"{flow['stats']['events'] / 1e3:.1f}",),
            (f"{packet['stats']['events'] / 1e6:.2f}",),
            (f"{large['stats']['events'] / 1e3:.0f}", f"{large['sim_time_ps'] / 1e9:.3f}")]


def gemm4096_large_packet(ctx):
    r = ctx.report(GEMM4096.format("large.json") + " --timing-only")
    return [(f"{r['stats']['events'] / 1e6:.0f}", f"{r['sim_time_ps'] / 1e9:.3f}")]


def large_allreduce_events(ctx):
    r = ctx.report(LARGE_ALLREDUCE)
    messages = r["stats"]["messages"]
    return [(f"{r['stats']['events'] / 1e6:.1f}", f"{messages['messages'] / 1e6:.2f}",
             str(round(messages["bytes"] / messages["messages"])), f"{r['sim_time_ps'] / 1e9:.3f}",
             f"{r['details']['collective_time_ps'] / 1e9:.3f}")]


FIGURES += [
    Values("perf-vector-add-grids", PERF, "cheap", [
        "| {} k | {} us | | Triton-style",
        "| {} k | {} us | The logical grid's programs"], vector_add_grids),
    Values("perf-bounded-events", PERF, "cheap", [
        "more events: {} k against {} k for vector_add, and {} M against {} M for "
        "attention_similarity"], bounded_events),
    Values("perf-gemm4096-events", PERF, "expensive", [
        "({} k events) |", "({} M events) |", "4 runs ({} k events, {} ms simulated)"],
        gemm4096_events),
    Values("perf-gemm4096-large-packet", PERF, "expensive", [
        "The run has {} M events and simulates {} ms."], gemm4096_large_packet),
    Values("perf-allreduce-large", PERF, "expensive", [
        "The run has {} M events for {} M messages of {} bytes on average. It simulates {} ms "
        "in all; the collective proper takes {} ms."], large_allreduce_events),
]


# ---------------------------------------------------------------------------------------------
# docs/spec-reference.md and docs/adr/0002.


def fast_ucie_mesh(ctx):
    import re
    out = ctx.output("cubesim info specs/default-fast-ucie.json")
    m = re.search(r"UCIe: the mesh delivers at most ([0-9.]+) TB/s of the ([0-9.]+) TB/s peak", out)
    if not m:
        raise ValueError("cubesim info specs/default-fast-ucie.json gives no UCIe warning; the "
                         "spec table says the mesh holds UCIe below its peak")
    return [(f"{float(m.group(1)):.1f}", f"{float(m.group(2)):.1f}")]


def adr_windows(ctx):
    gemm = ctx.report(GEMM4096.format("large.json") + " --timing-only")
    return [(f"{gemm['sim_time_ps'] / 1e9:.1f}",),
            (f"{ctx.report(LARGE_ALLREDUCE)['sim_time_ps'] / 1e9:.2f}",)]


FIGURES += [
    Values("spec-fast-ucie", "docs/spec-reference.md", "cheap",
           ["the mesh then delivers {} of the {} TB/s per side"], fast_ucie_mesh),
    Values("adr-0002-windows", "docs/adr/0002-parallel-simulation-across-sips.md", "expensive",
           ["| 4096^3 `sharded_gemm` | {} ms |", "| all-reduce | {} ms |"], adr_windows),
]


# ---------------------------------------------------------------------------------------------
# docs/validation.md: cubesim's collectives against NCCL's (tools/validate_nccl.py writes the
# CSV and plot of every size; this is its table from 16 MiB up).

def nccl_table(ctx):
    import csv

    from validate_nccl import KERNELS, arguments
    with open("docs/data/nccl-h200x4/graph.csv") as f:
        measured = [r for r in csv.DictReader(f)
                    if r["collective"] in KERNELS and int(r["bytes"]) >= 16 << 20]
    rows = []
    for m in measured:
        b = int(m["bytes"])
        d = ctx.report(" ".join(["cubesim", "run"] + arguments(m["collective"], b)))["details"]
        busbw = float(m["busbw_GBps"])
        size = f"{b >> 20} MiB" if b < 1 << 30 else f"{b >> 30} GiB"
        rows.append([m["collective"], size, f"{busbw:.0f}", f"{d['busbw_GBps']:.1f}",
                     f"{d['busbw_GBps'] / busbw:.2f}"])
    return table(["collective", "bytes per GPU", "NCCL busbw (GB/s)", "cubesim busbw (GB/s)",
                  "cubesim / NCCL"], rows)


FIGURES += [Block("validation-nccl", "docs/validation.md", "expensive", nccl_table)]


# docs/validation.md: an H200's GEMMs (cuBLAS) against cubesim's matmul on specs/h200.json, the
# fastest of the autotuner's tiles per shape (tools/validate_gpu_gemm.py writes the CSV and plot).

def gemm_h200_predictions(ctx):
    from validate_gpu_gemm import command, measured, outcome, tiles_for
    rows = []
    for (group, dtype, m, k, n), seconds in measured().items():
        runs = {t: outcome(ctx.report(command(dtype, m, k, n, t))) for t in tiles_for(m, n)}
        tile = min(runs, key=lambda t: runs[t][0])
        rows.append({"group": group, "dtype": dtype, "shape": (m, k, n), "measured_s": seconds,
                     "predicted_s": runs[tile][0], "tile": tile, "waves": runs[tile][1]})
    return rows


def gemm_h200_table(ctx):
    rows = gemm_h200_predictions(ctx)
    bf16 = {r["shape"]: r for r in rows if r["dtype"] == "bf16"}
    out = []
    for r in (r for r in rows if r["dtype"] == "f16"):
        b = bf16[r["shape"]]
        err = lambda x: f"{100 * (x['predicted_s'] / x['measured_s'] - 1):+.0f} %"
        out.append([r["group"], " x ".join(str(v) for v in r["shape"]),
                    f"{us(r['measured_s'] * 1e12, 1)} / {us(b['measured_s'] * 1e12, 1)}",
                    f"{us(r['predicted_s'] * 1e12, 1)}", f"{err(r)} / {err(b)}",
                    f"{r['tile'][0]} x {r['tile'][1]}", str(r["waves"])])
    return table(["shape", "M x K x N", "cuBLAS f16 / bf16 (us)", "cubesim (us)",
                  "error f16 / bf16", "tile", "waves"], out)


def gemm_h200_geomeans(ctx):
    from validate_gpu_gemm import geomean_error
    rows = gemm_h200_predictions(ctx)
    long = [r for r in rows if r["measured_s"] > 1e-4]
    return [(f"{100 * geomean_error(long):.1f}", str(len(long)), f"{100 * geomean_error(rows):.1f}",
             str(len(rows)))]


FIGURES += [
    Block("validation-gemm-h200", "docs/validation.md", "expensive", gemm_h200_table),
    Values("validation-gemm-h200-geomean", "docs/validation.md", "expensive", [
        "geometric-mean error is {} % over the {} GEMMs measured above 0.1 ms and {} % over all "
        "{}"], gemm_h200_geomeans),
]


# Study 5: in-network reduction. 8 SIPs of one cube of default.json on an inter-SIP switch that
# reduces, data in HBM; and four H200s (h200x4-nvlink) as NCCL runs them, ring against the
# switch (NVLS, which the GPU machine may not measure: multicast stays off there).
SW8 = ("cubesim sweep specs/default.json allreduce --set system.sips.count=8 "
       "--set system.sips.cubes_per_sip=1 --set system.inter_sip.topology=switch "
       "--set 'system.inter_sip.switch_reduction={}' -p buffer=hbm "
       "--vary param.bytes_per_pe=16384:4194304:x4 "
       "--vary param.algorithm=ring,hierarchical,tree,switch")
SW_ALGORITHMS = ["ring", "hierarchical", "tree", "switch"]
SW_SIZES = [16384, 65536, 262144, 1048576, 4194304]
H200_SWITCH = ("cubesim run specs/h200x4-nvlink.json allreduce -p ranks=sips -p channels=16 "
               "-p buffer=hbm -p algorithm={} -p bytes_per_pe={} "
               "--set 'system.inter_sip.switch_reduction={{}}' --timing-only")


def kib(n):
    return f"{n // 1048576} MiB" if n >= 1048576 else f"{n // 1024} KiB"


def switch_table(ctx):
    rows = ctx.sweep(SW8)
    t = lambda a, s: col(row(rows, **{"param.algorithm": a, "param.bytes_per_pe": s}), COLLECTIVE)
    return table(["8 SIPs, µs at bytes per PE"] + SW_ALGORITHMS + ["best ring-based / switch"],
                 [[kib(s)] + [us(t(a, s), 1) for a in SW_ALGORITHMS]
                  + [ratio(min(t(a, s) for a in SW_ALGORITHMS[:3]), t("switch", s))]
                  for s in SW_SIZES])


def switch_h200_table(ctx):
    out = []
    for per_gpu in (16 << 20, 64 << 20, 256 << 20):
        d = {a: ctx.report(H200_SWITCH.format(a, per_gpu // 16))["details"]
             for a in ("ring", "switch")}
        out.append([kib(per_gpu)] + [f"{d[a]['busbw_GBps']:.0f}" for a in ("ring", "switch")]
                   + [ratio(d["switch"]["busbw_GBps"], d["ring"]["busbw_GBps"])])
    return table(["4 x H200 spec, per GPU", "ring busbw GB/s", "switch busbw GB/s",
                  "switch / ring"], out)


FIGURES += [
    Block("whatif-switch-table", WHATIF, "expensive", switch_table),
    Block("whatif-switch-h200-table", WHATIF, "expensive", switch_h200_table),
    Plot("what-if-switch", "expensive", lambda ctx: ctx.sweep(SW8),
         columns=AR_COLUMNS, image="docs/img/what-if-switch.png",
         plot_args=AR_PLOT + ["--title",
                              "allreduce on 8 SIPs of default on a reducing switch, data in HBM"]),
]

# ---------------------------------------------------------------------------------------------
# docs/what-if.md, study 6: all-reduce, all-gather and reduce-scatter at model scale, the SIPs of
# large.json (8 of them) as the ranks, 64 KiB to 1 GiB per rank, beside the alpha-beta bound.

SCALE_TOPOLOGIES = {
    "ring": "",
    "torus": "--set system.inter_sip.topology=torus --set 'system.sips.grid=[4,2]' ",
    "switch": "--set system.inter_sip.topology=switch ",
    "switch+reduction": "--set system.inter_sip.topology=switch "
                        "--set 'system.inter_sip.switch_reduction={}' ",
}
SCALE_RANK_BYTES = [65536, 1048576, 16777216, 268435456, 1073741824]
SCALE_SIPS = 8
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "specs",
                       "large.json")) as f:
    SCALE_LINK = json.load(f)["system"]["inter_sip"]  # what the bounds are computed from


def scale_sweep(kernel, topology, channels, algorithms, buffers=("hbm",), sizes=None):
    sizes = SCALE_RANK_BYTES if sizes is None else sizes
    per_pe = ",".join(str(s // channels) for s in sizes)
    buffer = (f"-p buffer={buffers[0]} " if len(buffers) == 1
              else f"--vary param.buffer={','.join(buffers)} ")
    return (f"cubesim sweep specs/large.json {kernel} --set system.sips.count={SCALE_SIPS} "
            f"{SCALE_TOPOLOGIES[topology]}-p ranks=sips -p channels={channels} {buffer}"
            f"--network flow --vary param.bytes_per_pe={per_pe} "
            f"--vary param.algorithm={','.join(algorithms)}")


def scale_curves(kernel):
    """(topology, channels, algorithms) of each sweep of the study."""
    if kernel != "allreduce":
        return [(t, c, ["ring"]) for t in ("ring", "torus", "switch") for c in (1, 16)]
    out = []
    for t in SCALE_TOPOLOGIES:
        for c in (1, 4, 16):
            algorithms = ["ring"] + (["tree"] if c == 16 else [])
            out.append((t, c, algorithms + (["switch"] if t == "switch+reduction" else [])))
    return out


def scale_bound_ps(kernel, algorithm, topology, channels, rank_bytes):
    """The alpha-beta bound from large.json's inter-SIP links: the longer of the crossings one
    after another that a piece must make (alpha each: a link's latency; through the switch, up
    and down) and the bytes a rank must send at the rate of the links its channels use
    (channel c on connection c mod `connections`)."""
    link, n = SCALE_LINK, SCALE_SIPS
    alpha = link["latency_ns"] * 1e3 * (2 if topology.startswith("switch") else 1)
    rate = min(channels, link["connections"]) * link["bandwidth_GBps"] * 1e9 / 1e12  # B/ps
    if kernel != "allreduce":  # a ring's n - 1 steps, (n - 1) / n of the vector each way
        return max((n - 1) * alpha, (n - 1) / n * rank_bytes / rate)
    if algorithm == "ring":  # reduce-scatter then all-gather
        return max(2 * (n - 1) * alpha, 2 * (n - 1) / n * rank_bytes / rate)
    if algorithm == "tree":
        # Up and down log2 n levels; an interior rank sends the whole vector to its parent and
        # to each of its two children, over its links both ways round a ring or torus of
        # SIPs, over its one port on a switch.
        ways = 1 if topology.startswith("switch") else 2
        return max(2 * math.ceil(math.log2(n)) * alpha, rank_bytes / rate,
                   3 * rank_bytes / (ways * rate))
    return max(alpha, rank_bytes / rate)  # switch: each byte up once, its sum down once


def scale_rows(ctx, kernel):
    factor = 2 * (SCALE_SIPS - 1) / SCALE_SIPS if kernel == "allreduce" else (
        (SCALE_SIPS - 1) / SCALE_SIPS)
    out = []
    for topology, channels, algorithms in scale_curves(kernel):
        for r in ctx.sweep(scale_sweep(kernel, topology, channels, algorithms)):
            if r["status"] != "ok":
                raise ValueError(f"{kernel} {topology} x{channels}: {r['status']}: {r['error']}")
            rank = int(r["details.bytes_per_rank"])
            bound = scale_bound_ps(kernel, r["param.algorithm"], topology, channels, rank)
            out.append({"kernel": kernel, "topology": topology,
                        "curve": f"{r['param.algorithm']} x{channels}",
                        "MiB_per_rank": f"{rank / 1048576:g}",
                        "busbw_GBps": f"{float(r['details.busbw_GBps']):.1f}",
                        "bound_busbw_GBps": f"{factor * rank / bound * 1e12 / 1e9:.1f}",
                        COLLECTIVE: r[COLLECTIVE], "bound_ps": f"{bound:.0f}",
                        "panel": f"{kernel}, {topology}"})
    return out


def scale_table(ctx, kernels):
    rows = [r for k in kernels for r in scale_rows(ctx, k)]
    sizes = [f"{s / 1048576:g}" for s in SCALE_RANK_BYTES]
    keys = []
    for r in rows:
        if (r["panel"], r["curve"]) not in keys:
            keys.append((r["panel"], r["curve"]))
    body = []
    for panel, curve in keys:
        at = {r["MiB_per_rank"]: r for r in rows if r["panel"] == panel and r["curve"] == curve}
        body.append([panel, curve] + [f"{float(at[s]['busbw_GBps']):.0f} "
                                      f"({float(at[s]['bound_busbw_GBps']):.0f})"
                                      for s in sizes])
    return table(["collective, inter-SIP topology", "algorithm x channels", "64 KiB", "1 MiB",
                  "16 MiB", "256 MiB", "1 GiB"], body)


SCALE_SRAM = scale_sweep("allreduce", "ring", 16, ["ring", "tree"], ("sram", "hbm"),
                         SCALE_RANK_BYTES[:3])


def scale_sram_table(ctx):
    rows = ctx.sweep(SCALE_SRAM)
    body = []
    for s in SCALE_RANK_BYTES[:3]:
        line = [kib(s)]
        for a in ("ring", "tree"):
            for b in ("sram", "hbm"):
                line.append(us(col(row(rows, **{"param.bytes_per_pe": s // 16,
                                                "param.algorithm": a, "param.buffer": b}),
                                   COLLECTIVE), 2))
        body.append(line)
    return table(["per rank, µs", "ring, SRAM", "ring, HBM", "tree, SRAM", "tree, HBM"], body)


SCALE_COLUMNS = ["panel", "kernel", "topology", "curve", "MiB_per_rank", "busbw_GBps",
                 "bound_busbw_GBps", COLLECTIVE, "bound_ps"]
SCALE_PLOT = ["--x", "MiB_per_rank", "--lines", "curve", "--metric", "busbw_GBps",
              "--reference", "bound_busbw_GBps", "--panels", "panel", "--log-x", "--log-y"]
FIGURES += [
    Block("whatif-scale-allreduce-table", WHATIF, "expensive",
          lambda ctx: scale_table(ctx, ["allreduce"])),
    Block("whatif-scale-gather-table", WHATIF, "expensive",
          lambda ctx: scale_table(ctx, ["allgather", "reduce_scatter"])),
    Block("whatif-scale-sram-table", WHATIF, "expensive", scale_sram_table),
    Plot("what-if-scale-allreduce", "expensive", lambda ctx: scale_rows(ctx, "allreduce"),
         columns=SCALE_COLUMNS, image="docs/img/what-if-scale-allreduce.png",
         plot_args=SCALE_PLOT + ["--title", "allreduce between 8 SIPs of large.json, data in "
                                 "HBM: bus bandwidth per rank, alpha-beta bound dotted"]),
    Plot("what-if-scale-gather", "expensive",
         lambda ctx: scale_rows(ctx, "allgather") + scale_rows(ctx, "reduce_scatter"),
         columns=SCALE_COLUMNS, image="docs/img/what-if-scale-gather.png",
         plot_args=SCALE_PLOT + ["--title", "allgather and reduce_scatter between 8 SIPs of "
                                 "large.json, data in HBM, alpha-beta bound dotted"]),
]


# ---------------------------------------------------------------------------------------------
# docs/validation.md: an H200's host copies (pinned cudaMemcpy, docs/data/host-copy-h200/)
# against system.host of specs/h200.json. cubesim times a kernel's declared buffers: vector_add
# with n = S / 8 writes two inputs of S / 2 bytes, moved at once (S bytes to the device); with
# n = S / 4 it reads back one output of S bytes.

def host_copy_rows(ctx):
    import csv
    runs = {}
    for name in ("run1.csv", "run2.csv"):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "host-copy-h200",
                               name)) as f:
            for r in csv.DictReader(f):
                if r["how"] == "back_to_back":
                    runs.setdefault((r["direction"], int(r["bytes"])), []).append(
                        float(r["median_s"]))
    rows = []
    for (direction, size), seconds in runs.items():
        n = size // 8 if direction == "to_device" else size // 4
        report = ctx.report(f"cubesim run specs/h200.json vector_add -p n={n} --host "
                            "--timing-only --network flow")
        predicted = report["host"][direction]["time_ps"] * 1e-12
        rows.append({"direction": direction, "bytes": size, "measured_s": sum(seconds) / len(seconds),
                     "predicted_s": predicted})
    return rows


def size_text(b):
    return f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def host_copy_table(ctx):
    rows = host_copy_rows(ctx)
    by = {(r["direction"], r["bytes"]): r for r in rows}
    out = []
    for size in sorted({r["bytes"] for r in rows}):
        cells = [size_text(size)]
        for d in ("to_device", "to_host"):
            r = by[(d, size)]
            cells += [f"{r['measured_s'] * 1e6:.1f}", f"{r['predicted_s'] * 1e6:.1f}",
                      f"{100 * (r['predicted_s'] / r['measured_s'] - 1):+.0f} %"]
        out.append(cells)
    return table(["copy", "to device: measured (us)", "cubesim (us)", "error",
                  "to host: measured (us)", "cubesim (us)", "error"], out)


def host_copy_worst(ctx):
    rows = [r for r in host_copy_rows(ctx) if r["bytes"] >= 1 << 20]
    worst = max(abs(r["predicted_s"] / r["measured_s"] - 1) for r in rows)
    return [(f"{100 * worst:.1f}", str(len(rows)))]


FIGURES += [
    Block("validation-host-copy-h200", "docs/validation.md", "cheap", host_copy_table),
    Values("validation-host-copy-h200-worst", "docs/validation.md", "cheap",
           ["within {} % of every one of the {} copies of 1 MiB and more"], host_copy_worst),
]
