#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/gpu_cpu.sh - CPU time per sample of `rtrack record` with GPUs: the fake NVML library of
# the tests (8 devices, 50 GPU processes) against no GPU backend, side by side.
#
# usage: bench/gpu_cpu.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# For each repetition and interval (1 s, then 0.1 s), a tree of TREE_PROCS (50) processes is
# started (sh + 49 sleeps, own process group) and two recorders, both `record --pid TREE`, are
# started at the same moment, each with its own database:
#   n  no GPU backend (RTRACK_NVML_LIBRARY unset; there is no GPU on the machine)
#   g  RTRACK_NVML_LIBRARY=FAKE_NVML_LIB, FAKE_NVML_GPUS=GPUS (8), and FAKE_NVML_PROC_FILE
#      listing every process of the tree: process i on GPU i % GPUS, type C, except every
#      tenth from the 4th on (CG: in both the compute and the graphics list) and every tenth
#      from the 8th on (G); used MiB, SM and memory utilization vary with i
# After WARMUP seconds, a window (WINDOW_1S at 1 s, WINDOW_FAST at 0.1 s) is measured as in
# cpu_per_sample.sh: CPU time at the start and end of the window divided by the samples whose
# ts falls in it. rtrack runs the GPU backends on a worker thread, so the CPU time is the sum of
# field 1 of /proc/PID/task/*/schedstat over the threads (/proc/PID/schedstat alone is the main
# thread's); utime+stime ticks of /proc/PID/stat (all threads, exited ones included) are a
# cross-check. Also recorded: peak RSS (VmHWM, just before the recorders are stopped with
# SIGTERM), the median and largest interval_s of the samples in the window, and how many
# samples of g in the window lack GPU rows (a reading the worker did not deliver in time).
#
# Checks (the script fails on them): g's database has GPUS rows in `gpus` and, in its last
# sample, one gpu_process_samples row per process of the tree (a CG process is one row per
# process and GPU); n's database has no gpus and no gpu_process_samples rows; both saw the whole
# tree (proc_count) in their last sample; both recorders exit with 0.
#
# The fake library re-reads FAKE_NVML_PROC_FILE at each process-list, process-utilization and
# memory call; a real driver answers by ioctl instead, so g - n is what rtrack's GPU path costs
# plus what the fake costs, not a real driver's cost.
#
# Environment knobs: REPS (5), WARMUP (5 s), WINDOW_1S (60 s window at 1 s), WINDOW_FAST (30 s
# at 0.1 s), INTERVALS ("1 0.1"), GPUS (8), TREE_PROCS (50), FAKE_NVML_LIB (the fake library,
# default build/tests/fake_nvml/full/libnvidia-ml.so.1 of this checkout), BENCH_OUT (directory
# to keep the raw TSV in), BENCH_KEEP=1 (keep the scratch databases), BENCH_MAX_BUSY (25 %)
# and BENCH_QUIET_WAIT (300 s): see common.sh.
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
# the fake library's path may be relative to the caller's directory: resolved before the cd
FAKE_LIB=${FAKE_NVML_LIB:-$BENCH_ROOT/build/tests/fake_nvml/full/libnvidia-ml.so.1}
FAKE_LIB=$(realpath -e "$FAKE_LIB" 2>/dev/null) ||
    die "fake NVML library not found (build with -DRTRACK_BUILD_TESTS=ON, or set FAKE_NVML_LIB=...)"
bench_init "${1:-}"
command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
# the caller's FAKE_NVML_* settings (delays, failures, races) would change what is measured
# (FAKE_NVML_LIB was read above)
for v in $(compgen -e); do
    case $v in FAKE_NVML_*) unset "$v" ;; esac
done
REPS=${REPS:-5}
WARMUP=${WARMUP:-5}
WINDOW_1S=${WINDOW_1S:-60}
WINDOW_FAST=${WINDOW_FAST:-30}
INTERVALS=${INTERVALS:-1 0.1}
GPUS=${GPUS:-8}
TREE_PROCS=${TREE_PROCS:-50}
((TREE_PROCS >= 2)) || die "TREE_PROCS must be at least 2"
CLK_TCK=$(getconf CLK_TCK)
RAW=$BENCH_TMP/gpu_cpu.tsv

# start_big_tree: sh + TREE_PROCS-1 sleeps in their own process group; sets TREE_PID (the
# group id: see start_tree in common.sh) and TREE_PIDS (sh first, then the sleeps). stop_tree
# of common.sh stops it.
start_big_tree() {
    local kids=$((TREE_PROCS - 1))
    setsid sh -c "i=0; while [ \$i -lt $kids ]; do sleep 100000 & i=\$((i + 1)); done; wait" \
        </dev/null >/dev/null 2>&1 &
    TREE_PID=$!
    BENCH_PGIDS+=("$TREE_PID")
    local -a found
    for _ in $(seq 250); do
        mapfile -t found < <(grep -l "^PPid:[[:space:]]*$TREE_PID\$" /proc/[0-9]*/status 2>/dev/null |
            cut -d/ -f3 | sort -n)
        if ((${#found[@]} >= kids)); then
            local pgid
            pgid=$(cut -d' ' -f3 <<<"$(sed 's/.*) //' /proc/"$TREE_PID"/stat)")
            [[ $pgid == "$TREE_PID" ]] || die "tree pid $TREE_PID is not its group leader ($pgid)"
            TREE_PIDS=("$TREE_PID" "${found[@]}")
            return 0
        fi
        sleep 0.02
    done
    die "the $TREE_PROCS-process tree did not start"
}

# write_proc_file FILE: the fake library's process list, one line per process of the tree:
# "gpu pid used_mib sm_util mem_util type".
write_proc_file() {
    local i type
    {
        echo "# gpu pid used_mib sm_util mem_util type"
        for ((i = 0; i < ${#TREE_PIDS[@]}; i++)); do
            case $((i % 10)) in 3) type=CG ;; 7) type=G ;; *) type=C ;; esac
            echo "$((i % GPUS)) ${TREE_PIDS[i]} $((256 + 97 * i)) $(((13 * i) % 101)) $(((7 * i) % 101)) $type"
        done
    } >"$1"
}

# cpu_read_tasks PID VAR: like cpu_read (common.sh), without forking, for a multithreaded
# process: stores "NS MAIN_NS TICKS TIDS": nanoseconds on CPU summed over the live threads
# (field 1 of /proc/PID/task/TID/schedstat), those of the main thread, utime+stime ticks of the
# whole process (fields 14 and 15 of /proc/PID/stat: exited threads included), and the thread
# ids, comma-separated (a thread that exits inside a window takes its time out of NS).
cpu_read_tasks() {
    local ns=0 main=0 v rest tids="" t line
    for t in /proc/"$1"/task/[0-9]*; do
        { read -r v rest <"$t/schedstat"; } 2>/dev/null || continue # the thread just exited
        ns=$((ns + v))
        [[ ${t##*/} == "$1" ]] && main=$v
        tids+=${t##*/},
    done
    [[ -n $tids ]] || return 1
    { read -r line </proc/"$1"/stat; } 2>/dev/null || return 1
    line=${line##*) }
    local -a f
    read -r -a f <<<"$line"
    printf -v "$2" '%s %s %s %s' "$ns" "$main" $((f[11] + f[12])) "${tids%,}"
}

# q DB SQL: one value from a database.
q() { sqlite3 "$1" "$2"; }

# measure INTERVAL REP: one side-by-side measurement of n and g; appends two rows to $RAW.
measure() {
    local interval=$1 rep=$2 window
    if [[ $interval == 1 || $interval == 1.0 ]]; then window=$WINDOW_1S; else window=$WINDOW_FAST; fi
    local d=$BENCH_TMP/$interval-$rep
    mkdir -p "$d"
    wait_quiet
    start_big_tree
    write_proc_file "$d/gpu_procs.txt"

    local t0 npid gpid
    # the recorders are started one after the other, within a millisecond or so; which one
    # comes first alternates with the repetition
    start_n() {
        "$RTRACK" record --db "$d/n.db" --interval "$interval" --quiet --pid "$TREE_PID" </dev/null &
        npid=$!
    }
    start_g() {
        RTRACK_NVML_LIBRARY=$FAKE_LIB FAKE_NVML_GPUS=$GPUS FAKE_NVML_PROC_FILE=$d/gpu_procs.txt \
            "$RTRACK" record --db "$d/g.db" --interval "$interval" --quiet --pid "$TREE_PID" </dev/null &
        gpid=$!
    }
    t0=$(now_us)
    if ((rep % 2)); then start_n && start_g; else start_g && start_n; fi
    BENCH_PIDS=("$npid" "$gpid")

    # window: 0.45 s after a whole second of the common start (between samples at 1 s and at
    # 0.1 s); the readings at each edge do not fork
    local w0 w1 e0 e1 n0 n1 g0 g1 c0 c1
    sleep_until_us $((t0 + WARMUP * 1000000 + 450000))
    now_us_v w0
    cpu_busy_read c0
    cpu_read_tasks "$npid" n0 || die "rtrack (n) exited early (interval $interval rep $rep)"
    cpu_read_tasks "$gpid" g0 || die "rtrack (g) exited early (interval $interval rep $rep)"
    now_us_v e0
    sleep_until_us $((w0 + window * 1000000))
    now_us_v w1
    cpu_busy_read c1
    cpu_read_tasks "$npid" n1 || die "rtrack (n) exited during the window (interval $interval rep $rep)"
    cpu_read_tasks "$gpid" g1 || die "rtrack (g) exited during the window (interval $interval rep $rep)"
    now_us_v e1
    local nmem gmem load rest sysprocs=(/proc/[0-9]*)
    nmem=$(mem_kib "$npid")
    gmem=$(mem_kib "$gpid")
    read -r load rest </proc/loadavg
    ((e0 - w0 < 5000 && e1 - w1 < 5000)) ||
        note "warning: slow readings at the window edges ($((e0 - w0)) us, $((e1 - w1)) us)"

    kill -TERM "$npid" "$gpid"
    local nrc=0 grc=0
    wait "$npid" || nrc=$?
    wait "$gpid" || grc=$?
    BENCH_PIDS=()
    stop_tree
    ((nrc == 0)) || die "rtrack record (n) exited with $nrc (interval $interval rep $rep)"
    ((grc == 0)) || die "rtrack record (g) exited with $grc (interval $interval rep $rep)"

    # checks
    local ngpus ngprows gcount glast nlast db
    ngpus=$(q "$d/n.db" "SELECT count(*) FROM gpus")
    ngprows=$(q "$d/n.db" "SELECT count(*) FROM gpu_process_samples")
    ((ngpus == 0 && ngprows == 0)) ||
        die "check failed: (n) recorded $ngpus gpus and $ngprows gpu_process_samples rows, 0 expected (interval $interval rep $rep)"
    gcount=$(q "$d/g.db" "SELECT count(*) FROM gpus")
    ((gcount == GPUS)) || die "check failed: (g) recorded $gcount gpus, $GPUS expected (interval $interval rep $rep)"
    glast=$(q "$d/g.db" "SELECT count(*) FROM gpu_process_samples
                         WHERE sample_id = (SELECT id FROM samples ORDER BY seq DESC LIMIT 1)")
    ((glast == TREE_PROCS)) ||
        die "check failed: (g)'s last sample has $glast gpu_process_samples rows, $TREE_PROCS expected (interval $interval rep $rep)"
    for db in n g; do
        nlast=$(q "$d/$db.db" "SELECT ifnull(proc_count, -1) FROM samples ORDER BY seq DESC LIMIT 1")
        ((nlast == TREE_PROCS)) ||
            die "check failed: ($db)'s last sample saw $nlast processes of the tree, $TREE_PROCS expected (interval $interval rep $rep)"
    done

    # samples in the window, their intervals, and (g) samples without GPU rows
    local in nstat gstat nogpu
    in="ts >= $(us_to_s "$w0") AND ts < $(us_to_s "$w1")"
    nstat=$(q "$d/n.db" "SELECT count(*), ifnull(group_concat(interval_s, ','), '') FROM samples WHERE $in")
    gstat=$(q "$d/g.db" "SELECT count(*), ifnull(group_concat(interval_s, ','), '') FROM samples WHERE $in")
    nogpu=$(q "$d/g.db" "SELECT count(*) FROM samples s WHERE $in AND
        ((SELECT count(*) FROM gpu_samples x WHERE x.sample_id = s.id) != $GPUS OR
         (SELECT count(*) FROM gpu_process_samples x WHERE x.sample_id = s.id) != $TREE_PROCS)")
    local nsamp gsamp
    nsamp=${nstat%%|*}
    gsamp=${gstat%%|*}
    ((nsamp > 0 && gsamp > 0)) || die "no samples in the window (n $nsamp, g $gsamp; interval $interval rep $rep)"
    local expect db cnt s
    expect=$("$PY" -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2])))" "$window" "$interval")
    for s in "n $nsamp" "g $gsamp"; do
        read -r db cnt <<<"$s"
        ((cnt >= expect - 2 && cnt <= expect + 2)) ||
            note "warning: ($db) stored $cnt samples in the window, $expect expected (interval $interval rep $rep)"
    done
    ((nogpu == 0)) || note "warning: $nogpu samples of (g) in the window lack GPU rows (interval $interval rep $rep)"
    local ntids gtids
    ntids=$(cut -d' ' -f4 <<<"$n0")
    gtids=$(cut -d' ' -f4 <<<"$g0")
    [[ $ntids == "$(cut -d' ' -f4 <<<"$n1")" ]] || note "warning: (n)'s threads changed during the window"
    [[ $gtids == "$(cut -d' ' -f4 <<<"$g1")" ]] || note "warning: (g)'s threads changed during the window"

    # others: share of all CPUs busy in the window, less what the two recorders used (ticks)
    local ca cb na nb ga gb others
    read -r -a ca <<<"$c0"
    read -r -a cb <<<"$c1"
    read -r -a na <<<"$n0"
    read -r -a nb <<<"$n1"
    read -r -a ga <<<"$g0"
    read -r -a gb <<<"$g1"
    others=$((((cb[0] - ca[0]) - (nb[2] - na[2]) - (gb[2] - ga[2])) * 1000 / (cb[1] - ca[1])))
    ((others >= 0)) || others=0
    local noise="$((others / 10)).$((others % 10))	$load	${#sysprocs[@]}"
    local nth gth
    nth=$(tr ',' '\n' <<<"$ntids" | wc -l)
    gth=$(tr ',' '\n' <<<"$gtids" | wc -l)
    # interval rep tool samples cpu_ns main_ns ticks threads vmhwm_kib nogpu intervals others load sysprocs
    printf '%s\t%s\tn\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$interval" "$rep" "$nsamp" \
        $((nb[0] - na[0])) $((nb[1] - na[1])) $((nb[2] - na[2])) "$nth" "${nmem%% *}" 0 \
        "${nstat#*|}" "$noise" >>"$RAW"
    printf '%s\t%s\tg\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$interval" "$rep" "$gsamp" \
        $((gb[0] - ga[0])) $((gb[1] - ga[1])) $((gb[2] - ga[2])) "$gth" "${gmem%% *}" "$nogpu" \
        "${gstat#*|}" "$noise" >>"$RAW"
    note "interval $interval rep $rep: samples n $nsamp g $gsamp; CPU n $(((nb[0] - na[0]) / nsamp / 1000)) us/sample, g $(((gb[0] - ga[0]) / gsamp / 1000)) us/sample; window $(us_to_s $((w1 - w0))) s"
}

printf 'interval\trep\ttool\tsamples\tcpu_ns\tmain_ns\tticks\tthreads\tvmhwm_kib\tnogpu\tintervals\tothers_pct\tload1\tsysprocs\n' >"$RAW"
for ((rep = 1; rep <= REPS; rep++)); do
    for interval in $INTERVALS; do # interleaved: drifting load hits both intervals alike
        measure "$interval" "$rep"
    done
done
if [[ -n ${BENCH_OUT:-} ]]; then
    cp "$RAW" "$BENCH_OUT/gpu_cpu.tsv"
fi

echo "## CPU per sample with GPUs: fake NVML ($GPUS devices, $TREE_PROCS GPU processes) vs no GPU backend"
echo
machine_info
echo "- fake NVML: $FAKE_LIB"
echo "- $REPS repetitions; warm-up $WARMUP s; window ${WINDOW_1S} s at 1 s, ${WINDOW_FAST} s at 0.1 s; CLK_TCK $CLK_TCK"
echo "- both recorders run side by side with \`--pid\` on the same $TREE_PROCS-process tree (sh + $((TREE_PROCS - 1)) sleeps);" \
    "(n) without RTRACK_NVML_LIBRARY (no GPU backend), (g) with the fake library, FAKE_NVML_GPUS=$GPUS" \
    "and every process of the tree in FAKE_NVML_PROC_FILE"
echo "- CPU: schedstat summed over the threads (rtrack's GPU worker thread included); the fake library" \
    "re-reads its process file at every process-list, process-utilization and memory call, so g − n" \
    "includes the fake's own file parsing"
echo
"$PY" - "$RAW" "$CLK_TCK" <<'PY'
import csv, statistics, sys

raw, clk_tck = sys.argv[1], int(sys.argv[2])
rows = list(csv.DictReader(open(raw), delimiter="\t"))
med = statistics.median
by = {}
for r in rows:
    by.setdefault(r["interval"], {}).setdefault(int(r["rep"]), {})[r["tool"]] = r

def us(r):  # CPU per sample, all threads, schedstat
    return int(r["cpu_ns"]) / 1e3 / int(r["samples"])

def us_worker(r):  # the threads other than the main one (the GPU worker)
    return (int(r["cpu_ns"]) - int(r["main_ns"])) / 1e3 / int(r["samples"])

def us_ticks(r):
    return int(r["ticks"]) / clk_tck * 1e6 / int(r["samples"])

def ivals(r):
    return [float(x) for x in r["intervals"].split(",") if x]

def rng(xs, fmt="{:.0f}"):
    return f"{fmt.format(min(xs))}–{fmt.format(max(xs))}"

summary = []
for interval in by:  # in the order measured
    reps = by[interval]
    print(f"### Interval {interval} s")
    print()
    head = ["rep", "others' CPU %", "load (1 min)", "samples n / g", "n µs/sample", "g µs/sample",
            "g − n µs", "g / n", "g worker thread µs/sample", "threads n / g",
            "g samples without GPU rows", "median interval n / g (s)", "max interval g (s)",
            "VmHWM n / g (KiB)", "ticks µs/sample n / g"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    c = {k: [] for k in ("n", "g", "d", "r", "w", "mi", "mx", "hn", "hg", "nogpu")}
    for rep in sorted(reps):
        n, g = reps[rep]["n"], reps[rep]["g"]
        un, ug = us(n), us(g)
        mn, mg = med(ivals(n)), med(ivals(g))
        c["n"].append(un); c["g"].append(ug); c["d"].append(ug - un); c["r"].append(ug / un)
        c["w"].append(us_worker(g)); c["mi"].append(mg); c["mx"].append(max(ivals(g)))
        c["hn"].append(int(n["vmhwm_kib"])); c["hg"].append(int(g["vmhwm_kib"]))
        c["nogpu"].append(int(g["nogpu"]))
        print("| " + " | ".join([
            str(rep), g["others_pct"], g["load1"], f"{n['samples']} / {g['samples']}",
            f"{un:.0f}", f"{ug:.0f}", f"{ug - un:.0f}", f"{ug / un:.2f}", f"{us_worker(g):.0f}",
            f"{n['threads']} / {g['threads']}", g["nogpu"], f"{mn:.4f} / {mg:.4f}",
            f"{max(ivals(g)):.4f}", f"{n['vmhwm_kib']} / {g['vmhwm_kib']}",
            f"{us_ticks(n):.0f} / {us_ticks(g):.0f}"]) + " |")
    print("| " + " | ".join([
        "**median**", "", "", "", f"**{med(c['n']):.0f}**", f"**{med(c['g']):.0f}**",
        f"**{med(c['d']):.0f}**", f"**{med(c['r']):.2f}**", f"**{med(c['w']):.0f}**", "",
        "", f"– / **{med(c['mi']):.4f}**", "", f"{med(c['hn']):.0f} / {med(c['hg']):.0f}", ""]) + " |")
    print()
    summary.append((interval, c))

print("### Summary (medians over repetitions; min–max in parentheses)")
print()
print("| interval | n µs/sample | g µs/sample | added cost g − n µs/sample | ratio g / n "
      "| g worker thread µs/sample | g median interval s | g max interval s "
      "| g samples without GPU rows | VmHWM n / g KiB |")
print("|---|---|---|---|---|---|---|---|---|---|")
for interval, c in summary:
    print(f"| {interval} s | {med(c['n']):.0f} ({rng(c['n'])}) | {med(c['g']):.0f} ({rng(c['g'])}) "
          f"| {med(c['d']):.0f} ({rng(c['d'])}) | {med(c['r']):.2f} ({rng(c['r'], '{:.2f}')}) "
          f"| {med(c['w']):.0f} ({rng(c['w'])}) | {med(c['mi']):.4f} ({rng(c['mi'], '{:.4f}')}) "
          f"| {max(c['mx']):.4f} | {sum(c['nogpu'])} "
          f"| {med(c['hn']):.0f} / {med(c['hg']):.0f} ({rng(c['hn'])} / {rng(c['hg'])}) |")
PY
