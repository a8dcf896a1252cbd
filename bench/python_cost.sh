#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/python_cost.sh - what tracking from Python costs the interpreter: the same CPU-bound
# Python function run untracked and inside rtrack.track() (python/rtrack, docs/python.md).
#
# usage: bench/python_cost.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# REPS (9) rounds; each round runs, in a fresh interpreter each and in an order that turns
# round by round, the function (a loop of WORK iterations, 15 000 000: about 2 s here)
# untracked, tracked at 1 s and tracked at 0.1 s (INTERVALS, "1 0.1"). Each interpreter reads
# its own CPU time around the function (nanoseconds on CPU of all its threads, from
# /proc/self/task/*/schedstat: exact) and its wall time; a tracked one also around start() and
# stop() (what the package itself costs: /bin/sh, rtrack runs, the first sample waited for),
# and the recorder's own CPU time (its /proc/PID/schedstat) with the samples it took. The rtrack
# package imported in every interpreter, tracked or not, outside what is measured.
#
# The report: medians (with min and max) side by side and the ratio of each tracked median to
# the untracked one. Environment knobs: REPS, WORK, INTERVALS, BENCH_OUT (keep the raw JSON
# lines), BENCH_MAX_BUSY and BENCH_QUIET_WAIT (wait for an idle machine first: see common.sh).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
bench_init "${1:-}"
REPS=${REPS:-9}
WORK=${WORK:-15000000}
INTERVALS=${INTERVALS:-1 0.1}
RAW=$BENCH_TMP/python_cost.jsonl
export RTRACK_BIN=$RTRACK PYTHONPATH=$BENCH_ROOT/python

cat >one.py <<'EOF'
import json, os, sys, time
import rtrack

def cpu_ns(pid="self"):
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/schedstat") as f:
            total += int(f.read().split()[0])
    return total

def work(n):
    x = 0
    for i in range(n):
        x += i * i % 7
    return x

mode, n = sys.argv[1], int(sys.argv[2])
res = {"mode": mode}
if mode != "untracked":
    c, w = cpu_ns(), time.monotonic()
    t = rtrack.Tracker(interval=float(mode)).start()
    res["start_cpu_ms"], res["start_wall_ms"] = (cpu_ns() - c) / 1e6, (time.monotonic() - w) * 1e3
    r0 = cpu_ns(t.recorder_pid)
c, w = cpu_ns(), time.monotonic()
work(n)
res["cpu_ms"], res["wall_ms"] = (cpu_ns() - c) / 1e6, (time.monotonic() - w) * 1e3
if mode != "untracked":
    res["recorder_cpu_ms"] = (cpu_ns(t.recorder_pid) - r0) / 1e6
    c, w = cpu_ns(), time.monotonic()
    t.stop()
    res["stop_cpu_ms"], res["stop_wall_ms"] = (cpu_ns() - c) / 1e6, (time.monotonic() - w) * 1e3
    res["samples"] = t.n_samples
print(json.dumps(res))
EOF

read -r -a intervals <<<"$INTERVALS"
modes=(untracked "${intervals[@]}")
: >"$RAW"
wait_quiet
for ((rep = 0; rep < REPS; rep++)); do
    note "round $((rep + 1))/$REPS"
    for ((k = 0; k < ${#modes[@]}; k++)); do
        m=${modes[$(((k + rep) % ${#modes[@]}))]}
        "$PY" one.py "$m" "$WORK" >>"$RAW"
    done
done
[[ -n ${BENCH_OUT:-} ]] && cp "$RAW" "$BENCH_OUT/"

echo "# Tracking from Python: the interpreter's own CPU, untracked and tracked"
echo
machine_info
echo "- Python: $("$PY" --version 2>&1); the function: a loop of $WORK iterations; $REPS rounds"
echo
"$PY" - "$RAW" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r["mode"] for r in rows))
def col(m, k):
    v = [r[k] for r in rows if r["mode"] == m and k in r]
    return v
def cell(m, k):
    v = col(m, k)
    return f"{statistics.median(v):.1f} ({min(v):.1f} … {max(v):.1f})" if v else "-"
base = statistics.median(col("untracked", "cpu_ms"))
names = {"untracked": "untracked"}
head = ["figure (ms; median, min … max)"] + [names.get(m, f"tracked, --interval {m}") for m in modes]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for k, label in (("cpu_ms", "the interpreter's CPU during the function"),
                 ("wall_ms", "the function's wall time"),
                 ("start_cpu_ms", "the interpreter's CPU in start()"),
                 ("start_wall_ms", "start()'s wall time (to the first sample stored)"),
                 ("stop_cpu_ms", "the interpreter's CPU in stop()"),
                 ("stop_wall_ms", "stop()'s wall time (to the final sample)"),
                 ("recorder_cpu_ms", "the recorder's CPU during the function")):
    print(f"| {label} | " + " | ".join(cell(m, k) for m in modes) + " |")
ratio = [f"{statistics.median(col(m, 'cpu_ms')) / base:.3f}" for m in modes]
print("| the interpreter's CPU during the function, ÷ untracked | " + " | ".join(ratio) + " |")
# the same, round by round (each round ran every mode once): the median of the rounds' ratios
rounds = [rows[i:i + len(modes)] for i in range(0, len(rows), len(modes))]
per = []
for m in modes:
    r = [next(x["cpu_ms"] for x in g if x["mode"] == m) /
         next(x["cpu_ms"] for x in g if x["mode"] == "untracked") for g in rounds]
    per.append(f"{statistics.median(r):.3f} ({min(r):.3f} … {max(r):.3f})")
print("| the same, median of the rounds' ratios (min … max) | " + " | ".join(per) + " |")
samples = [f"{statistics.median(col(m, 'samples')):.0f}" if col(m, "samples") else "-" for m in modes]
print("| samples (median) | " + " | ".join(samples) + " |")
EOF
