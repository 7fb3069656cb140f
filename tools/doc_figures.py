#!/usr/bin/env python3
"""Keeps the simulated figures of the docs equal to what cubesim prints.

    doc_figures.py --check [--cheap] [--binary PATH] [NAME_REGEX...]
    doc_figures.py --update [--cheap] [--binary PATH] [NAME_REGEX...]
    doc_figures.py --list

The figures are listed in docs/data/figures.py (the manifest): each names the cubesim
commands it comes from, whether they are cheap or expensive to run, and how their output
becomes text. Three kinds:

- a block: the markdown between `<!-- figure: NAME -->` and `<!-- /figure -->` (a block of
  program output, a table) is the figure's text, whole;
- values: numbers in prose, found by a template (`takes {} us, of which`), each `{}` a number
  the figure computes;
- a plot: a sweep's results, kept as docs/data/NAME.csv (checked), drawn into docs/img by
  tools/plot_sweep.py (redrawn by --update).

--check re-runs the commands and lists every figure whose text differs, with its file, line
and commands (exit 1; 0 when all are current; 2 when the manifest, a marker or a command is
wrong). --update rewrites the stale figures in place. Simulated results are deterministic, so
the comparison is exact, except for spans the figure names volatile (wall-clock times, the
host's memory), which are compared as placeholders and left as they are while the rest is
current. Python 3 standard library only (plots need matplotlib, for --update only).
"""

import argparse
import csv
import difflib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # --root replaces it
OPEN = re.compile(r"^<!-- figure: ([A-Za-z0-9_.-]+) -->\n", re.M)
CLOSE = "<!-- /figure -->\n"
COSTS = ("cheap", "expensive")


class ManifestError(Exception):
    """The manifest, a marker or a command is wrong: not a stale figure, a broken one."""


# ---------------------------------------------------------------------------------------------
# What the manifest declares.


class Figure:
    def __init__(self, name, file, cost, render, volatile=()):
        if cost not in COSTS:
            raise ManifestError(f"figure {name}: cost must be one of {COSTS}, not {cost!r}")
        self.name, self.file, self.cost, self.render = name, file, cost, render
        self.volatile = [re.compile(v, re.M) for v in volatile]


class Block(Figure):
    """The text between the figure's markers, whole: render(ctx) returns it."""


class Values(Figure):
    """Numbers in prose: `templates` are texts of the file with `{}` where a number stands;
    render(ctx) returns one tuple of strings per template, one string per `{}`. Spaces in a
    template match any run of whitespace (prose wraps), and each must match exactly once."""

    def __init__(self, name, file, cost, templates, render):
        super().__init__(name, file, cost, render)
        self.templates = list(templates)
        self.patterns = [template_regex(name, t) for t in self.templates]


class Plot(Figure):
    """A sweep's rows (columns `columns`) kept in docs/data/NAME.csv, drawn into `image` by
    tools/plot_sweep.py with `plot_args`. render(ctx) returns the rows (lists of dicts)."""

    def __init__(self, name, cost, render, columns, image, plot_args):
        super().__init__(name, os.path.join("docs", "data", name + ".csv"), cost, render)
        self.columns, self.image, self.plot_args = columns, image, plot_args


NUMBER = r"([-+]?[0-9][0-9,]*(?:\.[0-9]+)?)"


def template_regex(name, template):
    parts = template.split("{}")
    if len(parts) < 2:
        raise ManifestError(f"figure {name}: template {template!r} has no {{}}")
    out = []
    for i, part in enumerate(parts):
        out.append(r"\s+".join(re.escape(w) for w in re.split(r"\s+", part)))
        if i + 1 < len(parts):
            out.append(NUMBER)
    return re.compile("".join(out))


# ---------------------------------------------------------------------------------------------
# Running commands. A command is written as the docs show it, `cubesim ...`, from the
# repository root; every command runs once per invocation of this script, whatever the number
# of figures that use it.


class Context:
    def __init__(self, binary, tmp):
        self.binary, self.tmp = binary, tmp
        self.cache, self.seconds = {}, {}
        self.used = []  # the commands of the figure being rendered

    def _argv(self, command):
        argv = shlex.split(command)
        if not argv or argv[0] != "cubesim":
            raise ManifestError(f"command {command!r} does not begin with cubesim")
        return [self.binary] + argv[1:]

    def _folder(self, files):
        """The folder a command runs in: the repository, or for an example about files of the
        reader's (`files`: {name: text}) a fresh folder holding them, where `specs` is the
        repository's, so `specs/tiny.json` and a file's `"extends": "specs/tiny.json"` work."""
        if not files:
            return ROOT
        folder = tempfile.mkdtemp(prefix="files-", dir=self.tmp)
        os.symlink(os.path.join(ROOT, "specs"), os.path.join(folder, "specs"))
        for name, text in files.items():
            if os.path.isabs(name) or ".." in name.split("/") or name.split("/")[0] == "specs":
                raise ManifestError(f"file {name!r}: give a relative path outside specs/")
            if not text.endswith("\n"):
                raise ManifestError(f"file {name!r}: end its text with a newline")
            full = os.path.join(folder, name)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        return folder

    def _exec(self, key, argv, command, ok_codes, files=None):
        if key not in self.cache:
            start = time.monotonic()
            p = subprocess.run(argv, cwd=self._folder(files), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, COLUMNS="100"))
            self.seconds[command] = self.seconds.get(command, 0) + time.monotonic() - start
            if p.returncode not in ok_codes:
                raise ManifestError(f"`{command}` exited with {p.returncode}, not {ok_codes}:\n"
                                    + p.stdout[-2000:])
            self.cache[key] = p
        if command not in self.used:
            self.used.append(command)
        return self.cache[key]

    def output(self, command, exit_code=0, files=None):
        """stdout and stderr together, as a terminal shows them. With `files` ({name: text}),
        the command runs in a fresh folder holding those files (and the repository's specs/)."""
        key = ("output", command, tuple(sorted((files or {}).items())))
        return self._exec(key, self._argv(command), command, (exit_code,), files).stdout

    def session(self, command, exit_code=0, files=None):
        """A block of program output as the docs show it: the prompt, the command, its output.
        With `files`, each is shown first, as `$ cat NAME` and its text."""
        shown = "".join(f"$ cat {name}\n{text}" for name, text in (files or {}).items())
        return ("```\n" + shown + "$ " + command + "\n" + self.output(command, exit_code, files)
                + "```\n")

    def report(self, command):
        """The --json report of a `cubesim run` command."""
        path = os.path.join(self.tmp, f"report{len(self.cache)}.json")
        key = ("report", command)
        if key not in self.cache:
            self._exec(key, self._argv(command) + ["--json", path], command, (0,))
            with open(path) as f:
                self.cache[key].report = json.load(f)
        elif command not in self.used:
            self.used.append(command)
        return self.cache[key].report

    def sweep(self, command):
        """The rows of a `cubesim sweep` command (its --csv), as dicts of strings. --out, --plot
        and --csv in the command as written are dropped: the plots are Plot figures."""
        argv = self._argv(command)
        kept = [argv[0]]
        i = 1
        while i < len(argv):
            if argv[i] in ("--out", "--plot", "--csv"):
                i += 2
                continue
            kept.append(argv[i])
            i += 1
        path = os.path.join(self.tmp, f"sweep{len(self.cache)}.csv")
        key = ("sweep", command)
        if key not in self.cache:
            self._exec(key, kept + ["--csv", path], command, (0, 2))
            with open(path, newline="") as f:
                self.cache[key].rows = list(csv.DictReader(f))
        elif command not in self.used:
            self.used.append(command)
        return self.cache[key].rows


# ---------------------------------------------------------------------------------------------
# Reading and writing the figures.


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def write(path, text):
    full = os.path.join(ROOT, path)
    with open(full + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(full + ".tmp", full)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def find_block(text, fig):
    """(start, end) of the text between the figure's markers."""
    opens = [m for m in OPEN.finditer(text) if m.group(1) == fig.name]
    if len(opens) != 1:
        raise ManifestError(f"{fig.file}: {len(opens)} `<!-- figure: {fig.name} -->` markers; "
                            "a block figure needs exactly one")
    start = opens[0].end()
    end = text.find(CLOSE, start)
    nxt = OPEN.search(text, start)
    if end < 0 or (nxt and nxt.start() < end):
        raise ManifestError(f"{fig.file}:{line_of(text, start)}: figure {fig.name} has no "
                            f"`{CLOSE.strip()}` before the next marker")
    return start, end


def masked(fig, text):
    for v in fig.volatile:
        text = v.sub(lambda m: "<volatile>", text)
    return text


def csv_text(fig, rows):
    from io import StringIO
    out = StringIO()
    w = csv.DictWriter(out, fieldnames=fig.columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow(row)
    return out.getvalue()


class Stale:
    def __init__(self, fig, line, commands, old, new, apply):
        self.fig, self.line, self.commands, self.old, self.new = fig, line, commands, old, new
        self.apply = apply  # rewrites the figure in place


def examine(fig, ctx):
    """Renders the figure; returns a Stale when the docs differ from it, else None."""
    ctx.used = []
    if isinstance(fig, Plot):
        rows = fig.render(ctx)
        new = csv_text(fig, rows)
        path = os.path.join(ROOT, fig.file)
        old = read(fig.file) if os.path.exists(path) else ""
        image = os.path.join(ROOT, fig.image)
        if old == new and os.path.exists(image):
            return None

        def apply():
            # The CSV is written only once its image is drawn, so a failed plot stays stale.
            plot(fig, new)
            write(fig.file, new)

        return Stale(fig, 1, list(ctx.used), old, new, apply)

    text = read(fig.file)
    if isinstance(fig, Block):
        start, end = find_block(text, fig)
        new = fig.render(ctx)
        if not new.endswith("\n"):
            new += "\n"
        old = text[start:end]
        if masked(fig, old) == masked(fig, new):
            return None
        return Stale(fig, line_of(text, start), list(ctx.used), old, new,
                     lambda: write(fig.file, splice(fig, new)))

    values = fig.render(ctx)
    if len(values) != len(fig.patterns):
        raise ManifestError(f"figure {fig.name}: {len(fig.patterns)} templates but render "
                            f"gave {len(values)} tuples")
    olds, news, first_line, edits = [], [], None, []
    for template, pattern, value in zip(fig.templates, fig.patterns, values):
        value = (value,) if isinstance(value, str) else tuple(value)
        matches = list(pattern.finditer(text))
        if len(matches) != 1:
            raise ManifestError(f"{fig.file}: figure {fig.name}: the template {template!r} "
                                f"matches {len(matches)} times; it must match once")
        m = matches[0]
        if len(value) != pattern.groups:
            raise ManifestError(f"figure {fig.name}: {template!r} has {pattern.groups} "
                                f"numbers, render gave {len(value)}")
        current = m.groups()
        if current != value:
            if first_line is None:
                first_line = line_of(text, m.start())
            olds.append(f"line {line_of(text, m.start())}: " + ", ".join(current))
            news.append(f"line {line_of(text, m.start())}: " + ", ".join(value))
            for g, v in enumerate(value, 1):
                if m.group(g) != v:
                    edits.append((m.start(g), m.end(g), v))
    if not edits:
        return None

    def apply_values():
        t = read(fig.file)
        if t != text:
            raise ManifestError(f"{fig.file} changed while its figures were being updated")
        for s, e, v in sorted(edits, reverse=True):
            t = t[:s] + v + t[e:]
        write(fig.file, t)

    return Stale(fig, first_line, list(ctx.used), "\n".join(olds) + "\n",
                 "\n".join(news) + "\n", apply_values)


def splice(fig, new):
    text = read(fig.file)
    start, end = find_block(text, fig)
    return text[:start] + new + text[end:]


def python_with_matplotlib():
    """The Python `cubesim sweep --plot` uses: $CUBESIM_PYTHON, else Debian's /usr/bin/python3
    (where python3-matplotlib installs), else this one."""
    return os.environ.get("CUBESIM_PYTHON") or (
        "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable)


def plot(fig, csv_rows):
    script = os.path.join(ROOT, "tools", "plot_sweep.py")
    with tempfile.TemporaryDirectory(prefix="doc-figures-plot-") as tmp:
        data = os.path.join(tmp, os.path.basename(fig.file))
        with open(data, "w", encoding="utf-8") as f:
            f.write(csv_rows)
        p = subprocess.run([python_with_matplotlib(), script, data,
                            os.path.join(ROOT, fig.image)] + list(fig.plot_args),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise ManifestError(f"the plot {fig.image} failed (the CSV is left as it was):\n"
                            f"{p.stdout}")


def docs():
    """README.md and docs/*.md: the files whose markers must each have a figure."""
    folder = os.path.join(ROOT, "docs")
    return [p for p in ["README.md"] if os.path.exists(os.path.join(ROOT, p))] + sorted(
        os.path.join("docs", f) for f in os.listdir(folder) if f.endswith(".md"))


def load_manifest():
    sys.modules.setdefault("doc_figures", sys.modules[__name__])
    path = os.path.join(ROOT, "docs", "data", "figures.py")
    spec = importlib.util.spec_from_file_location("figures_manifest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = module.FIGURES
    names = [f.name for f in figures]
    twice = {n for n in names if names.count(n) > 1}
    if twice:
        raise ManifestError(f"{path}: figures named twice: {sorted(twice)}")
    return figures


def unknown_markers(figures):
    """Markers in the docs that no Block of the manifest owns."""
    owned = {(f.file, f.name) for f in figures if isinstance(f, Block)}
    problems = []
    for path in docs():
        text = read(path)
        for m in OPEN.finditer(text):
            if (path, m.group(1)) not in owned:
                problems.append(f"{path}:{line_of(text, m.start())}: marker of figure "
                                f"{m.group(1)}, which docs/data/figures.py does not list")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="re-run and list stale figures")
    mode.add_argument("--update", action="store_true", help="rewrite stale figures in place")
    mode.add_argument("--list", action="store_true", help="list the figures and their cost")
    ap.add_argument("--cheap", action="store_true", help="only the figures marked cheap")
    ap.add_argument("--binary", help="the cubesim to run (default: build/release/bin/cubesim)")
    ap.add_argument("--root", help="the repository (default: the one holding this script)")
    ap.add_argument("--times", action="store_true", help="print each command's wall time")
    ap.add_argument("names", nargs="*", help="only figures whose name matches one of these")
    a = ap.parse_args(argv)
    global ROOT
    if a.root:
        ROOT = os.path.abspath(a.root)
    binary = a.binary or os.path.join(ROOT, "build", "release", "bin", "cubesim")

    try:
        figures = load_manifest()
        problems = unknown_markers(figures)
        if problems:
            raise ManifestError("\n".join(problems))
    except ManifestError as e:
        print(f"doc_figures: {e}", file=sys.stderr)
        return 2
    chosen = [f for f in figures
              if (not a.cheap or f.cost == "cheap")
              and (not a.names or any(re.search(n, f.name) for n in a.names))]
    if a.list:
        for f in figures:
            print(f"{f.name:36} {f.cost:9} {type(f).__name__:6} {f.file}")
        return 0
    if not os.access(binary, os.X_OK):
        print(f"doc_figures: no cubesim at {binary}; build it (cmake --build --preset release) "
              "or pass --binary PATH", file=sys.stderr)
        return 2

    stale, broken = [], []
    with tempfile.TemporaryDirectory(prefix="doc-figures-") as tmp:
        ctx = Context(os.path.abspath(binary), tmp)
        for fig in chosen:
            try:
                s = examine(fig, ctx)
            except ManifestError as e:
                broken.append(f"{fig.name}: {e}")
                continue
            except Exception as e:  # a render function's own error: name the figure, go on
                broken.append(f"{fig.name}: its render function failed: "
                              f"{type(e).__name__}: {e}")
                continue
            if s is None:
                continue
            stale.append(s)
            if a.update:
                try:
                    s.apply()
                except ManifestError as e:
                    broken.append(f"{fig.name}: {e}")
        if a.times:
            for command, seconds in sorted(ctx.seconds.items(), key=lambda x: -x[1]):
                print(f"{seconds:7.2f} s  {command}")

    for s in stale:
        verb = "updated" if a.update else "stale"
        print(f"{s.fig.file}:{s.line}: figure {s.fig.name} ({s.fig.cost}) {verb}; from:")
        for c in s.commands:
            print(f"    {c}")
        if a.check:
            diff = difflib.unified_diff(s.old.splitlines(), s.new.splitlines(), "docs",
                                        "program", lineterm="", n=0)
            for line in list(diff)[2:42]:
                print("    " + line)
    for b in broken:
        print(f"doc_figures: {b}", file=sys.stderr)
    print(f"{len(chosen)} figures checked, {len(stale)} "
          f"{'updated' if a.update else 'stale'}, {len(broken)} broken")
    if broken:
        return 2
    return 1 if stale and a.check else 0


if __name__ == "__main__":
    sys.exit(main())
