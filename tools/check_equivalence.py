#!/usr/bin/env python3
"""Checks that two cubesim builds simulate the same thing: the JSON report (less its wall-clock
fields) and the Perfetto trace of every shipped kernel on tiny.json, default.json and
large.json (timing-only), with the packet and the flow network, byte for byte.

A refactor that must not change simulated behaviour (issue 36) runs it with the binary built
before and the one built after:

    tools/check_equivalence.py --before /tmp/old/cubesim --after build/release/bin/cubesim

or records one build's outputs and compares another's with them later:

    tools/check_equivalence.py --record /tmp/baseline --after OLD_BINARY
    tools/check_equivalence.py --against /tmp/baseline --after build/release/bin/cubesim

Exit 0 when every run matches, 1 listing the runs that differ (and the first differing line of
each), 2 for a bad command line or a run that failed in one build but not the other.
Standard library only.
"""

import argparse
import concurrent.futures
import difflib
import json
import os
import subprocess
import sys
import tempfile

# Fields of the report that measure the host, not the simulation.
WALL_CLOCK = {"wall_seconds", "harness_wall_seconds", "events_per_second"}

SPECS = {
    # spec: (extra arguments, trace?) -- large.json's traces would be gigabytes.
    "tiny": ([], True),
    "default": (["--timing-only"], True),
    "large": (["--timing-only"], False),
}
NETWORKS = ["packet", "flow"]


def kernels(binary):
    out = subprocess.run([binary, "list", "--json"], check=True, capture_output=True, text=True)
    return [k["name"] for k in json.loads(out.stdout)]


def strip(value):
    """The report without its wall-clock fields, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in WALL_CLOCK}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def run_one(binary, root, case, folder):
    """Runs one case into `folder`: report.json (stripped, canonical), trace.json, exit code."""
    spec, kernel, network = case
    extra, traced = SPECS[spec]
    os.makedirs(folder, exist_ok=True)
    # Paths relative to the case's folder, so that the report names the same files in both.
    report = os.path.join(folder, "raw-report.json")
    argv = [binary, "--quiet", "run", os.path.join(root, "specs", spec + ".json"), kernel,
            "--network", network, "--json", "raw-report.json"] + extra
    if traced:
        argv += ["--trace", "trace.json"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=folder)
    with open(os.path.join(folder, "exit_code"), "w") as f:
        f.write(f"{done.returncode}\n")
        # A refused run's message is its output: it must not change either.
        if done.returncode != 0:
            f.write(done.stderr)
    if os.path.exists(report):
        with open(report) as f:
            stripped = strip(json.load(f))
        with open(os.path.join(folder, "report.json"), "w") as f:
            json.dump(stripped, f, indent=1, sort_keys=True)
        os.remove(report)
    return done.returncode


def record(binary, root, cases, out, jobs):
    def one(case):
        return case, run_one(binary, root, case, os.path.join(out, *case))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for n, (case, code) in enumerate(pool.map(one, cases), 1):
            print(f"  [{n}/{len(cases)}] {binary}: {' '.join(case)} -> exit {code}",
                  file=sys.stderr, flush=True)


def first_difference(a, b):
    with open(a, errors="replace") as fa, open(b, errors="replace") as fb:
        for line in difflib.unified_diff(fa.readlines(), fb.readlines(), a, b, n=0):
            if line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
                return line.rstrip()[:300]
    return "(they differ in size only)"


def compare(before, after, cases):
    differ = []
    for case in cases:
        for name in ["exit_code", "report.json", "trace.json"]:
            a, b = os.path.join(before, *case, name), os.path.join(after, *case, name)
            if not os.path.exists(a) and not os.path.exists(b):
                continue
            if not (os.path.exists(a) and os.path.exists(b)):
                differ.append((case, name, "present in one build only"))
                continue
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    differ.append((case, name, first_difference(a, b)))
    return differ


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--after", required=True, help="the cubesim binary under test")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--before", help="the cubesim binary to compare with")
    source.add_argument("--against", help="a folder --record wrote, to compare with")
    source.add_argument("--record", help="only record --after's outputs into this folder")
    parser.add_argument("--specs", default=",".join(SPECS), help="of " + ", ".join(SPECS))
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument("--kernels", default="", help="comma-separated (default: every kernel)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository (its specs/)")
    a = parser.parse_args()
    for b in [a.after, a.before]:
        if b and not os.access(b, os.X_OK):
            parser.error(f"{b}: not an executable cubesim")
    specs = [s for s in a.specs.split(",") if s]
    for s in specs:
        if s not in SPECS:
            parser.error(f"--specs {s}: one of {', '.join(SPECS)}")
    networks = [n for n in a.networks.split(",") if n]
    names = [k for k in a.kernels.split(",") if k] or kernels(a.after)
    cases = [(s, k, n) for s in specs for k in names for n in networks]

    after = a.record or tempfile.mkdtemp(prefix="equivalence-after-")
    record(os.path.abspath(a.after), a.root, cases, os.path.abspath(after), a.jobs)
    if a.record:
        print(f"{len(cases)} runs recorded in {a.record}")
        return 0
    before = a.against
    if a.before:
        before = tempfile.mkdtemp(prefix="equivalence-before-")
        record(os.path.abspath(a.before), a.root, cases, before, a.jobs)
    differ = compare(before, after, cases)
    for case, name, line in differ:
        print(f"{' '.join(case)}: {name} differs: {line}")
    print(f"{len(cases)} runs compared ({before} against {after}): "
          f"{len({d[0] for d in differ})} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
