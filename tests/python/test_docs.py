"""The examples of docs/python.md, run as written: every ```python block of the page, each a
whole program, in an empty directory, by this machine's python3 with the source package and
RTRACK_BIN (pylib). Each must exit 0 with nothing on stderr and print what its comments say
it prints (the shape: the same number of lines). Keeper is tests/helpers/keeper_mock.py."""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import pylib

DOC = os.path.join(pylib.SRC, "docs", "python.md")


def blocks():
    with open(DOC, encoding="utf-8") as f:
        return re.findall(r"^```python\n(.*?)^```\n", f.read(), re.S | re.M)


class DocExamples(pylib.TempDirTest):
    def test_examples_run_as_written(self):
        found = blocks()
        self.assertGreaterEqual(len(found), 6)
        keeper = pylib.KeeperMock(os.path.join(self.dir, "keeper.log"))
        self.addCleanup(keeper.close)
        for i, code in enumerate(found, 1):
            with self.subTest(example=i, first_line=code.split("\n", 1)[0]):
                self.run_example(i, code)

    def run_example(self, i, code):
        if "pandas=True" in code:
            if importlib.util.find_spec("pandas") is None:
                pylib.skip_req(self, "pandas", "pandas is not installed (python3-pandas)")
        d = tempfile.mkdtemp(dir=self.dir)
        path = os.path.join(d, "example.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        out = subprocess.run([sys.executable, path], cwd=d, capture_output=True, text=True,
                             timeout=240, check=False)
        self.assertEqual(out.returncode, 0, f"example {i}:\n{code}\n{out.stderr}")
        self.assertEqual(out.stderr, "", f"example {i}")
        prints = len(re.findall(r"^\s*print\(", code, re.M))
        loops = re.search(r"^for .* in range\((\d+)\):", code, re.M)
        lines = out.stdout.splitlines()
        if "df[[" not in code:  # pandas prints a table of several lines
            want = prints + (int(loops.group(1)) - 1 if loops else 0)
            self.assertEqual(len(lines), want, f"example {i}: {out.stdout}")
        if "save(\"report.html\")" in code:
            with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
                self.assertTrue(f.read().startswith("<!DOCTYPE html>"))
        if "recommend_server" in code:
            self.assertEqual(lines[-1], "CAX11 \u2014 Ampere")  # the mock's cheapest


if __name__ == "__main__":
    pylib.main()
