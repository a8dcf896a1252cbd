"""The recorder's life from Python: errors a Python user understands, and what is left when
the interpreter ends without stop() (SIGTERM, SIGKILL, an exception, os._exit, a plain exit,
Ctrl-C) or forks: a finished run within 3 intervals, no recorder left, never a second one.

Each interpreter that ends is a real one (sys.executable running a script), tracked into a
database of the test's directory; its last moment alive is the time it printed just before."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

import pylib
import rtrack

INTERVAL = 0.5

HEAD = f"""
import json, os, signal, sys, time
import rtrack
t = rtrack.Tracker(sys.argv[1], interval={INTERVAL}).start()
print(json.dumps({{"recorder": t.recorder_pid, "run": t.run_id,
                  "recorder_sid": os.getsid(t.recorder_pid), "sid": os.getsid(0)}}), flush=True)
t.wait_for_samples(1, timeout=60)
print(time.time(), flush=True)
"""

ENDINGS = {
    "sigterm": "os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(60)",
    "sigkill": "os.kill(os.getpid(), signal.SIGKILL)\ntime.sleep(60)",
    "os_exit": "os._exit(3)",
    "raises": "raise RuntimeError('the job failed')",
    "exits": "pass  # the end of the script: no stop()",
    "ctrl_c": "time.sleep(60)",
}


class InterpreterEnds(pylib.TempDirTest):
    def end(self, how):
        """Run the script that ends `how`; the run's facts once it has ended."""
        path = self.script(f"{how}.py", HEAD + ENDINGS[how] + "\n")
        db = os.path.join(self.dir, f"{how}.db")
        p = subprocess.Popen([sys.executable, path, db], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        facts = json.loads(p.stdout.readline())
        self.addCleanup(pylib.end_recorder, facts["recorder"])
        alive = float(p.stdout.readline())
        if how == "ctrl_c":  # a terminal's Ctrl-C: SIGINT to the foreground process group
            os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=120)
        run = pylib.wait_for("the run's end", lambda: [r for r in pylib.runs(db)
                                                       if r["status"] != "running"])
        self.assertEqual(len(run), 1, "one run, one recorder")
        run = run[0]
        self.assertIn(run["status"], ("finished", "interrupted"))
        self.assertLessEqual(run["ended_at"] - alive, 3 * INTERVAL,
                             f"{how}: the run ended {run['ended_at'] - alive:.3f} s after the "
                             "interpreter's last moment")
        pylib.wait_for("the recorder gone",
                       lambda: pylib.proc_state(facts["recorder"]) in (None, "Z"), 30)
        self.assertNotEqual(facts["recorder_sid"], facts["sid"], "a session of its own")
        s = json.loads(pylib.rt("summary", "--db", db, "--format", "json"))
        self.assertGreaterEqual(s["run"]["samples"], 1)
        return p.returncode, s["run"]["end_reason"], err

    def test_sigterm(self):
        rc, reason, _ = self.end("sigterm")
        self.assertEqual(rc, -signal.SIGTERM)
        self.assertEqual(reason, "tree-gone")  # the recorder saw the tree gone by itself

    def test_sigkill(self):
        rc, reason, _ = self.end("sigkill")
        self.assertEqual((rc, reason), (-signal.SIGKILL, "tree-gone"))

    def test_os_exit(self):
        self.assertEqual(self.end("os_exit")[:2], (3, "tree-gone"))

    def test_raises(self):
        rc, reason, err = self.end("raises")
        self.assertEqual((rc, reason), (1, "interrupted"))  # stopped at exit (atexit)
        self.assertIn("RuntimeError: the job failed", err)

    def test_exits_without_stop(self):
        self.assertEqual(self.end("exits")[:2], (0, "interrupted"))

    def test_ctrl_c(self):
        # the recorder is in a session of its own: the SIGINT reached the interpreter only,
        # whose exit stopped the recorder after its final sample
        rc, reason, err = self.end("ctrl_c")
        self.assertEqual(reason, "interrupted")
        self.assertIn("KeyboardInterrupt", err)


FORK = f"""
import json, os, sys, time
import rtrack
with rtrack.track(db=sys.argv[1], interval={INTERVAL}) as t:
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            t.start()
            said = "started"
        except rtrack.RtrackError as e:
            said = str(e)
        t.stop()
        os.write(w, said.encode())
        sys.exit(0)  # leaves the with block (stop) and runs atexit (the finalizer) in the child
    os.close(w)
    os.waitpid(child, 0)
    said = os.read(r, 4096).decode()
    running = t.running
    n = t.n_samples
    t.wait_for_samples(n + 2, timeout=60)  # still recording after the child is gone
print(json.dumps({{"said": said, "running": running, "recorder": t.recorder_pid,
                  "db_kept": os.path.exists(t.db)}}))
"""


class Fork(pylib.TempDirTest):
    def test_fork_starts_and_stops_nothing(self):
        db = os.path.join(self.dir, "fork.db")
        out = subprocess.run([sys.executable, self.script("fork.py", FORK), db],
                             capture_output=True, text=True, timeout=120, check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        facts = json.loads(out.stdout)
        self.assertIn("a forked child does not start another", facts["said"])
        self.assertTrue(facts["running"], "the child's stop() and exit left the recorder alone")
        self.assertTrue(facts["db_kept"])
        runs = pylib.runs(db)
        self.assertEqual([r["status"] for r in runs], ["finished"])
        self.assertGreaterEqual(runs[0]["samples"], 3)


class Errors(pylib.TempDirTest):
    def test_failed_start_raises_rtracks_message(self):
        with self.assertRaisesRegex(rtrack.RtrackError,
                                    r"^rtrack: invalid value '0\.0' for --interval: expected"):
            rtrack.Tracker(interval=0).start()
        with self.assertRaisesRegex(rtrack.RtrackError, r"^rtrack: cannot create database "
                                    r"'.*/no/such\.db': directory '.*/no' does not exist"):
            rtrack.Tracker(os.path.join(self.dir, "no", "such.db")).start()
        gone = subprocess.Popen(["true"])
        gone.wait()
        with self.assertRaisesRegex(rtrack.RtrackError,
                                    rf"^rtrack: record: no process with pid {gone.pid}"):
            rtrack.Tracker("x.db", pid=gone.pid).start()
        with self.assertRaisesRegex(TypeError, "unknown option 'jobname'"):
            rtrack.Tracker(jobname="x")

    def test_failed_start_leaves_nothing(self):
        tempfile.tempdir = self.dir  # where a temporary database would go
        try:
            with self.assertRaises(rtrack.RtrackError):
                rtrack.Tracker(interval=-1).start()
        finally:
            tempfile.tempdir = None
        self.assertEqual(os.listdir(self.dir), [])

    def test_stop_twice_and_before_start(self):
        t = rtrack.Tracker(interval=0.2)
        t.stop()
        with self.assertRaisesRegex(rtrack.RtrackError, "has not recorded anything: start"):
            t.stats()
        t.start()
        t.stop()
        t.stop()
        self.assertFalse(t.running)
        with self.assertRaisesRegex(rtrack.RtrackError, "started already"):
            t.start()
        self.assertEqual(pylib.runs(t.db)[0]["status"], "finished")

    def test_no_binary_and_old_binary(self):
        env = dict(os.environ)
        self.addCleanup(os.environ.update, env)
        os.environ.pop("RTRACK_BIN")
        os.environ["PATH"] = self.dir
        with self.assertRaisesRegex(rtrack.RtrackError, "no rtrack binary found: this package "
                                    "was not installed from an rtrack wheel.*RTRACK_BIN is not "
                                    "set.*no rtrack on PATH"):
            rtrack.Tracker().start()
        old = self.script("rtrack", "#!/bin/sh\necho 'rtrack 0.0.9'\n")
        os.chmod(old, stat.S_IRWXU)
        with self.assertRaisesRegex(rtrack.RtrackError, rf"rtrack 0\.0\.9 at {old} \(from PATH\) "
                                    r"is older than this package \(0\.1\.0\)"):
            rtrack.find_binary()
        os.environ["RTRACK_BIN"] = old
        with self.assertRaisesRegex(rtrack.RtrackError, r"\(from RTRACK_BIN\) is older"):
            rtrack.Tracker().start()
        os.environ["RTRACK_BIN"] = os.path.join(self.dir, "missing")
        with self.assertRaisesRegex(rtrack.RtrackError, "RTRACK_BIN=.*missing is not an "
                                    "executable file"):
            rtrack.find_binary()
        os.environ["RTRACK_BIN"] = shutil.which("true", path="/bin:/usr/bin")
        with self.assertRaisesRegex(rtrack.RtrackError, "is not an rtrack binary"):
            rtrack.find_binary()


if __name__ == "__main__":
    pylib.main()
