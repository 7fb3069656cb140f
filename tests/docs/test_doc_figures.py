#!/usr/bin/env python3
"""Tests of tools/doc_figures.py on a repository of its own: a fake cubesim whose output the
test sets, a doc with a block and prose values, and a manifest. Run by ctest
(tests/docs/CMakeLists.txt) as `test_doc_figures.py PATH/TO/doc_figures.py`."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = None

MANIFEST = textwrap.dedent('''\
    from doc_figures import Block, Values

    def summary(ctx):
        return ctx.session("cubesim run tiny k")

    def prose(ctx):
        r = ctx.report("cubesim run tiny k")
        return [(f"{r['sim_time_ps'] / 1e6:.1f}",)]

    def slow(ctx):
        return ctx.session("cubesim run slow k")

    FIGURES = [
        Block("summary", "docs/a.md", "cheap", summary, volatile=[r"^  wall .*$"]),
        Values("prose", "docs/a.md", "cheap", ["the kernel takes {} us on tiny"], prose),
        Block("slow", "docs/a.md", "expensive", slow, volatile=[r"^  wall .*$"]),
    ]
    ''')

DOC = textwrap.dedent('''\
    # A

    <!-- figure: summary -->
    ```
    $ cubesim run tiny k
    sim time  TIME
      wall    1 ms
    ```
    <!-- /figure -->

    Prose: the kernel
    takes PROSE us on tiny.

    <!-- figure: slow -->
    ```
    $ cubesim run slow k
    sim time  TIME
      wall    1 ms
    ```
    <!-- /figure -->
    ''')

# The fake cubesim prints a summary with the time in $FAKE_PS and a wall time that changes at
# every run, and writes the same time into --json FILE.
FAKE = textwrap.dedent('''\
    #!/usr/bin/env python3
    import json, os, sys, time
    ps = int(os.environ["FAKE_PS"])
    if sys.argv[1] == "show":  # a file of the reader's, beside the repository's specs
        print(open(sys.argv[2]).read().strip(), "with specs/tiny.json:",
              os.path.exists("specs/tiny.json"))
    elif "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"sim_time_ps": ps}, f)
    else:
        print(f"sim time  {ps / 1e6:.3f} us")
        print(f"  wall    {time.time_ns() % 1000} ms")
    ''')


class DocFigures(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        os.makedirs(os.path.join(self.root, "docs", "data"))
        self.write("docs/data/figures.py", MANIFEST)
        self.write("bin/cubesim", FAKE)
        os.chmod(os.path.join(self.root, "bin/cubesim"), 0o755)
        self.doc(ps=12_500_000, shown="12.500", prose="12.5")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def read(self, path):
        with open(os.path.join(self.root, path)) as f:
            return f.read()

    def doc(self, ps, shown, prose):
        self.ps = ps
        self.write("docs/a.md", DOC.replace("TIME", shown + " us").replace("PROSE", prose))

    def run_script(self, *args):
        p = subprocess.run([sys.executable, SCRIPT, "--root", self.root, "--binary",
                            os.path.join(self.root, "bin/cubesim"), *args],
                           env=dict(os.environ, FAKE_PS=str(self.ps)), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout

    def test_current_figures_pass_whatever_the_wall_time(self):
        code, out = self.run_script("--check")
        self.assertEqual(code, 0, out)
        self.assertIn("3 figures checked, 0 stale", out)

    def test_a_stale_block_is_listed_with_its_file_line_and_command(self):
        self.ps = 13_000_000
        code, out = self.run_script("--check", "summary")
        self.assertEqual(code, 1, out)
        self.assertIn("docs/a.md:4: figure summary (cheap) stale; from:", out)
        self.assertIn("    cubesim run tiny k", out)
        self.assertIn("-sim time  12.500 us", out)
        self.assertIn("+sim time  13.000 us", out)

    def test_a_stale_value_in_wrapped_prose_is_listed_with_its_line(self):
        self.ps = 13_000_000
        code, out = self.run_script("--check", "prose")
        self.assertEqual(code, 1, out)
        self.assertIn("docs/a.md:11: figure prose (cheap) stale", out)
        self.assertIn("-line 11: 12.5", out)
        self.assertIn("+line 11: 13.0", out)

    def test_cheap_leaves_the_expensive_figures_out(self):
        self.ps = 13_000_000
        code, out = self.run_script("--check", "--cheap")
        self.assertEqual(code, 1, out)
        self.assertIn("2 figures checked, 2 stale", out)
        self.assertNotIn("figure slow", out)

    def test_update_rewrites_stale_figures_in_place_and_then_check_passes(self):
        self.ps = 13_000_000
        code, out = self.run_script("--update")
        self.assertEqual(code, 0, out)
        self.assertIn("3 figures checked, 3 updated", out)
        text = self.read("docs/a.md")
        self.assertIn("Prose: the kernel\ntakes 13.0 us on tiny.", text)
        self.assertEqual(text.count("sim time  13.000 us"), 2)
        self.assertIn("<!-- figure: summary -->\n```\n$ cubesim run tiny k\n", text)
        code, out = self.run_script("--check")
        self.assertEqual(code, 0, out)

    def test_a_marker_without_a_figure_and_a_bad_template_are_errors(self):
        self.write("docs/b.md", "<!-- figure: nobody -->\nx\n<!-- /figure -->\n")
        code, out = self.run_script("--check")
        self.assertEqual(code, 2, out)
        self.assertIn("docs/b.md:1: marker of figure nobody", out)
        os.remove(os.path.join(self.root, "docs/b.md"))
        self.write("docs/a.md", self.read("docs/a.md").replace("takes", "needs"))
        code, out = self.run_script("--check", "prose")
        self.assertEqual(code, 2, out)
        self.assertIn("matches 0 times; it must match once", out)

    def test_a_figure_about_a_file_runs_beside_it_and_shows_it(self):
        self.write("specs/tiny.json", "{}\n")
        self.write("docs/data/figures.py", MANIFEST.replace("FIGURES = [", """FIGURES = [
        Block("file", "docs/b.md", "cheap", lambda ctx: ctx.session(
            "cubesim show mine.json", files={"mine.json": '{"a": 1}\\n'})),"""))
        self.write("docs/b.md", "<!-- figure: file -->\nold\n<!-- /figure -->\n")
        code, out = self.run_script("--update", "file")
        self.assertEqual(code, 0, out)
        self.assertEqual(self.read("docs/b.md"), '<!-- figure: file -->\n```\n$ cat mine.json\n'
                         '{"a": 1}\n$ cubesim show mine.json\n{"a": 1} with specs/tiny.json: '
                         'True\n```\n<!-- /figure -->\n')
        self.assertFalse(os.path.exists(os.path.join(self.root, "mine.json")))

    def test_a_command_that_fails_is_an_error_naming_it(self):
        self.write("bin/cubesim", "#!/bin/sh\necho broken >&2\nexit 3\n")
        code, out = self.run_script("--check", "summary")
        self.assertEqual(code, 2, out)
        self.assertIn("`cubesim run tiny k` exited with 3", out)
        self.assertIn("broken", out)


if __name__ == "__main__":
    SCRIPT = sys.argv.pop(1)
    unittest.main()
