"""Tracker: `rtrack record --pid` of this interpreter, from inside it, and its figures read back
through rtrack export, summary and report (docs/python.md)."""

import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
import warnings
import weakref

from ._binary import RtrackError, find_binary
from ._recorder import Recorder
from ._report import Report
from ._table import HUMAN_NAMES, Table, byte_factor

# keyword -> rtrack record's option (docs/usage.md, Options)
_METADATA = {
    "job_name": "--job-name", "project_name": "--project-name", "stage_name": "--stage-name",
    "task_name": "--task-name", "team": "--team", "env": "--env", "language": "--language",
    "orchestrator": "--orchestrator", "executor": "--executor",
    "external_run_id": "--external-run-id", "container_image": "--container-image",
}


def _tag_args(tags):
    if not tags:
        return []
    items = tags.items() if hasattr(tags, "items") else (t.split("=", 1) for t in tags)
    out = []
    for k, v in items:
        out += ["--tag", f"{k}={v}"]
    return out


def _combined_names(columns, human, system_prefix, process_prefix):
    """get_combined_metrics' names: the Python tool's prefixes ("system_", "process_"; "System ",
    "Process " with human names) or the ones given, before the column's (human) name."""
    sp = system_prefix if system_prefix is not None else ("System " if human else "system_")
    pp = process_prefix if process_prefix is not None else ("Process " if human else "process_")
    names = {}
    for c in columns:
        if c == "timestamp":
            names[c] = HUMAN_NAMES[c] if human else c
            continue
        side, _, base = c.partition("_")
        name = HUMAN_NAMES.get(base, base) if human else base
        names[c] = (sp if side == "system" else pp) + name
    return names


def _cleanup(recorder, tmpdir, timeout):
    """At garbage collection or interpreter exit: stop a recorder still running (never from a
    forked child: Recorder.stop checks), then remove the temporary database."""
    if os.getpid() != recorder.owner:
        return
    try:
        recorder.stop(timeout)
    except RtrackError as e:
        warnings.warn(str(e), RuntimeWarning)
    recorder.release()
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


class Tracker:
    """Records this process and its descendants with `rtrack record --pid`, into a temporary
    database (deleted when the tracker is) or `db`, every `interval` seconds; the options of
    rtrack record's command line as keywords (job_name, tags, sentinel_url, ...). start() returns
    once the first sample is stored; stop() takes the final one. A context manager."""

    def __init__(self, db=None, *, interval=1.0, pid=None, tags=None, sentinel_token=None,
                 sentinel_url=None, upload_interval=None, cloud_discovery=None, pandas=False,
                 autostart=False, start_timeout=30.0, stop_timeout=60.0, **metadata):
        unknown = sorted(set(metadata) - set(_METADATA))
        if unknown:
            raise TypeError(f"unknown option {unknown[0]!r} (rtrack record's options: "
                            f"{', '.join(sorted(_METADATA))}, tags, sentinel_url, ...)")
        self.interval = float(interval)
        self.pid = os.getpid() if pid is None else int(pid)
        self.pandas = pandas
        self.start_time = self.stop_time = None
        self._run_id = None
        self._db = None if db is None else os.path.abspath(os.fspath(db))
        self._options = {k: v for k, v in metadata.items() if v is not None}
        self._tags, self._sentinel_token = tags, sentinel_token
        self._sentinel_url, self._upload_interval = sentinel_url, upload_interval
        self._cloud_discovery = cloud_discovery
        self._start_timeout, self._stop_timeout = start_timeout, stop_timeout
        self._recorder = None
        self._bin = None
        if autostart:
            self.start()

    @staticmethod
    def read(db, run=None, pandas=False):
        """A tracker that reads a run recorded before (the newest of db, or run ID) and records
        nothing: the same readers (process_metrics, stats(), report(), ...)."""
        t = Tracker(db, pandas=pandas)  # (not cls: ResourceTracker's first argument is pid)
        t._bin = find_binary()
        if run is None:
            last = t._rt("runs", "--last", "1", "--format", "jsonl").splitlines()
            if not last:
                raise RtrackError(f"{t._db} holds no run")
            run = json.loads(last[-1])["id"]
        t._run_id = int(run)
        return t

    # --- the recorder -------------------------------------------------------------------------
    def _record_argv(self):
        argv = [self._bin, "record", "--pid", str(self.pid), "--db", self._db,
                "--interval", repr(self.interval), "--quiet"]
        for k, v in self._options.items():
            argv += [_METADATA[k], str(v)]
        argv += _tag_args(self._tags)
        if self._sentinel_url is not None:
            argv += ["--sentinel-url", str(self._sentinel_url)]
        if self._upload_interval is not None:
            argv += ["--upload-interval", repr(float(self._upload_interval))]
        if self._cloud_discovery:
            argv.append("--cloud-discovery")
        return argv

    def _record_env(self):
        env = dict(os.environ)
        if self._sentinel_token:  # the token goes by the environment, never the command line
            env["SENTINEL_API_TOKEN"] = self._sentinel_token
        if self._cloud_discovery is False:
            env["RTRACK_CLOUD_DISCOVERY"] = "0"
        return env

    def start(self):
        """Start recording; returns once rtrack has stored its first sample. Raises RtrackError
        with rtrack's own message when it cannot start."""
        if self._recorder is not None:
            if os.getpid() != self._recorder.owner:
                raise RtrackError(f"this tracker's recorder belongs to process "
                                  f"{self._recorder.owner}: a forked child does not start another "
                                  "(it is tracked already, as a descendant)")
            raise RtrackError("this tracker has been started already (a tracker records once: "
                              "make a new one)")
        self._bin = find_binary()
        tmpdir = None
        if self._db is None:
            tmpdir = tempfile.mkdtemp(prefix="rtrack-")
            self._db = os.path.join(tmpdir, "rtrack.db")
        recorder = Recorder()
        began = time.time()
        try:
            recorder.start(self._record_argv(), self._record_env(), self._start_timeout)
        except BaseException:
            recorder.release()
            if tmpdir:
                shutil.rmtree(tmpdir, ignore_errors=True)
                self._db = None
            raise
        self._recorder = recorder
        self.start_time = began
        self._finalizer = weakref.finalize(self, _cleanup, recorder, tmpdir, self._stop_timeout)
        return self

    @property
    def run_id(self):
        """The run's id in the database (looked up when first needed: start() does not wait
        for it): the newest run of the tracked pid begun between start() and stop()."""
        if self._run_id is None and self.start_time is not None:
            until = self.stop_time if self.stop_time is not None else float("inf")
            ids = [r["id"] for r in map(json.loads, self._rt("runs", "--last", "100", "--format",
                                                             "jsonl").splitlines())
                   if r.get("pid") == self.pid
                   and self.start_time - 1 <= r.get("started_at", 0) <= until]
            if not ids:
                raise RtrackError(f"rtrack record started, but its run is not in {self._db}")
            self._run_id = max(ids)
        return self._run_id

    def stop(self):
        """End the recording: rtrack takes its final sample and exits. Harmless when stopped
        already or never started, and in a forked child (which leaves the recorder alone)."""
        r = self._recorder
        if r is None or os.getpid() != r.owner or self.stop_time is not None:
            return
        self.stop_time = time.time()
        r.stop(self._stop_timeout)

    @property
    def running(self):
        """The recorder is recording."""
        return self._recorder is not None and not self._recorder.exited()

    @property
    def db(self):
        """The database file the run is recorded into."""
        return self._db

    @property
    def recorder_pid(self):
        """The pid of the `rtrack record` process (None before start)."""
        return self._recorder.pid if self._recorder else None

    def __enter__(self):
        if self._recorder is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # --- reading back -------------------------------------------------------------------------
    def _rt(self, *args):
        """rtrack ARGS --db DB: its stdout, or RtrackError with its stderr."""
        if self._db is None or self._bin is None:
            raise RtrackError("this tracker has not recorded anything: start() it first "
                              "(or use it as `with rtrack.track() as t:`)")
        cmd = [self._bin, *args, "--db", self._db]
        out = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        if out.returncode != 0:
            msg = out.stderr.decode("utf-8", "replace").strip()
            raise RtrackError(msg or f"rtrack {args[0]} exited with status {out.returncode}")
        return out.stdout.decode("utf-8")

    def _table(self, table, pandas):
        t = Table.from_csv(self._rt("export", "--run", str(self.run_id), "--table", table))
        use = self.pandas if pandas is None else pandas
        return t.to_pandas() if use else t

    @property
    def process_metrics(self):
        """The Python ProcessTracker's 12 columns, one row per sample (rtrack export --table
        process)."""
        return self._table("process", None)

    @property
    def system_metrics(self):
        """The Python SystemTracker's 21 columns (rtrack export --table system)."""
        return self._table("system", None)

    def get_combined_metrics(self, bytes=False, human_names=False, system_prefix=None,
                             process_prefix=None, offset=None, pandas=None):
        """The 32 columns of the Python resource-tracker's get_combined_metrics() (rtrack
        export's default table), with its options: bytes (MiB and GB as bytes), human_names,
        the two prefixes, offset (skip that many rows)."""
        t = Table.from_csv(self._rt("export", "--run", str(self.run_id)))
        if offset:
            t = t[offset:]
        if bytes:
            for c in t.columns:
                f = byte_factor(c.split("_", 1)[1] if "_" in c else c)
                if f != 1 and c != "timestamp":
                    t[c] = [v * f if v != "" else v for v in t[c]]
        if human_names or system_prefix is not None or process_prefix is not None:
            t = t.rename(_combined_names(t.columns, human_names, system_prefix, process_prefix))
        use = self.pandas if pandas is None else pandas
        return t.to_pandas() if use else t

    @property
    def n_samples(self):
        """Samples recorded so far (after the first, which has no interval yet)."""
        return len(Table.from_csv(self._rt("export", "--run", str(self.run_id), "--table",
                                           "process")))

    def wait_for_samples(self, n=1, timeout=5):
        """Wait until n samples are recorded; TimeoutError after timeout seconds."""
        deadline = time.monotonic() + timeout
        while self.n_samples < n:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"fewer than {n} samples after {timeout} s")
            time.sleep(self.interval / 10)

    def summary(self, recommend_server=False):
        """rtrack summary --format json of the run, as a dict (docs/usage.md)."""
        args = ["summary", "--run", str(self.run_id), "--format", "json"]
        if recommend_server:
            args.append("--recommend-server")
        return json.loads(self._rt(*args))

    def stats(self):
        """The Python resource-tracker's stats(): its names and aggregations
        (summary's python_stats)."""
        return self.summary()["python_stats"]

    def recommend_resources(self):
        """{"cpu", "memory", "gpu", "vram"} as the Python resource-tracker returns them, from
        rtrack's recommendation (memory and VRAM in MiB)."""
        r = self.summary()["recommendation"]
        return {"cpu": r["cpu"], "memory": r["memory_mib"], "gpu": r["gpu"], "vram": r["vram_mib"]}

    def recommend_server(self):
        """The cheapest server that fits the recommendation, as Spare Cores Keeper describes it
        (a dict), or None with a warning saying why when Keeper cannot be asked (offline)."""
        s = self.summary(recommend_server=True)
        if s.get("server") is None:
            warnings.warn(f"no server recommendation: {s.get('server_error')}", RuntimeWarning,
                          stacklevel=2)
        return s.get("server")

    def report(self):
        """rtrack report's HTML page of the run, as a Report (save(), browse(), shown inline by
        a notebook)."""
        fd, path = tempfile.mkstemp(prefix="rtrack-report-", suffix=".html")
        os.close(fd)
        try:
            self._rt("report", "--run", str(self.run_id), "-o", path)
            with open(path, encoding="utf-8") as f:
                return Report(f.read())
        finally:
            os.unlink(path)


class ResourceTracker(Tracker):
    """The Python resource-tracker's ResourceTracker, by rtrack: the same arguments and method
    names. rtrack always records the whole tree and the system, with the host's facts: children,
    track_processes and track_system cannot be False; method and discover_server change
    nothing; discover_cloud asks the clouds' metadata services (rtrack's default: only when
    streaming)."""

    def __init__(self, pid=None, children=True, interval=1, method=None, autostart=False,
                 track_processes=True, track_system=True, discover_server=True,
                 discover_cloud=None, sentinel_token=None, upload_interval=None,
                 streaming_metadata=None, **options):
        if not children or not track_processes or not track_system:
            raise ValueError("rtrack records the process with all its descendants and the system "
                             "together: children, track_processes and track_system cannot be False")
        meta = dict(streaming_metadata or {})
        meta.pop("pid", None)
        meta.pop("command", None)
        if "tags" in meta:
            options.setdefault("tags", meta.pop("tags"))
        del method, discover_server
        super().__init__(pid=pid, interval=interval, autostart=autostart,
                         cloud_discovery=discover_cloud, sentinel_token=sentinel_token,
                         upload_interval=upload_interval, **meta, **options)


class _Track:
    """What track() returns: a context manager starting a Tracker, and a decorator tracking
    each call of a function (the last call's tracker is the function's .tracker)."""

    def __init__(self, options):
        self.options = options
        self.tracker = None

    def __enter__(self):
        self.tracker = Tracker(**self.options).start()
        return self.tracker

    def __exit__(self, *exc):
        self.tracker.stop()
        return False

    def __call__(self, func):
        options = self.options

        @functools.wraps(func)
        def tracked(*args, **kwargs):
            with _Track(options) as t:
                tracked.tracker = t
                return func(*args, **kwargs)

        tracked.tracker = None
        return tracked


def track(func=None, /, **options):
    """`with rtrack.track(...) as t:` records the block; `@rtrack.track(...)` (or `@rtrack.track`)
    records each call of a function. The options are Tracker's."""
    if func is not None:
        if not callable(func):
            raise TypeError("track() takes keyword options, or the function it decorates")
        return _Track(options)(func)
    return _Track(options)
