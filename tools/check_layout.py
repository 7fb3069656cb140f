#!/usr/bin/env python3
"""Checks the source tree's layering and function sizes (DESIGN.md's layers, issue 36):

  (a) no #include runs from a lower layer up to a higher one (LAYERS, lowest first), and within
      a layer none runs from a lower sub-folder up to a higher one (SUBLAYERS);
  (b) no function of LENGTH_CHECKED is longer than --max-lines lines (measured with
      universal-ctags: from the line of its name to its closing brace).

Exit status: 0 clean; 1 findings (each printed as FILE:LINE: what, and how to fix it); 2 usage
error or universal-ctags missing. --allow FILE:FUNCTION names a function that may stay long for
now; an allowed function that is no longer long is a finding too, so the list stays exact.
Run by ctest (tests/layout/CMakeLists.txt); tests/layout/test_check_layout.py tests the script.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# The layers, lowest first: a file may include files of its own layer and of lower ones only.
LAYERS = ["emu", "components", "triton_emu", "kernels", "tools/cubesim"]

# Within a layer, sub-folders in order, lowest first ("." is the layer's own folder): a file may
# include files of its own sub-folder and of lower ones only. Sub-folders not listed are not
# ordered (triton_emu/include/ is the public header, which gathers every part).
SUBLAYERS = {
    "triton_emu": [".", "backends", "memory", "tile", "api", "checks", "gemm", "ops", "launch"],
}

# The folders whose functions are measured.
LENGTH_CHECKED = ["triton_emu", "kernels"]

SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def layer_of(path, layers):
    """The layer folder that `path` (relative to the root) lies in, or None."""
    best = None
    for layer in layers:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def sublayer_of(path, layer):
    """The sub-folder of `layer` that `path` lies in ("." for the layer's own folder)."""
    rest = path[len(layer) + 1:]
    return rest.split("/", 1)[0] if "/" in rest else "."


def source_files(root, folders):
    for folder in folders:
        top = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def include_findings(root, layers, sublayers):
    """Includes that run upward: across layers, or across a layer's ordered sub-folders."""
    findings = []
    rank = {layer: i for i, layer in enumerate(layers)}
    for path in source_files(root, layers):
        here = layer_of(path, layers)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                there = layer_of(target, layers)
                if there is None:
                    continue
                if rank[there] > rank[here]:
                    findings.append(
                        f"{path}:{number}: includes {target}: layer {here} may not include the "
                        f"higher layer {there} (layers, lowest first: {' < '.join(layers)}); "
                        f"move what it needs down to {here} or below, or pass it in")
                    continue
                order = sublayers.get(here) or []
                if there != here or not order:
                    continue
                mine, theirs = sublayer_of(path, here), sublayer_of(target, here)
                if mine in order and theirs in order and order.index(theirs) > order.index(mine):
                    findings.append(
                        f"{path}:{number}: includes {target}: in {here}/, sub-folder {mine} may "
                        f"not include the higher sub-folder {theirs} (lowest first: "
                        f"{' < '.join(order)}); move what it needs down, or pass it in")
    return findings


def require_ctags():
    """The universal-ctags executable; exits 2 with what to install when it is missing."""
    ctags = shutil.which("ctags")
    version = ""
    if ctags:
        version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if not ctags or "Universal Ctags" not in version:
        found = f"'{ctags}' is not universal-ctags" if ctags else "no ctags on PATH"
        print(f"check_layout: function lengths need universal-ctags ({found}); install the "
              "Debian package universal-ctags (tools/install-deps.sh does)", file=sys.stderr)
        sys.exit(2)
    return ctags


def functions(root, folders, ctags):
    """(file, name, first line, last line) of every function definition in `folders`."""
    present = [f for f in folders if os.path.isdir(os.path.join(root, f))]
    if not present:
        return []
    out = subprocess.run(
        [ctags, "-R", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "-o", "-"] + present,
        cwd=root, capture_output=True, text=True, check=True).stdout
    result = []
    for line in out.splitlines():
        name, path = line.split("\t", 2)[:2]
        fields = dict(f.split(":", 1) for f in line.rsplit(';"\t', 1)[-1].split("\t") if ":" in f)
        if "line" in fields and "end" in fields:
            result.append((path, name, int(fields["line"]), int(fields["end"])))
    return result


def length_findings(root, folders, max_lines, allow, ctags):
    findings = []
    long_ones = set()
    for path, name, first, last in sorted(functions(root, folders, ctags)):
        lines = last - first + 1
        if lines <= max_lines:
            continue
        key = f"{path}:{name}"
        long_ones.add(key)
        if key in allow:
            continue
        findings.append(f"{path}:{first}: function {name} is {lines} lines, more than "
                        f"{max_lines}; split it into named steps")
    for key in sorted(allow - long_ones):
        findings.append(f"{key}: allowed to be long (--allow) but no longer over {max_lines} "
                        "lines (or gone); remove it from the allow-list")
    return findings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the source tree (default: this script's repository)")
    parser.add_argument("--max-lines", type=int, default=80,
                        help="the longest a function may be (default 80)")
    parser.add_argument("--allow", action="append", default=[], metavar="FILE:FUNCTION",
                        help="a function that may stay long for now, e.g. "
                             "triton_emu/ops/composite_gemm.cpp:start_gemm (repeatable)")
    args = parser.parse_args(argv)
    for entry in args.allow:
        if ":" not in entry:
            parser.error(f"--allow {entry}: expected FILE:FUNCTION, e.g. "
                         "triton_emu/ops/composite_gemm.cpp:start_gemm")
    if not os.path.isdir(args.root):
        parser.error(f"--root {args.root}: no such folder")
    ctags = require_ctags()
    findings = include_findings(args.root, LAYERS, SUBLAYERS)
    findings += length_findings(args.root, LENGTH_CHECKED, args.max_lines, set(args.allow), ctags)
    for f in findings:
        print(f)
    if findings:
        print(f"check_layout: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
