#!/usr/bin/env python3
"""Plots a `cubesim sweep` CSV: a metric against one varied field, one line per value of a
second, one panel per value of a third.

    plot_sweep.py results.csv plot.svg --x system.ucie.bandwidth_GBps --lines kernel \\
        [--panels system.sips.cubes_per_sip] [--metric sim_time_ps] [--title TEXT] [--log-x] [--log-y]
        [--reference details.model_time_ps]
    plot_sweep.py --check        # exits 0 when matplotlib can be imported

`cubesim sweep --plot FILE` runs it with the sweep's first three varied fields. The format
follows the extension (.png or .svg). Rows whose metric is empty (failed points) are left out.
--reference draws a second column (a model's prediction) dotted, in each line's colour.
Needs matplotlib (Debian: python3-matplotlib; tools/install-deps.sh installs it).
"""

import argparse
import csv
import math
import sys


MARKERS = ["o", "s", "^", "D", "v", "x"]
STYLES = ["-", "--", ":", "-."]


def number(text):
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def time_unit(max_ps):
    for unit, scale in (("s", 1e12), ("ms", 1e9), ("µs", 1e6), ("ns", 1e3)):
        if max_ps >= scale:
            return unit, scale
    return "ps", 1.0


def si_unit(max_value):
    for prefix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6),
                          ("k", 1e3)):
        if max_value >= scale:
            return prefix, scale
    return "", 1.0


LABELS = {
    "sim_time_ps": "simulated time",
    "achieved_flops_per_second": "achieved FLOP/s",
    "achieved_bytes_per_second": "achieved B/s",
    "peak_fraction": "fraction of peak FLOP/s",
    "busiest_link_utilisation": "busiest link utilisation",
    "wall_seconds": "wall time (s)",
    "details.pairs_per_second": "(query, key) pairs per second",
    "latency_ps": "latency",
    "offered_load": "offered load (fraction of the bound)",
}


def metric_axis(metric, values):
    """(label, scale) for the y axis."""
    top = max((abs(v) for v in values), default=0.0)
    name = LABELS.get(metric, metric[len("details."):] if metric.startswith("details.") else metric)
    if metric.endswith("_GBps"):
        return f"{name[:-len('_GBps')]} (GB/s)", 1.0
    if metric.endswith("_ps"):
        unit, scale = time_unit(top)
        return f"{name} ({unit})", scale
    if metric in ("peak_fraction", "busiest_link_utilisation", "wall_seconds") or top < 1e3:
        return name, 1.0
    prefix, scale = si_unit(top)
    return f"{name} ({prefix})" if prefix else name, scale


def geometric(xs):
    xs = sorted(set(xs))
    if len(xs) < 3 or xs[0] <= 0:
        return False
    ratios = [b / a for a, b in zip(xs, xs[1:])]
    return max(ratios) / min(ratios) < 1.01 and ratios[0] > 1.5


def nominal(texts):
    """Whether x values read as chosen settings (0.05, 512, 1e3), not as measurements
    (0.0498123): only those are worth a tick label each."""
    def digits(t):
        mantissa = t.lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0")
        return len(mantissa.rstrip("0")) if "." in t else len(mantissa)
    return all(digits(t) <= 4 for t in texts)


def label_log_axis(axis):
    """Plain numbers at the decades and at 2 and 5 between them, so a log axis that spans less
    than a decade, or a few, still reads."""
    from matplotlib.ticker import FuncFormatter, LogLocator
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(plain)
    axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_minor_formatter(plain)


def ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--x")
    ap.add_argument("--lines")
    ap.add_argument("--panels")
    ap.add_argument("--metric", default="sim_time_ps")
    ap.add_argument("--reference", help="a column drawn dotted beside each metric line")
    ap.add_argument("--title", default="")
    ap.add_argument("--log-x", action="store_true",
                    help="logarithmic x axis (sizes chosen unevenly over decades)")
    ap.add_argument("--log-y", action="store_true",
                    help="logarithmic y axis (latency against load spans decades)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    if a.check:
        print("matplotlib", matplotlib.__version__)
        return 0
    if not a.csv or not a.out:
        ap.error("give the CSV file and the output file")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: small, searchable SVGs
    plt.rcParams["svg.hashsalt"] = "cubesim"  # the same data gives the same file

    with open(a.csv, newline="") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        rows = list(reader)
    x_field = a.x or (columns[1] if len(columns) > 1 else None)
    for role, field in (("--x", x_field), ("--lines", a.lines), ("--panels", a.panels),
                        ("--metric", a.metric), ("--reference", a.reference)):
        if field and field not in columns:
            sys.exit(f"plot_sweep.py: {role} {field}: no such column in {a.csv}; "
                     f"the columns are: {', '.join(columns)}")
    rows = [r for r in rows if number(r.get(a.metric)) is not None]
    if not rows:
        sys.exit(f"plot_sweep.py: no point has a value of {a.metric} (did every point fail?)")

    xs_text = ordered(r[x_field] for r in rows)
    numeric_x = all(number(x) is not None for x in xs_text)
    position = {x: (number(x) if numeric_x else i) for i, x in enumerate(xs_text)}
    values = [number(r[a.metric]) for r in rows]
    if a.reference:
        values += [v for v in (number(r[a.reference]) for r in rows) if v is not None]
    ylabel, yscale = metric_axis(a.metric, values)
    panels = ordered(r[a.panels] for r in rows) if a.panels else [None]

    ncols = len(panels) if len(panels) <= 3 else math.ceil(math.sqrt(len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols + 1.0, 3.6 * nrows + 0.6),
                             sharey=True, squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    for ax, panel in zip(flat, panels):
        subset = [r for r in rows if panel is None or r[a.panels] == panel]
        series = ordered(r[a.lines] for r in subset) if a.lines else [None]
        for i, s in enumerate(series):
            pts = sorted((position[r[x_field]], number(r[a.metric]) / yscale)
                         for r in subset if s is None or r[a.lines] == s)
            label = f"{a.lines}={s}" if s is not None else None
            # Styles differ as well as colours, so lines that coincide stay visible.
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[i % len(MARKERS)],
                    markersize=4, linestyle=STYLES[i % len(STYLES)], color=f"C{i % 10}",
                    label=label)
            if a.reference:
                ref = sorted((position[r[x_field]], number(r[a.reference]) / yscale)
                             for r in subset if (s is None or r[a.lines] == s)
                             and number(r[a.reference]) is not None)
                ax.plot([p[0] for p in ref], [p[1] for p in ref], linestyle=":", linewidth=2.2,
                        alpha=0.6, color=f"C{i % 10}",
                        label=f"{a.reference} (dotted)" if i == 0 else None)
        if numeric_x and (a.log_x or geometric([position[x] for x in xs_text])):
            ax.set_xscale("log", base=2)
        if numeric_x:
            # A tick at each point only for a few chosen values; measured ones (a traffic
            # sweep's offered loads) keep the axis's own round ticks, whose labels do not
            # run into each other.
            ticks = [position[x] for x in xs_text]
            if len(ticks) <= 12 and nominal(xs_text):
                ax.set_xticks(ticks)
                ax.set_xticklabels(xs_text)
                ax.minorticks_off()
        else:
            ax.set_xticks(range(len(xs_text)))
            ax.set_xticklabels(xs_text)
        ax.set_xlabel(LABELS.get(x_field, x_field))
        ax.grid(True, alpha=0.3)
        if panel is not None:
            ax.set_title(f"{a.panels}={panel}", fontsize=10)
        if a.lines:
            ax.legend(fontsize=8)
    for row in axes:
        row[0].set_ylabel(ylabel)
    if a.log_y:
        for ax in flat:
            ax.set_yscale("log")
            label_log_axis(ax.yaxis)
    else:
        axes[0][0].set_ylim(bottom=0)
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    metadata = {"Date": None} if a.out.lower().endswith(".svg") else {"Software": None}
    fig.savefig(a.out, metadata=metadata, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
