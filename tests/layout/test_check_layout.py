#!/usr/bin/env python3
"""Tests of tools/check_layout.py on fixture trees of its own: an include from a lower layer up
to a higher one, one across ordered sub-folders, a function over the limit, the allow-list, and
a machine without universal-ctags. Run by ctest (tests/layout/CMakeLists.txt) as
`test_check_layout.py PATH/TO/check_layout.py`."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None


def function_of(name, lines):
    """A C++ function `name` of exactly `lines` lines, name line to closing brace."""
    body = "".join(f"  x += {i};\n" for i in range(lines - 3))
    return f"int {name}(int x) {{\n{body}  return x;\n}}\n"


class Tree:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def run(self, *args, env=None):
        return subprocess.run([sys.executable, SCRIPT, "--root", self.root, *args],
                              capture_output=True, text=True, env=env)


def clean_tree(test):
    t = Tree()
    test.addCleanup(t.dir.cleanup)
    t.write("emu/core.hpp", "#pragma once\nint core();\n")
    t.write("components/part.hpp", '#pragma once\n#include "emu/core.hpp"\n')
    t.write("triton_emu/model.cpp", '#include "components/part.hpp"\n#include <vector>\n' +
            function_of("short_one", 80))
    t.write("kernels/kernel.cpp", '#include "triton_emu/model.hpp"\n#include "emu/core.hpp"\n')
    t.write("tools/cubesim/main.cpp", '#include "kernels/kernel.hpp"\n')
    return t


class CheckLayout(unittest.TestCase):
    def test_clean_tree_passes(self):
        r = clean_tree(self).run()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")

    def test_upward_include_is_flagged_with_file_line_and_layers(self):
        t = clean_tree(self)
        t.write("emu/core.cpp", '#include "emu/core.hpp"\n#include "kernels/kernel.hpp"\n')
        t.write("components/up.hpp", "#pragma once\n#include <tools/cubesim/cli_main.hpp>\n")
        r = t.run()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("emu/core.cpp:2: includes kernels/kernel.hpp: layer emu may not include "
                      "the higher layer kernels", r.stdout)
        self.assertIn("components/up.hpp:2: includes tools/cubesim/cli_main.hpp: layer "
                      "components may not include the higher layer tools/cubesim", r.stdout)
        self.assertEqual(len(r.stdout.splitlines()), 2, r.stdout)

    def test_long_function_is_flagged_with_its_length(self):
        t = clean_tree(self)
        t.write("kernels/long.cpp", function_of("too_long", 81))
        r = t.run()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "kernels/long.cpp:1: function too_long is 81 lines, more than "
                         "80; split it into named steps\n")

    def test_functions_outside_the_checked_folders_are_not_measured(self):
        t = clean_tree(self)
        t.write("components/long.cpp", function_of("long_but_elsewhere", 120))
        self.assertEqual(t.run().returncode, 0)

    def test_allowed_function_passes_and_a_stale_entry_fails(self):
        t = clean_tree(self)
        t.write("kernels/long.cpp", function_of("too_long", 100))
        self.assertEqual(t.run("--allow", "kernels/long.cpp:too_long").returncode, 0)
        r = t.run("--allow", "kernels/long.cpp:too_long", "--allow", "triton_emu/model.cpp:short_one")
        self.assertEqual(r.returncode, 1)
        self.assertIn("triton_emu/model.cpp:short_one: allowed to be long (--allow) but no longer "
                      "over 80 lines (or gone); remove it from the allow-list", r.stdout)

    def test_malformed_allow_entry_is_a_usage_error(self):
        r = clean_tree(self).run("--allow", "just_a_name")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--allow just_a_name: expected FILE:FUNCTION", r.stderr)

    def test_missing_ctags_fails_clearly(self):
        with tempfile.TemporaryDirectory() as empty:
            r = clean_tree(self).run(env={"PATH": empty})
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("need universal-ctags (no ctags on PATH); install the Debian package "
                      "universal-ctags (tools/install-deps.sh does)", r.stderr)

    def test_sublayer_order_flags_an_include_up_the_declared_order(self):
        spec = importlib.util.spec_from_file_location("check_layout", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        t = clean_tree(self)
        t.write("triton_emu/backends/cpu.cpp", '#include "triton_emu/model.hpp"\n')
        t.write("triton_emu/model.hpp", '#include "triton_emu/backends/cpu.hpp"\n')
        sub = {"triton_emu": ["backends", "."]}
        found = module.include_findings(t.root, module.LAYERS, sub)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith(
            "triton_emu/backends/cpu.cpp:1: includes triton_emu/model.hpp: in triton_emu/, "
            "sub-folder backends may not include the higher sub-folder ."), found)
        self.assertEqual(module.include_findings(t.root, module.LAYERS, {}), [])


if __name__ == "__main__":
    SCRIPT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
