"""tests/python/pylib.py - what the Python package's suites share (standard library only).

Each suite is `python3 tests/python/test_NAME.py RTRACK_BINARY` (tests/CMakeLists.txt: ctest
py_test_NAME, with the CLI suites' environment): a unittest module whose main() runs it and
exits 0 when every test passed, 1 when one failed, 77 when every one was skipped (ctest:
skipped, not passed). A test skipped for want of a capability that RTRACK_TEST_REQUIRE names
("all" names every one; .ci/run sets it) fails instead, as tests/cli/lib.sh's skip_req.

The package under test is the source tree's (python/rtrack), driving RTRACK_BINARY through
RTRACK_BIN; the wheel suite installs the built wheel instead. RTRACK_* / TRACKER_* variables and
SENTINEL_API_TOKEN of the caller are removed first, as lib.sh does.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
PKG = os.path.join(SRC, "python")
PY = sys.executable

if len(sys.argv) < 2:
    sys.exit(f"usage: {sys.argv[0]} RTRACK_BINARY")
RTRACK = os.path.realpath(sys.argv.pop(1))
for _v in list(os.environ):
    if (_v.startswith(("RTRACK_", "TRACKER_")) and not _v.startswith("RTRACK_TEST_")) \
            or _v == "SENTINEL_API_TOKEN":
        del os.environ[_v]
os.environ["RTRACK_BIN"] = RTRACK
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (os.environ.get("RT_PY_BLOCK", ""), PKG) if p)
sys.path[:0] = [p for p in (os.environ.get("RT_PY_BLOCK"), PKG) if p]
PARITY = os.path.join(os.environ.get("RT_FIXTURES", os.path.join(SRC, "tests", "fixtures")),
                      "parity", "03-process-tree")


def required(cap):
    want = os.environ.get("RTRACK_TEST_REQUIRE", "").replace(",", " ").split()
    return "all" in want or cap in want


def skip_req(test, cap, reason):
    """Skip for want of cap; a failure where RTRACK_TEST_REQUIRE names it."""
    if required(cap):
        test.fail(f"required ({cap}) but: {reason}")
    raise unittest.SkipTest(reason)


def rt(*args, check=True, **kw):
    """rtrack ARGS: its stdout (text)."""
    out = subprocess.run([RTRACK, *args], capture_output=True, text=True, check=False, **kw)
    if check and out.returncode != 0:
        raise AssertionError(f"rtrack {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


def reference_headers():
    """The Python resource-tracker's own CSV headers (its rows in tests/fixtures/parity): system,
    process, and the combined one get_combined_metrics() derives from them."""
    with open(os.path.join(PARITY, "expected-system.csv"), encoding="utf-8") as f:
        system = f.readline()
    with open(os.path.join(PARITY, "expected-process.csv"), encoding="utf-8") as f:
        process = f.readline()
    s = system.rstrip("\n").split(",")
    p = process.rstrip("\n").split(",")
    combined = ",".join([s[0]] + ['"system_' + c[1:] for c in s[1:]] +
                        ['"process_' + c[1:] for c in p[1:]]) + "\n"
    return system, process, combined


def runs(db):
    """The runs of a database, as rtrack runs --format jsonl lists them."""
    return [json.loads(l) for l in rt("runs", "--db", db, "--format", "jsonl").splitlines()]


def proc_state(pid):
    """A process's state letter, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def wait_for(what, cond, timeout=60):
    """Poll cond() until true (bounded); AssertionError naming what when it never is."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def end_recorder(pid):
    """Clean-up after a failed check: no recorder of ours outlives the suite."""
    if pid and proc_state(pid) not in (None, "Z"):
        os.kill(pid, signal.SIGKILL)


class TempDirTest(unittest.TestCase):
    """A test in a fresh temporary directory (its cwd), removed after."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rtrack-py.")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self._cwd = os.getcwd()
        os.chdir(self.dir)
        self.addCleanup(os.chdir, self._cwd)

    def script(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path


class KeeperMock:
    """tests/helpers/keeper_mock.py on 127.0.0.1 (never the real Keeper: tests stay on this
    machine); RTRACK_KEEPER_URL points rtrack at it while it runs."""

    def __init__(self, log):
        self.proc = subprocess.Popen([PY, os.path.join(SRC, "tests", "helpers", "keeper_mock.py"),
                                      log], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.proc.stdout.readline().strip()}"
        os.environ["RTRACK_KEEPER_URL"] = self.url

    def close(self):
        os.environ.pop("RTRACK_KEEPER_URL", None)
        self.proc.terminate()
        self.proc.wait()
        self.proc.stdout.close()


def main():
    result = unittest.main(module="__main__", exit=False, verbosity=2).result
    n, skipped = result.testsRun, len(result.skipped)
    bad = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{n - skipped - bad} passed, {bad} failed, {skipped} skipped")
    if bad:
        sys.exit(1)
    sys.exit(77 if n == skipped else 0)
