#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/threads.sh - CPU per sample of `rtrack record --pid` on thread-heavy processes (issue
# 32), two builds side by side with sysstat's sadc, all three started at the same moment.
#
# usage: bench/threads.sh OLD_RTRACK [NEW_RTRACK]   (NEW default: $RTRACK, else build/rtrack)
#
# The workload is rt_threads (bench/threads.c), built beside NEW (or RT_THREADS=PATH): threads
# that block on a condition variable, as a pool waiting for work. Configurations (CONFIGS):
#   t10 t200 t2000 t10000  one process with that many threads
#   tree50x40              a tree of 50 processes with 40 threads each (2 000 threads)
#   busy2000               2 000 threads, 4 of them working 5 ms every 50 ms (not by default)
#   tree5                  cpu_per_sample.sh's 5-process tree (sh + 4 sleeps; not by default)
# each recorded every INTERVALS seconds ("1 0.1"). For each repetition, configuration and
# interval: the machine is waited on until quiet (common.sh), the workload started, then OLD,
# NEW (in turns first) and sadc (default activities, every 1 s: it cannot sample faster) start
# together; after WARMUP seconds a window of WINDOW_1S (at 1 s) or WINDOW_FAST seconds is
# measured as in cpu_per_sample.sh: each process's CPU time (schedstat) at the window's edges
# divided by the samples it took in it. The two recorders read the same files at the same
# time, so each slows the other a little, alike. Beside them, the floor (rt_threads -F): the
# least any tracker reporting the tree's PSS and CPU time reads, each process's stat and
# smaps_rollup through kept descriptors every interval (the kernel's part grows with threads).
#
# Knobs: REPS (3), WARMUP (5), WINDOW_1S (30), WINDOW_FAST (15), CONFIGS ("t10 t200 t2000
# t10000 tree50x40"), INTERVALS ("1 0.1"), SADC, RT_THREADS, BENCH_OUT, BENCH_KEEP,
# BENCH_MAX_BUSY and BENCH_QUIET_WAIT (common.sh), REPORT_ONLY (a raw TSV saved by an earlier
# run: print its report, measure nothing).
#
# Prints progress on stderr and a markdown report on stdout: per configuration and interval the
# medians of µs per sample of each, and the medians of the per-repetition ratios.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
if [[ -n ${REPORT_ONLY:-} ]]; then
    REPORT_ONLY=$(realpath -e "$REPORT_ONLY") || die "cannot read ${REPORT_ONLY}"
fi
[[ -n ${1:-} || -n ${REPORT_ONLY:-} ]] || die "usage: bench/threads.sh OLD_RTRACK [NEW_RTRACK]"
OLD=${1:-}
if [[ -n $OLD ]]; then
    OLD=$(cd "$(dirname "$OLD")" && pwd)/$(basename "$OLD")
    [[ -x $OLD ]] || die "old rtrack binary '$OLD' not found"
fi
bench_init "${2:-}"
NEW=$RTRACK
SADC=${SADC:-/usr/lib/sysstat/sadc}
RT_THREADS=${RT_THREADS:-$(dirname "$NEW")/rt_threads}
REPS=${REPS:-3}
WARMUP=${WARMUP:-5}
WINDOW_1S=${WINDOW_1S:-30}
WINDOW_FAST=${WINDOW_FAST:-15}
CONFIGS=${CONFIGS:-t10 t200 t2000 t10000 tree50x40}
INTERVALS=${INTERVALS:-1 0.1}
RAW=$BENCH_TMP/threads.tsv
if [[ -z ${REPORT_ONLY:-} ]]; then
    [[ -x $SADC ]] || die "sadc not found at $SADC (install sysstat or set SADC=...)"
    [[ -x $RT_THREADS ]] || die "rt_threads not found at $RT_THREADS (build it, or set RT_THREADS)"
    command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
fi

# workload CONFIG -> rt_threads' arguments
workload() {
    case $1 in
    t[0-9]*) echo "-t ${1#t}" ;;
    tree50x40) echo "-p 50 -t 40" ;;
    busy2000) echo "-t 2000 -b 4" ;;
    *) die "unknown configuration '$1'" ;;
    esac
}

WL_PID=""
start_workload() {
    if [[ $1 == tree5 ]]; then
        start_tree
        WL_PID=$TREE_PID
        return 0
    fi
    local args ready=$BENCH_TMP/ready
    read -r -a args <<<"$(workload "$1")"
    rm -f "$ready"
    setsid "$RT_THREADS" "${args[@]}" -r "$ready" </dev/null >/dev/null 2>&1 &
    WL_PID=$!
    BENCH_PGIDS+=("$WL_PID")
    for _ in $(seq 600); do
        [[ -s $ready ]] && return 0
        kill -0 "$WL_PID" 2>/dev/null || die "rt_threads $* exited"
        sleep 0.05
    done
    die "rt_threads $* did not start in 30 s"
}
stop_workload() {
    if [[ $1 == tree5 ]]; then
        stop_tree
        return 0
    fi
    kill -TERM -- "-$WL_PID" 2>/dev/null || true
    wait "$WL_PID" 2>/dev/null || true
    local keep=() p
    for p in "${BENCH_PGIDS[@]}"; do [[ $p == "$WL_PID" ]] || keep+=("$p"); done
    BENCH_PGIDS=("${keep[@]}")
}

# samples DB W0 W1: rows of samples whose ts lies in the window (microseconds)
samples_in() {
    sqlite3 "$1" "SELECT count(*) FROM samples WHERE ts >= $(us_to_s "$2") AND ts < $(us_to_s "$3")"
}

# measure CONFIG INTERVAL REP: one side-by-side measurement; appends rows to $RAW
measure() {
    local cfg=$1 interval=$2 rep=$3 window
    window=$([[ $interval == 1 ]] && echo "$WINDOW_1S" || echo "$WINDOW_FAST")
    local d=$BENCH_TMP/$cfg-$interval-$rep
    mkdir -p "$d"
    wait_quiet
    start_workload "$cfg"
    local threads procs
    threads=$(awk '/^Threads:/ {print $2}' /proc/"$WL_PID"/status)
    procs=$((1 + $(pgrep -c -P "$WL_PID" || true)))
    local count=$(((WARMUP + window) * 4 + 100)) t0 opid npid spid fpid
    t0=$(now_us)
    # the two builds start in turns first: a process started just after another is a little
    # faster (warmer caches)
    if ((rep % 2)); then
        "$OLD" record --db "$d/old.db" --interval "$interval" --quiet --pid "$WL_PID" </dev/null &
        opid=$!
        "$NEW" record --db "$d/new.db" --interval "$interval" --quiet --pid "$WL_PID" </dev/null &
        npid=$!
    else
        "$NEW" record --db "$d/new.db" --interval "$interval" --quiet --pid "$WL_PID" </dev/null &
        npid=$!
        "$OLD" record --db "$d/old.db" --interval "$interval" --quiet --pid "$WL_PID" </dev/null &
        opid=$!
    fi
    "$SADC" 1 "$count" "$d/sadc.sa" </dev/null &
    spid=$!
    "$RT_THREADS" -F "$WL_PID" -i "$interval" </dev/null &
    fpid=$!
    BENCH_PIDS=("$opid" "$npid" "$spid" "$fpid")
    local w0 w1 c0 c1 o0 o1 n0 n1 s0 s1 f0 f1
    sleep_until_us $((t0 + WARMUP * 1000000 + 450000))
    now_us_v w0
    cpu_busy_read c0
    cpu_read "$opid" o0 || die "old rtrack exited early ($cfg at $interval s)"
    cpu_read "$npid" n0 || die "new rtrack exited early ($cfg at $interval s)"
    cpu_read "$spid" s0 || die "sadc exited early"
    cpu_read "$fpid" f0 || die "the floor reader exited early"
    sleep_until_us $((w0 + window * 1000000))
    now_us_v w1
    cpu_busy_read c1
    cpu_read "$opid" o1 || die "old rtrack exited during the window ($cfg at $interval s)"
    cpu_read "$npid" n1 || die "new rtrack exited during the window ($cfg at $interval s)"
    cpu_read "$spid" s1 || die "sadc exited during the window"
    cpu_read "$fpid" f1 || die "the floor reader exited during the window"
    local load rest sysprocs=(/proc/[0-9]*)
    read -r load rest </proc/loadavg
    kill -TERM "$opid" "$npid" "$spid" "$fpid"
    wait "$opid" || note "warning: old rtrack exited with $? ($cfg $interval rep $rep)"
    wait "$npid" || note "warning: new rtrack exited with $? ($cfg $interval rep $rep)"
    wait "$spid" "$fpid" 2>/dev/null || true
    BENCH_PIDS=()
    stop_workload "$cfg"
    local on nn
    on=$(samples_in "$d/old.db" "$w0" "$w1")
    nn=$(samples_in "$d/new.db" "$w0" "$w1")
    local ca cb oa ob na nb sa sb fa fb others
    read -r -a ca <<<"$c0"
    read -r -a cb <<<"$c1"
    read -r -a oa <<<"$o0"
    read -r -a ob <<<"$o1"
    read -r -a na <<<"$n0"
    read -r -a nb <<<"$n1"
    read -r -a sa <<<"$s0"
    read -r -a sb <<<"$s1"
    read -r -a fa <<<"$f0"
    read -r -a fb <<<"$f1"
    # others: the share of all CPUs busy in the window, less what the four measured used
    others=$((((cb[0] - ca[0]) - (ob[1] - oa[1]) - (nb[1] - na[1]) - (sb[1] - sa[1]) -
        (fb[1] - fa[1])) * 1000 / (cb[1] - ca[1])))
    ((others >= 0)) || others=0
    local fsamp
    fsamp=$("$PY" -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2])))" "$window" "$interval")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$interval" \
        "$rep" "$threads" "$procs" $((ob[0] - oa[0])) "$on" $((nb[0] - na[0])) "$nn" \
        $((sb[0] - sa[0])) "$window" $((fb[0] - fa[0])) "$fsamp" "$load" "${#sysprocs[@]}" \
        "$((others / 10)).$((others % 10))" >>"$RAW"
    note "$cfg at $interval s, rep $rep: $threads threads in the root, $procs processes; samples old $on new $nn; others ${others}‰"
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    cp "$REPORT_ONLY" "$RAW" || die "cannot read $REPORT_ONLY"
else
    printf 'config\tinterval\trep\tthreads\tprocs\told_ns\told_samples\tnew_ns\tnew_samples\tsadc_ns\tsadc_samples\tfloor_ns\tfloor_samples\tload1\tsysprocs\tothers_pct\n' >"$RAW"
    for ((rep = 1; rep <= REPS; rep++)); do
        for cfg in $CONFIGS; do # interleaved: a drifting load hits every configuration alike
            for interval in $INTERVALS; do
                measure "$cfg" "$interval" "$rep"
            done
        done
    done
fi
if [[ -n ${BENCH_OUT:-} && -z ${REPORT_ONLY:-} ]]; then
    cp "$RAW" "$BENCH_OUT/threads.tsv"
fi

echo "## CPU per sample of thread-heavy processes: two builds and sadc, side by side"
echo
if [[ -n ${REPORT_ONLY:-} ]]; then
    echo "- report re-rendered from $REPORT_ONLY"
else
    echo "- old: $OLD"
    machine_info
    echo "- $REPS repetitions; warm-up $WARMUP s; window ${WINDOW_1S} s at 1 s, ${WINDOW_FAST} s faster"
fi
echo
"$PY" - "$RAW" <<'PY'
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = statistics.median
desc = {"tree50x40": "tree of 50 processes x 40 threads", "busy2000": "2 000 threads, 4 busy",
        "tree5": "5-process tree (sh + 4 sleeps)"}
order = []
by = {}
for r in rows:
    k = (r["config"], r["interval"])
    if k not in by:
        order.append(k)
    by.setdefault(k, []).append(r)

def us(r, who):
    return int(r[who + "_ns"]) / 1e3 / int(r[who + "_samples"])

print("| workload | interval | threads | old µs/sample | new µs/sample | floor µs/sample "
      "| sadc µs/sample (1 s) | new/old | new/sadc | old/sadc | others' CPU % | load (1 min) | reps |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
for cfg, iv in order:
    rs = by[(cfg, iv)]
    o = [us(r, "old") for r in rs]
    n = [us(r, "new") for r in rs]
    s = [us(r, "sadc") for r in rs]
    f = [us(r, "floor") for r in rs]
    no = [a / b for a, b in zip(n, o)]
    ns = [a / b for a, b in zip(n, s)]
    os_ = [a / b for a, b in zip(o, s)]
    oth = sorted(float(r["others_pct"]) for r in rs)
    load = sorted(float(r["load1"]) for r in rs)
    name = desc.get(cfg, f"one process, {cfg[1:]} threads")
    print(f"| {name} | {iv} s | {rs[0]['threads']} | {med(o):.0f} | **{med(n):.0f}** | {med(f):.0f} | {med(s):.0f} "
          f"| {med(no):.2f} | {med(ns):.2f} | {med(os_):.2f} | {oth[0]:g} to {oth[-1]:g} "
          f"| {load[0]:g} to {load[-1]:g} | {len(rs)} |")
PY
