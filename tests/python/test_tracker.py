"""Tracker from inside Python: a function of known CPU and memory tracked by `with rtrack.track()`,
its figures read back in the Python resource-tracker's shapes and held against the kernel's and
against the CLI's own answers; the table and DataFrame forms; reading while recording; what
the Python side costs (nothing: no thread, no child).

Run twice by ctest: py_test_tracker with Debian's python3-pandas importable, and
py_test_tracker_nopandas with `import pandas` blocked (tests/python/nopandas, RT_PY_BLOCK).
"""

import json
import os
import resource
import sqlite3
import subprocess
import time

import pylib
import rtrack

NOPANDAS = bool(os.environ.get("RT_PY_BLOCK"))
MIB = 1 << 20
HOG_MIB = 200
INTERVAL = 0.25


def cpu_s():
    """This process's CPU seconds and those of the children it reaped (the kernel's count)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def own_pss_mib():
    with open("/proc/self/smaps_rollup", encoding="ascii") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no Pss line in /proc/self/smaps_rollup")


def close_to(test, name, value, truth, abs_tol, rel_tol):
    """|value - truth| <= abs_tol + rel_tol * truth (tests/cli: close_to)."""
    slack = abs_tol + rel_tol * truth
    test.assertLessEqual(abs(value - truth), slack, f"{name}: {value} vs the kernel's {truth}")


def pandas_or_none():
    try:
        import pandas  # noqa: PLC0415
    except ImportError:
        return None
    return pandas


class KnownWork(pylib.TempDirTest):
    """The issue's workload: ~1 s of CPU in a busy loop, then a 200 MiB bytearray held while
    the recorder samples it, all inside `with rtrack.track()`."""

    @classmethod
    def setUpClass(cls):
        cls.keeper = None
        before_threads = len(os.listdir("/proc/self/task"))
        with rtrack.track(interval=INTERVAL, job_name="known-work", tags={"k": "v"}) as t:
            c0 = cpu_s()
            cls.threads = len(os.listdir("/proc/self/task")) - before_threads
            with open(f"/proc/self/task/{os.getpid()}/children", encoding="ascii") as f:
                cls.children = f.read().split()
            end = time.process_time() + 1.0
            while time.process_time() < end:
                pass
            # the samples counted in the database from here (rtrack's readers would be children
            # in the tree: a sanitizer build's weigh tens of MiB)
            db = sqlite3.connect(f"file:{t.db}?mode=ro", uri=True)
            def count():
                return db.execute("SELECT count(*) FROM samples").fetchone()[0]

            base = own_pss_mib()
            hog = bytearray(b"\x01") * (HOG_MIB * MIB)  # written, so resident
            cls.hog_pss = own_pss_mib() - base
            seen = count()
            # held until the recorder has sampled it twice
            pylib.wait_for("two samples with the bytearray", lambda: count() >= seen + 2)
            del hog
            db.close()
            cls.truth = cpu_s() - c0
            cls.base = base
        cls.t = t

    def test_cpu_seconds(self):
        pm = self.t.process_metrics
        tracked = sum(pm["utime"]) + sum(pm["stime"])
        close_to(self, "process_metrics' utime + stime", tracked, self.truth, 0.15, 0.03)
        s = self.t.summary()
        close_to(self, "summary's CPU time", s["cpu_time"]["total_s"], self.truth, 0.15, 0.03)
        self.assertGreaterEqual(self.truth, 1.0)

    def test_peak_memory(self):
        self.assertGreaterEqual(self.hog_pss, HOG_MIB * 0.95, "the bytearray is resident")
        peak = max(self.t.process_metrics["memory_mib"])
        self.assertGreaterEqual(peak, self.base + HOG_MIB * 0.9)
        self.assertLessEqual(peak, self.base + HOG_MIB + 40)
        st = self.t.stats()
        # (the CSV's 4 decimals rounded again to 2 may differ by one in the last digit from the
        # raw KiB / 1024 that stats() rounds once: 215.084961 -> CSV 215.085 -> 215.09, not 215.08)
        self.assertAlmostEqual(st["process_memory_mib"]["max"], peak, delta=0.0051)
        self.assertEqual(self.t.summary()["memory_peak"]["processes"][0]["pid"], os.getpid())

    def test_stats_is_the_cli_summary(self):
        cli = json.loads(pylib.rt("summary", "--db", self.t.db, "--run", str(self.t.run_id),
                                  "--format", "json"))
        st = self.t.stats()
        self.assertEqual(st, cli["python_stats"])
        self.assertEqual(list(st), ["process_cpu_usage", "process_memory_mib", "process_gpu_usage",
                                    "process_gpu_vram_mib", "process_gpu_utilized",
                                    "system_disk_space_used_gb", "system_net_recv_bytes",
                                    "system_net_sent_bytes", "timestamp"])
        r = cli["recommendation"]
        self.assertEqual(self.t.recommend_resources(),
                         {"cpu": r["cpu"], "memory": r["memory_mib"], "gpu": r["gpu"],
                          "vram": r["vram_mib"]})
        # the peak (the interpreter and its 200 MiB) x 1.2, to the next of 128, 256, 512, ... MiB
        want = 1.2 * max(self.t.process_metrics["memory_mib"])
        self.assertEqual(self.t.recommend_resources()["memory"],
                         next(m for m in (256, 512, 1024) if m >= want))
        self.assertEqual(cli["run"]["job_name"], "known-work")
        self.assertEqual(cli["run"]["tags"], {"k": "v"})
        self.assertEqual(cli["run"]["status"], "finished")
        self.assertEqual(cli["run"]["pid"], os.getpid())

    def test_combined_header_and_bytes(self):
        system, process, combined = pylib.reference_headers()
        cm = self.t.get_combined_metrics(pandas=False)
        text = cm.to_csv()
        self.assertEqual(text.split("\n", 1)[0] + "\n", combined)
        self.assertEqual(self.t.system_metrics.to_csv().split("\n", 1)[0] + "\n", system)
        self.assertEqual(self.t.process_metrics.to_csv().split("\n", 1)[0] + "\n", process)
        # the rows, byte for byte what rtrack export writes
        self.assertEqual(text, pylib.rt("export", "--db", self.t.db, "--run", str(self.t.run_id)))
        self.assertEqual(len(cm), self.t.n_samples)
        self.assertEqual(set(cm["process_pid"]), {os.getpid()})
        self.assertEqual(dict(cm)["timestamp"], cm["timestamp"])

    def test_combined_options(self):
        cm = self.t.get_combined_metrics()
        b = self.t.get_combined_metrics(bytes=True)
        self.assertEqual(b["process_memory_mib"], [v * MIB for v in cm["process_memory_mib"]])
        self.assertEqual(b["system_disk_space_used_gb"],
                         [v * 10**9 for v in cm["system_disk_space_used_gb"]])
        self.assertEqual(b["process_utime"], cm["process_utime"])
        h = self.t.get_combined_metrics(human_names=True)
        self.assertEqual(h.columns[:3], ["Timestamp", "System processes", "System CPU time (user)"])
        self.assertIn("Process memory usage", h.columns)
        self.assertIn("System disk space used", h.columns)
        self.assertEqual(h["Process memory usage"], cm["process_memory_mib"])
        p = self.t.get_combined_metrics(system_prefix="s.", process_prefix="p.", offset=1)
        self.assertEqual(p.columns[1], "s.processes")
        self.assertEqual(p.columns[-1], "p.gpu_utilized")
        self.assertEqual(p["p.memory_mib"], cm["process_memory_mib"][1:])

    def test_pandas(self):
        pd = pandas_or_none()
        if NOPANDAS:
            self.assertIsNone(pd, "import pandas is blocked in this run")
            with self.assertRaisesRegex(ImportError, "pandas cannot be imported"):
                self.t.get_combined_metrics(pandas=True)
            self.assertIsInstance(self.t.process_metrics, rtrack.Table)
            return
        if pd is None:
            pylib.skip_req(self, "pandas", "pandas is not installed (Debian: python3-pandas)")
        df = self.t.get_combined_metrics(pandas=True)
        cm = self.t.get_combined_metrics()
        self.assertIsInstance(df, pd.DataFrame)
        self.assertEqual(list(df.columns), cm.columns)
        self.assertEqual(len(df), len(cm))
        self.assertEqual(list(df["process_memory_mib"]), cm["process_memory_mib"])
        t2 = rtrack.Tracker.read(self.t.db, pandas=True)  # the same run, read back
        self.assertEqual(t2.run_id, self.t.run_id)
        self.assertIsInstance(t2.process_metrics, pd.DataFrame)
        self.assertEqual(list(t2.system_metrics.columns), self.t.system_metrics.columns)

    def test_python_side_samples_nothing(self):
        # start() started no thread here and left no child: the recorder is not ours
        self.assertEqual(self.threads, 0)
        self.assertEqual(self.children, [])
        # ...and it is not in the tree it measures
        pids = pylib.rt("export", "--db", self.t.db, "--run", str(self.t.run_id), "--format",
                        "jsonl")
        tree = {p["pid"] for line in pids.splitlines() for p in json.loads(line)["processes"]}
        self.assertIn(os.getpid(), tree)
        self.assertNotIn(self.t.recorder_pid, tree)

    def test_report(self):
        r = self.t.report()
        self.assertTrue(r.startswith("<!DOCTYPE html>"))
        self.assertIn("<svg", r)
        self.assertIn("known-work", r)
        r.save("report.html")
        with open("report.html", encoding="utf-8") as f:
            self.assertEqual(f.read(), r)
        self.assertEqual(os.stat("report.html").st_mode & 0o777, 0o600)
        self.assertTrue(r._repr_html_().startswith("<iframe srcdoc=\"&lt;!DOCTYPE html&gt;"))

    def test_recommend_server(self):
        keeper = pylib.KeeperMock(os.path.join(self.dir, "keeper.log"))
        try:
            server = self.t.recommend_server()
        finally:
            keeper.close()
        self.assertEqual(server["server_id"], "cax11")  # the mock's cheapest
        with open(os.path.join(self.dir, "keeper.log"), encoding="utf-8") as f:
            asked = json.loads(f.readline())["path"]
        self.assertIn("vcpus_min=1", asked)
        # no Keeper (nothing listens there): None, and a warning that says why
        os.environ["RTRACK_KEEPER_URL"] = "http://127.0.0.1:9"
        try:
            with self.assertWarnsRegex(RuntimeWarning, "no server recommendation: "):
                self.assertIsNone(self.t.recommend_server())
        finally:
            del os.environ["RTRACK_KEEPER_URL"]


class WhileRecording(pylib.TempDirTest):
    def test_read_while_recording(self):
        with rtrack.Tracker("live.db", interval=0.2) as t:
            t.wait_for_samples(3, timeout=60)
            self.assertTrue(t.running)
            self.assertGreaterEqual(len(t.process_metrics), 3)
            self.assertGreaterEqual(len(t.system_metrics), 3)
            self.assertTrue(t.summary()["run"]["in_progress"])
            self.assertEqual(pylib.runs("live.db")[0]["status"], "running")
        self.assertFalse(t.running)
        self.assertEqual(pylib.runs("live.db")[0]["status"], "finished")
        self.assertEqual(t.summary()["run"]["end_reason"], "interrupted")

    def test_decorator(self):
        @rtrack.track(interval=0.2, db="deco.db", job_name="deco")
        def work(n):
            return sum(range(n))

        self.assertIsNone(work.tracker)
        self.assertEqual(work(1000), 499500)
        first = work.tracker
        self.assertFalse(first.running)
        work(10)
        # each tracker reads its own run, even the first one asked after the second ran
        self.assertEqual((first.run_id, work.tracker.run_id), (1, 2))
        self.assertEqual(first.summary()["run"]["job_name"], "deco")
        self.assertEqual([r["status"] for r in pylib.runs("deco.db")], ["finished", "finished"])

        @rtrack.track
        def bare():
            return 7

        self.assertEqual(bare(), 7)
        self.assertGreaterEqual(bare.tracker.n_samples, 1)

    def test_sentinel_options(self):
        # streamed by the recorder to the mock Sentinel API (tests/helpers/sentinel_mock.py):
        # what was asked for reaches it; the token by the environment, never the command line
        log = os.path.join(self.dir, "api.log")
        mock = subprocess.Popen([pylib.PY, os.path.join(pylib.SRC, "tests", "helpers",
                                                        "sentinel_mock.py"), log, "tok-123"],
                                stdout=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{mock.stdout.readline().strip()}"
            with rtrack.Tracker("s.db", interval=0.2, sentinel_token="tok-123", sentinel_url=url,
                                upload_interval=3600, cloud_discovery=False,
                                job_name="streamed", tags={"t": "1"}) as t:
                with open(f"/proc/{t.recorder_pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                t.wait_for_samples(2, timeout=60)
        finally:
            mock.terminate()
            mock.wait()
            mock.stdout.close()
        self.assertNotIn(b"tok-123", b" ".join(argv))
        self.assertIn(b"--sentinel-url", argv)
        with open(log, encoding="utf-8") as f:
            reqs = [json.loads(line) for line in f]
        self.assertEqual(reqs[0]["path"], "/runs")
        self.assertEqual(reqs[0]["headers"]["authorization"], "Bearer tok-123")
        reg = json.loads(reqs[0]["body"])
        self.assertEqual((reg["job_name"], reg["tags"]), ("streamed", ["t=1"]))
        fin = json.loads(reqs[-1]["body"])
        self.assertTrue(reqs[-1]["path"].endswith("/finish"))
        self.assertEqual(fin["data_source"], "inline")  # nothing uploaded in the hour
        self.assertEqual(fin["data_csv"].split("\n", 1)[0] + "\n", pylib.reference_headers()[2])

    def test_resource_tracker_alias(self):
        rt = rtrack.ResourceTracker(interval=0.2, db="alias.db",
                                    streaming_metadata={"job_name": "j", "tags": {"a": "b"}})
        self.assertFalse(rt.running)
        rt.start()
        rt.stop()
        rt.stop()  # twice: harmless
        self.assertEqual(rt.summary()["run"]["tags"], {"a": "b"})
        with self.assertRaisesRegex(ValueError, "children"):
            rtrack.ResourceTracker(children=False)
        with rtrack.ResourceTracker(interval=0.2, db="alias.db") as r2:
            self.assertTrue(r2.running)
        self.assertEqual(len(pylib.runs("alias.db")), 2)
        self.assertEqual(rtrack.ResourceTracker.read("alias.db").run_id, 2)  # the newest
        self.assertEqual(rtrack.Tracker.read("alias.db", run=1).stats(), rt.stats())


if __name__ == "__main__":
    pylib.main()
