#!/usr/bin/env bash
# rtrack summary of runs longer than one stretch of its pass (src/summary/summary.c reads a run in
# stretches of 16 384 samples, the main thread from the front and a second thread from the back,
# and merges them in order): hand-made runs of 40 000 and 20 000 samples whose figures Python
# works out here from the values it wrote — every percentile, mean and max, a memory column with
# NULL gaps, the tree's CPU time over the wall time as its mean cores, a short final sample whose
# rates are left out (and a short one opening the second
# stretch, seq 16 384), a tie for the peak across stretches, a CPU spike in a late stretch's
# sparkline bucket, and a --job over both runs.
. "$(dirname "$0")/lib.sh" "$1"

"$RTRACK" record --db long.db --duration 0.05 --quiet
check "a database to hold the runs" "$?" 0

python3 - long.db <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("PRAGMA foreign_keys = OFF")
cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
keep = [c for c in cols if c not in ("id", "uuid", "job_name", "started_at", "ended_at", "status",
                                     "requested_interval_s", "mode")]
for run, n in ((101, 40000), (102, 20000)):
    con.execute("INSERT INTO runs (id, uuid, job_name, started_at, ended_at, status, "
                "requested_interval_s, mode, %s) SELECT ?, ?, 'longjob', ?, ?, 'finished', 1.0, "
                "'record', %s FROM runs WHERE id = 1" % (", ".join(keep), ", ".join(keep)),
                (run, "long-%d" % run, 1000.0 * run, 1000.0 * run + n))
    rows = []
    for seq in range(n + 1):
        kind = "baseline" if seq == 0 else ("final" if seq == n else "periodic")
        iv = None if seq == 0 else (0.2 if seq == n else 1.0)
        cpu = ((seq * 7919) % 1000) / 1000.0
        if run == 101 and seq == 16384:
            iv, cpu = 0.3, 30.0  # a short sample opening the second stretch: left out too
        if run == 101 and seq == 35001:
            cpu = 8.0  # the spike: sparkline bucket 35 of 40
        if seq == n:
            cpu = 50.0  # the short final sample: a rate left out
        pss = None if seq % 5000 == 0 else 1024 * (1 + (seq * 31) % 977)
        if seq in (10000, 30000):
            pss = 1024 * 5000  # the peak, twice: the first one counts
        rd = (seq * 97) % 4096
        rows.append((run, seq, kind, 1000.0 * run + seq, float(seq), iv, 42, cpu, pss, rd,
                     ((seq * 13) % 500) / 100.0, 1024 * (2000 + seq % 300)))
    con.executemany("INSERT INTO samples (run_id, seq, kind, ts, mono, interval_s, proc_root_pid, "
                    "proc_cpu_usage, proc_pss_kib, proc_read_bytes, cpu_usage, mem_used_kib) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
con.commit()
EOF
check "the runs written" "$?" 0

"$RTRACK" summary --db long.db --run 101 --format json >r101.json
check "summary of run 101: exit 0" "$?" 0
"$RTRACK" summary --db long.db --job longjob --format json >job.json
check "summary of job longjob: exit 0" "$?" 0

# Python's figures: nearest rank over the values kept as floats (summary.c keeps float32 for the
# selection and prints the shortest decimal of 7 digits), means exact (fsum), the short final
# sample's rates left out, NULL memory left out.
expect() { # RUNS (101 or 101,102) JSON
    python3 - "$1" "$2" <<'EOF'
import json, math, struct, sys
runs = [int(r) for r in sys.argv[1].split(",")]
j = json.load(open(sys.argv[2]))
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
def rank(vals, p):
    v = sorted(f32(x) for x in vals)
    r = max(1, math.ceil(p * len(v)))
    return float("%.7g" % v[r - 1])
cpu, mem, rd, scpu, smem = [], [], [], [], []
cpu_s, wall = [], 0.0  # the tree's CPU seconds: every sample's cores x its interval
for run in runs:
    n = 40000 if run == 101 else 20000
    wall += n  # ended_at - started_at
    for seq in range(1, n + 1):
        cs = ((seq * 7919) % 1000) / 1000.0
        cs = 30.0 * 0.3 if run == 101 and seq == 16384 else 8.0 if run == 101 and seq == 35001 \
            else 50.0 * 0.2 if seq == n else cs
        cpu_s.append(cs)
        c = ((seq * 7919) % 1000) / 1000.0
        if run == 101 and seq == 35001:
            c = 8.0
        short = seq == n or (run == 101 and seq == 16384)
        if short:
            c = 50.0
        pss = None if seq % 5000 == 0 else 1024 * (1 + (seq * 31) % 977)
        if seq in (10000, 30000):
            pss = 1024 * 5000
        iv = 0.3 if seq == 16384 and run == 101 else 0.2 if short else 1.0
        if not short:
            cpu.append(c)
            rd.append(((seq * 97) % 4096) / iv)
            scpu.append(((seq * 13) % 500) / 100.0)
        if pss is not None:
            mem.append(pss / 1024.0)
        smem.append((2000 + seq % 300) * 1024 / 1024.0)
bad = []
def same(name, got, want, rel=0.0):
    if got is None or abs(got - want) > rel * abs(want):
        bad.append("%s: %r, want %r" % (name, got, want))
for side, key, vals in (("process", "cpu_cores", cpu), ("process", "memory_mib", mem),
                        ("process", "disk_read_bytes_per_s", rd), ("system", "cpu_cores", scpu),
                        ("system", "memory_mib", smem)):
    st = j[side][key]
    if side == "process" and key == "cpu_cores":
        # the tree's mean cores: CPU time / wall time, the one figure of them (issue 36)
        same("cpu_time.total_s", j["cpu_time"]["total_s"], math.fsum(cpu_s), 1e-12)
        same("cpu_time.wall_s", j["cpu_time"]["wall_s"], wall, 1e-12)
        same(side + "." + key + ".mean", st["mean"], math.fsum(cpu_s) / wall, 1e-12)
    else:
        same(side + "." + key + ".mean", st["mean"], math.fsum(vals) / len(vals), 1e-12)
    same(side + "." + key + ".max", st["max"], max(vals))
    same(side + "." + key + ".p50", st["p50"], min(rank(vals, 0.5), max(vals)))
    same(side + "." + key + ".p95", st["p95"], min(rank(vals, 0.95), max(vals)))
# (--job: the newest run's)
same("run.samples", j["run"]["samples"], 20000 if len(runs) == 2 else 40000)
pk = j["memory_peak"]
same("memory_peak.mib", pk["mib"], 5000.0)
# the first of the two peaks: run 101's seq 10000, 10000 s after its start
same("memory_peak.at_s", pk["at_s"], 10000.0)
if len(runs) == 1:
    line = j["sparklines"]["cpu_cores"]
    top = [i for i, ch in enumerate(line) if ch == max(line)]
    if len(line) != 40 or top != [35]:
        bad.append("cpu sparkline: highest at %r of %d, want [35] of 40" % (top, len(line)))
    same("sparkline_scale.cpu_cores", j["sparkline_scale"]["cpu_cores"], 8.0)
    # python stats: one run, duration = last - first + interval (the short one's 0.2 counted as
    # the samples' span: ts 1 to 40000, nominal 1 s)
    same("python_stats.timestamp.duration", j["python_stats"]["timestamp"]["duration"], 40000.0)
print("\n".join(bad) if bad else "ok")
EOF
}
check "run 101: every figure as Python works it out" "$(expect 101 r101.json)" ok
check "job longjob (runs 101 and 102): every figure as Python works it out" \
    "$(expect 101,102 job.json)" ok

finish
