#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/cpu_per_sample.sh - CPU time per sample of a running `rtrack record`, side by side with
# sysstat's sadc started at the same moment.
#
# usage: bench/cpu_per_sample.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# For each repetition and configuration, rtrack record and sadc (default activities) are started
# together; after WARMUP seconds a window of WINDOW seconds is measured: CPU time of each process
# at the start and end of the window (/proc/PID/schedstat, ns; utime+stime ticks as a
# cross-check) divided by the samples each took in the window (rtrack: rows of `samples` whose
# ts falls in the window; sadc: WINDOW / its interval, the window being placed between two of
# its samples). Configurations:
#   a  system only, 1 s       (plus a third process: sadc -S XALL, for an extra comparison row)
#   b  5-process tree, 1 s    (sh + 4 sleeps, passed with --pid)
#   c  system only, 0.1 s
#   d  5-process tree, 0.1 s
# and two optional ones (CONFIGS="e f"), to see how the cost scales with the number of
# processes on the system: EXTRA_PROCS (500) idle processes, not tracked, are started first:
#   e  5-process tree, 1 s, EXTRA_PROCS more processes on the system
#   f  system only, 1 s, EXTRA_PROCS more processes on the system
# sadc cannot sample faster than once a second, so in c and d it runs at 1 s: the ratio then
# compares rtrack's cost per sample at 0.1 s with sadc's at 1 s.
#
# Noise: before each measurement the script waits for the machine to be idle (see wait_quiet in
# common.sh), and for each window it reports the share of all CPUs other processes used, the
# load average and the number of processes on the system.
#
# Environment knobs: REPS (5), WARMUP (5 s), WINDOW_1S (60 s window at 1 s), WINDOW_FAST (30 s
# at 0.1 s), CONFIGS ("a b c d"), EXTRA_PROCS (500), SADC (/usr/lib/sysstat/sadc), BENCH_OUT
# (directory to keep the raw TSV in), BENCH_KEEP=1 (keep the scratch databases),
# BENCH_MAX_BUSY (25 %) and BENCH_QUIET_WAIT (300 s), QUIET_PCT (30: the summary also gives
# medians over the repetitions where others used less than this % of the CPUs), REPORT_ONLY
# (a raw TSV saved by an earlier run: print its report, measure nothing).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
if [[ -n ${REPORT_ONLY:-} ]]; then # relative to the caller's directory
    REPORT_ONLY=$(realpath -e "$REPORT_ONLY") || die "cannot read ${REPORT_ONLY}"
fi
bench_init "${1:-}"
SADC=${SADC:-/usr/lib/sysstat/sadc}
[[ -x $SADC ]] || die "sadc not found at $SADC (install sysstat or set SADC=...)"
command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
REPS=${REPS:-5}
WARMUP=${WARMUP:-5}
WINDOW_1S=${WINDOW_1S:-60}
WINDOW_FAST=${WINDOW_FAST:-30}
CONFIGS=${CONFIGS:-a b c d}
EXTRA_PROCS=${EXTRA_PROCS:-500}
QUIET_PCT=${QUIET_PCT:-30}
CLK_TCK=$(getconf CLK_TCK)
RAW=$BENCH_TMP/cpu_per_sample.tsv

# config NAME -> "INTERVAL TREE(0|1) WINDOW XALL(0|1) CROWD(0|1)"
config() {
    case $1 in
    a) echo "1 0 $WINDOW_1S 1 0" ;;
    b) echo "1 1 $WINDOW_1S 0 0" ;;
    c) echo "0.1 0 $WINDOW_FAST 0 0" ;;
    d) echo "0.1 1 $WINDOW_FAST 0 0" ;;
    e) echo "1 1 $WINDOW_1S 0 1" ;;
    f) echo "1 0 $WINDOW_1S 0 1" ;;
    *) die "unknown configuration '$1' (a b c d e f)" ;;
    esac
}

# start_crowd / stop_crowd: EXTRA_PROCS idle processes (sleeps under one sh, own process
# group), not part of any tracked tree.
CROWD_PID=""
start_crowd() {
    setsid sh -c "i=0; while [ \$i -lt $EXTRA_PROCS ]; do sleep 100000 & i=\$((i + 1)); done; wait" \
        </dev/null >/dev/null 2>&1 &
    CROWD_PID=$!
    BENCH_PGIDS+=("$CROWD_PID")
    local n
    for _ in $(seq 300); do
        n=$( (grep -l "^PPid:[[:space:]]*$CROWD_PID\$" /proc/[0-9]*/status 2>/dev/null || true) | wc -l)
        ((n >= EXTRA_PROCS)) && return 0
        sleep 0.1
    done
    die "the $EXTRA_PROCS extra processes did not start"
}
stop_crowd() {
    kill -TERM -- "-$CROWD_PID" 2>/dev/null || true
    wait "$CROWD_PID" 2>/dev/null || true
    local keep=() p
    for p in "${BENCH_PGIDS[@]}"; do [[ $p == "$CROWD_PID" ]] || keep+=("$p"); done
    BENCH_PGIDS=("${keep[@]}")
}

# row CONFIG REP TOOL INTERVAL START END SAMPLES PROCS "LOAD1 SYSPROCS OTHERS": appends one row
# to $RAW; START and END are "NS TICKS" readings at the edges of the window; LOAD1 and SYSPROCS,
# the 1-minute load average and the number of processes on the system at the end of it; OTHERS,
# the percentage of all CPUs that other processes kept busy during the window (noise).
row() {
    local a b c
    read -r -a a <<<"$5"
    read -r -a b <<<"$6"
    read -r -a c <<<"$9"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$7" \
        $((b[0] - a[0])) $((b[1] - a[1])) "$8" "${c[0]}" "${c[1]}" "${c[2]}" >>"$RAW"
}

# measure CONFIG REP: one side-by-side measurement; appends rows to $RAW.
measure() {
    local cfg=$1 rep=$2 interval tree window xall crowd
    read -r interval tree window xall crowd <<<"$(config "$cfg")"
    local d=$BENCH_TMP/$cfg-$rep
    mkdir -p "$d"
    wait_quiet
    local pidopt=()
    ((crowd)) && start_crowd
    if ((tree)); then
        start_tree
        pidopt=(--pid "$TREE_PID")
    fi
    # sadc is given a sample count it will not reach; it is stopped after the window
    local count=$(((WARMUP + window) * 4 + 100))
    local t0 rpid spid xpid=""
    t0=$(now_us)
    "$RTRACK" record --db "$d/rtrack.db" --interval "$interval" --quiet "${pidopt[@]}" \
        </dev/null &
    rpid=$!
    "$SADC" 1 "$count" "$d/sadc.sa" </dev/null &
    spid=$!
    BENCH_PIDS=("$rpid" "$spid")
    if ((xall)); then
        "$SADC" -S XALL 1 "$count" "$d/sadc-xall.sa" </dev/null &
        xpid=$!
        BENCH_PIDS+=("$xpid")
    fi

    # The window starts 0.45 s after a whole second of the common start: between two samples
    # of both tools at 1 s and at 0.1 s, so no sample straddles a window edge. The readings at
    # each edge do not fork and take well under a millisecond; w0 and w1 are taken just
    # before them.
    local w0 w1 e0 e1 r0 r1 s0 s1 x0="" x1="" c0 c1
    sleep_until_us $((t0 + WARMUP * 1000000 + 450000))
    now_us_v w0
    cpu_busy_read c0
    cpu_read "$rpid" r0 || die "rtrack exited early (config $cfg)"
    cpu_read "$spid" s0 || die "sadc exited early"
    [[ -z $xpid ]] || cpu_read "$xpid" x0 || die "sadc -S XALL exited early"
    now_us_v e0
    sleep_until_us $((w0 + window * 1000000))
    now_us_v w1
    cpu_busy_read c1
    cpu_read "$rpid" r1 || die "rtrack exited during the window (config $cfg)"
    cpu_read "$spid" s1 || die "sadc exited during the window"
    [[ -z $xpid ]] || cpu_read "$xpid" x1 || die "sadc -S XALL exited during the window"
    now_us_v e1
    local load rest sysprocs=(/proc/[0-9]*)
    read -r load rest </proc/loadavg
    ((e0 - w0 < 5000 && e1 - w1 < 5000)) ||
        note "warning: slow readings at the window edges ($((e0 - w0)) us, $((e1 - w1)) us)"

    kill -TERM "$rpid" "$spid" ${xpid:+"$xpid"}
    local rc=0
    wait "$rpid" || rc=$?
    ((rc == 0)) || note "warning: rtrack record exited with $rc (config $cfg rep $rep)"
    wait "$spid" ${xpid:+"$xpid"} 2>/dev/null || true
    BENCH_PIDS=()
    ((tree)) && stop_tree
    ((crowd)) && stop_crowd

    local nsamp procs
    IFS='|' read -r nsamp procs <<<"$(sqlite3 "$d/rtrack.db" \
        "SELECT count(*), ifnull(round(avg(proc_count), 2), '-') FROM samples
         WHERE ts >= $(us_to_s "$w0") AND ts < $(us_to_s "$w1")")"
    # others: share of all CPUs busy in the window, less what rtrack and sadc used
    local ca cb ra rb sa sb xa=(0 0) xb=(0 0) others
    read -r -a ca <<<"$c0"
    read -r -a cb <<<"$c1"
    read -r -a ra <<<"$r0"
    read -r -a rb <<<"$r1"
    read -r -a sa <<<"$s0"
    read -r -a sb <<<"$s1"
    [[ -z $xpid ]] || { read -r -a xa <<<"$x0" && read -r -a xb <<<"$x1"; }
    others=$((((cb[0] - ca[0]) - (rb[1] - ra[1]) - (sb[1] - sa[1]) - (xb[1] - xa[1])) * 1000 /
        (cb[1] - ca[1])))
    ((others >= 0)) || others=0
    load="$load ${#sysprocs[@]} $((others / 10)).$((others % 10))"
    local expect
    expect=$("$PY" -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2])))" "$window" "$interval")
    ((nsamp >= expect - 2 && nsamp <= expect + 2)) ||
        note "warning: rtrack stored $nsamp samples in the window, $expect expected (config $cfg rep $rep)"
    row "$cfg" "$rep" rtrack "$interval" "$r0" "$r1" "$nsamp" "$procs" "$load"
    row "$cfg" "$rep" sadc 1 "$s0" "$s1" "$window" "" "$load" # sadc: window / 1 s samples
    [[ -z $xpid ]] || row "$cfg" "$rep" sadc-xall 1 "$x0" "$x1" "$window" "" "$load"
    note "config $cfg rep $rep: rtrack $nsamp samples (tree $procs procs), window $(us_to_s $((w1 - w0))) s"
}

if [[ -n ${REPORT_ONLY:-} ]]; then # re-render the report of an earlier run's raw TSV
    cp "$REPORT_ONLY" "$RAW" || die "cannot read $REPORT_ONLY"
else
    printf 'config\trep\ttool\tinterval\tsamples\tcpu_ns\tticks\tprocs\tload1\tsysprocs\tothers_pct\n' >"$RAW"
    for ((rep = 1; rep <= REPS; rep++)); do
        for cfg in $CONFIGS; do # configurations interleaved: drifting load hits all alike
            measure "$cfg" "$rep"
        done
    done
fi
if [[ -n ${BENCH_OUT:-} && -z ${REPORT_ONLY:-} ]]; then
    mkdir -p "$BENCH_OUT"
    cp "$RAW" "$BENCH_OUT/cpu_per_sample.tsv"
fi

echo "## CPU per sample: rtrack record vs sadc, side by side"
echo
if [[ -n ${REPORT_ONLY:-} ]]; then
    echo "- report re-rendered from $REPORT_ONLY"
else
    machine_info
    echo "- $REPS repetitions; warm-up $WARMUP s; window ${WINDOW_1S} s at 1 s, ${WINDOW_FAST} s at 0.1 s; CLK_TCK $CLK_TCK"
fi
echo
"$PY" - "$RAW" "$CLK_TCK" "$QUIET_PCT" <<'PY'
import csv, statistics, sys

raw, clk_tck, quiet_pct = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rows = list(csv.DictReader(open(raw), delimiter="\t"))
desc = {"a": "system only, 1 s", "b": "5-process tree, 1 s",
        "c": "system only, 0.1 s", "d": "5-process tree, 0.1 s",
        "e": "5-process tree, 1 s, crowded system", "f": "system only, 1 s, crowded system"}
by = {}
for r in rows:
    by.setdefault(r["config"], {}).setdefault(int(r["rep"]), {})[r["tool"]] = r

def us(r):  # CPU per sample from schedstat, microseconds
    return int(r["cpu_ns"]) / 1e3 / int(r["samples"])

def us_ticks(r):  # the same from utime+stime ticks (10 ms resolution at CLK_TCK 100)
    return int(r["ticks"]) / clk_tck * 1e6 / int(r["samples"])

med = statistics.median
summary = []
for cfg in sorted(by):
    reps = by[cfg]
    tools = [t for t in ("rtrack", "sadc", "sadc-xall") if t in reps[min(reps)]]
    r0 = reps[min(reps)]["rtrack"]
    print(f"### ({cfg}) {desc.get(cfg, cfg)}: rtrack every {r0['interval']} s, sadc every 1 s")
    print()
    head = ["rep", "others' CPU %", "load (1 min)", "processes", "rtrack samples", "tree procs",
            "rtrack µs/sample"]
    head += [f"{t} µs/sample" for t in tools[1:]]
    head += [f"rtrack/{t}" for t in tools[1:]]
    head += ["rtrack µs/sample (ticks)", "sadc µs/sample (ticks)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    cols = {k: [] for k in ["rt"] + tools[1:] + ["ratio-" + t for t in tools[1:]]}
    for rep in sorted(reps):
        x = reps[rep]
        rt = us(x["rtrack"])
        cols["rt"].append(rt)
        cells = [str(rep), x["rtrack"]["others_pct"], x["rtrack"]["load1"], x["rtrack"]["sysprocs"],
                 x["rtrack"]["samples"], x["rtrack"]["procs"] or "-", f"{rt:.0f}"]
        for t in tools[1:]:
            cols[t].append(us(x[t]))
            cells.append(f"{us(x[t]):.0f}")
        for t in tools[1:]:
            ratio = rt / us(x[t])  # per repetition: both measured over the same window
            cols["ratio-" + t].append(ratio)
            cells.append(f"{ratio:.2f}")
        cells += [f"{us_ticks(x['rtrack']):.0f}", f"{us_ticks(x['sadc']):.0f}"]
        print("| " + " | ".join(cells) + " |")
    cells = ["**median**", "", "", "", "", "", f"**{med(cols['rt']):.0f}**"]
    cells += [f"**{med(cols[t]):.0f}**" for t in tools[1:]]
    cells += [f"**{med(cols['ratio-' + t]):.2f}**" for t in tools[1:]]
    cells += ["", ""]
    print("| " + " | ".join(cells) + " |")
    print()
    # repetitions during which other processes kept the CPUs less than quiet_pct % busy
    quiet = [i for i, rep in enumerate(sorted(reps))
             if float(reps[rep]["rtrack"]["others_pct"] or 0) < quiet_pct]
    summary.append((cfg, med(cols["rt"]), med(cols["sadc"]), med(cols["ratio-sadc"]), len(reps),
                    [cols["rt"][i] for i in quiet], [cols["ratio-sadc"][i] for i in quiet],
                    (med(cols["sadc-xall"]), med(cols["ratio-sadc-xall"]),
                     [cols["ratio-sadc-xall"][i] for i in quiet])
                    if "sadc-xall" in cols else None))

def q(xs, fmt):
    return f"{fmt.format(med(xs))}" if xs else "-"

print("### Summary (medians over repetitions)")
print()
print(f"Quiet: the repetitions during which other processes kept the CPUs less than {quiet_pct:g} % busy.")
print()
print("| configuration | rtrack µs/sample | sadc µs/sample | rtrack/sadc (median of per-rep ratios) "
      "| quiet reps | rtrack µs/sample, quiet | rtrack/sadc, quiet |")
print("|---|---|---|---|---|---|---|")
for cfg, rt, sa, ratio, n, qrt, qratio, xall in summary:
    print(f"| ({cfg}) {desc.get(cfg, cfg)} | {rt:.0f} | {sa:.0f} | {ratio:.2f} | {len(qrt)} of {n} "
          f"| {q(qrt, '{:.0f}')} | {q(qratio, '{:.2f}')} |")
    if xall:
        print(f"| ({cfg}) vs sadc -S XALL | {rt:.0f} | {xall[0]:.0f} | {xall[1]:.2f} | {len(qrt)} of {n} "
              f"| {q(qrt, '{:.0f}')} | {q(xall[2], '{:.2f}')} |")
PY
