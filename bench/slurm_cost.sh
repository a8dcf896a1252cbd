#!/usr/bin/env bash
# bench/slurm_cost.sh - what the SPANK plugin costs a Slurm node, side by side with the plugin
# off, and the recorder's CPU per sample beside sysstat's sadc.
#
# Starts the one-node cluster of tests/cli/test_slurm.sh (tests/helpers/slurm_cluster.sh: root,
# munged, slurmctld and slurmd on this machine), then N times, alternating which goes first:
#   - `srun -n1 true` with the plugin enabled and disabled (plugstack.conf rewritten between
#     runs; every slurmstepd reads it anew): the step's wall time, start to end as srun sees it,
#     is what the recorder's start, baseline and last sample add to a step;
#   - `srun -n1 sleep STEP_S` likewise: its wall time, and with the plugin the recorder's own CPU
#     time over a window inside the step (from /proc/PID/task/*/schedstat of the `rtrack record`
#     process the plugin started, common.sh's cpu_read) divided by the samples it wrote in that
#     window (the database's samples.ts); its peak RSS (VmHWM). sadc (1 s) runs during every such
#     step, measured over the same window the same way (its samples: window / 1 s).
# Prints the medians and the ratios as markdown; BENCH_OUT=DIR keeps the raw rows (rows.tsv).
#
# Usage: bench/slurm_cost.sh [RTRACK_BINARY]
# Env: N (5), STEP_S (10: the sleep step), INTERVAL (1: the plugin's interval=), PLUGIN
# (spank_rtrack.so beside the binary), SADC (/usr/lib/sysstat/sadc).
set -u
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
bench_init "${1:-}"
PLUGIN=${PLUGIN:-$(dirname "$RTRACK")/spank_rtrack.so}
SADC=${SADC:-/usr/lib/sysstat/sadc}
N=${N:-5}
STEP_S=${STEP_S:-10}
INTERVAL=${INTERVAL:-1}
[[ $(id -u) == 0 ]] || die "needs root (the cluster's slurmd runs as root)"
[[ -f $PLUGIN ]] || die "no SPANK plugin at $PLUGIN (libslurm-dev; or set PLUGIN=...)"
[[ -x $SADC ]] || die "sadc not found at $SADC (install sysstat or set SADC=...)"
{ command -v slurmctld && command -v srun; } >/dev/null || die "Slurm is not installed"
((STEP_S >= 4)) || die "STEP_S must be 4 s or more (the window is the step less 1 s each side)"

# the helper's variables: T the working directory, SLURM_INTERVAL the plugin's interval=
T=$BENCH_TMP
export SLURM_INTERVAL=$INTERVAL
# shellcheck source=tests/helpers/slurm_cluster.sh
. "$BENCH_ROOT/tests/helpers/slurm_cluster.sh"
trap 'slurm_stop; bench_cleanup' EXIT
slurm_start || die "the cluster did not come up: $(tail -3 sl/slurmctld.log sl/slurmd.log 2>&1)"
ROWS=$BENCH_TMP/rows.tsv
: >"$ROWS"

plugin() { # on|off
    if [[ $1 == on ]]; then plugstack "db=$T/sdb/%j.%n.db"; else : >"$T/sl/plugstack.conf"; fi
}
row() { printf '%s\t%s\t%s\n' "$@" >>"$ROWS"; } # MODE WHAT VALUE

# recorder_pid: the `rtrack record` the plugin started for the running step (its --db is under
# $T/sdb), or nothing
recorder_pid() {
    local f
    for f in /proc/[0-9]*/cmdline; do
        if tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- " record --db $T/sdb/"; then
            f=${f%/cmdline}
            echo "${f#/proc/}"
            return 0
        fi
    done
}

# step_true MODE: the wall time of `srun -n1 true`, seconds
step_true() {
    local a b
    now_us_v a
    srun -n1 --mem=100 -D "$T" true >/dev/null 2>&1 || die "srun -n1 true failed ($1)"
    now_us_v b
    row "$1" true_wall_s "$(us_to_s $((b - a)))"
}

# step_sleep MODE: the wall time of `srun -n1 sleep STEP_S`; the recorder's and sadc's CPU over
# the window [start + 1 s, end - 1 s]
step_sleep() {
    local mode=$1 a b w0 w1 spid rpid="" r0 r1 s0 s1 db n i hwm=0
    "$SADC" 1 100000 "$BENCH_TMP/sadc.sa" </dev/null >/dev/null 2>&1 &
    spid=$!
    BENCH_PIDS+=("$spid")
    now_us_v a
    srun -n1 --mem=100 -D "$T" sleep "$STEP_S" >/dev/null 2>&1 &
    local srun_pid=$!
    if [[ $mode == on ]]; then
        for ((i = 0; i < 100; i++)); do
            rpid=$(recorder_pid)
            [[ -n $rpid ]] && break
            sleep 0.02
        done
        [[ -n $rpid ]] || die "no recorder found for the step"
        db=$(tr '\0' '\n' </proc/"$rpid"/cmdline | sed -n '/^--db$/{n;p;q}')
    fi
    sleep_until_us $((a + 1000000))
    now_us_v w0
    cpu_read "$spid" s0 || die "sadc exited early"
    [[ -z $rpid ]] || cpu_read "$rpid" r0 || die "the recorder exited early"
    sleep_until_us $((a + (STEP_S - 1) * 1000000))
    now_us_v w1
    cpu_read "$spid" s1 || die "sadc exited during the window"
    if [[ -n $rpid ]]; then
        cpu_read "$rpid" r1 || die "the recorder exited during the window"
        read -r hwm _ < <(mem_kib "$rpid")
    fi
    wait "$srun_pid" || die "srun -n1 sleep failed ($mode)"
    now_us_v b
    kill -TERM "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    row "$mode" sleep_wall_s "$(us_to_s $((b - a)))"
    local win=$(((w1 - w0) / 1000)) # ms
    read -r -a s0 <<<"$s0"
    read -r -a s1 <<<"$s1"
    # sadc takes a sample a second: window / 1 s of them
    row "$mode" sadc_ms_per_sample "$(awk -v ns=$((s1[0] - s0[0])) -v w="$win" \
        'BEGIN { printf "%.4f", ns / 1e6 / (w / 1000) }')"
    if [[ -n $rpid ]]; then
        # the recorder may still be writing its last sample: wait for it to leave
        for ((i = 0; i < 100; i++)); do [[ -d /proc/$rpid ]] || break; sleep 0.05; done
        read -r -a r0 <<<"$r0"
        read -r -a r1 <<<"$r1"
        n=$(sqlite3 "$db" "SELECT count(*) FROM samples WHERE ts >= $(us_to_s "$w0") AND
            ts < $(us_to_s "$w1")")
        ((n > 0)) || die "no sample of the recorder in the window ($db)"
        row on rtrack_ms_per_sample "$(awk -v ns=$((r1[0] - r0[0])) -v n="$n" \
            'BEGIN { printf "%.4f", ns / 1e6 / n }')"
        row on rtrack_samples_in_window "$n"
        row on rtrack_hwm_mib "$(awk -v k="$hwm" 'BEGIN { printf "%.1f", k / 1024 }')"
    fi
}

wait_quiet
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# a first step of each kind, not counted: the daemons' first-time costs (loading the plugin)
plugin on
step_true warmup
plugin off
step_true warmup
for ((k = 1; k <= N; k++)); do
    if ((k % 2)); then order=(on off); else order=(off on); fi
    for m in "${order[@]}"; do
        plugin "$m"
        step_true "$m"
        step_sleep "$m"
    done
    note "round $k of $N done"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
[[ -z ${BENCH_OUT:-} ]] || cp "$ROWS" "$BENCH_OUT/rows.tsv"

echo "## Slurm: the SPANK plugin's cost per step, plugin on vs off (medians of $N)"
echo
machine_info
echo "- load average before: $load0; after: $load1"
echo "- the plugin: interval=$INTERVAL; the sleep step: $STEP_S s; window: its seconds 1 to $((STEP_S - 1))"
echo
"$PY" - "$ROWS" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, what, v = line.rstrip("\n").split("\t")
    rows.setdefault((mode, what), []).append(float(v))
med = lambda m, w: statistics.median(rows[(m, w)]) if (m, w) in rows else float("nan")
def rng(m, w):
    v = rows.get((m, w), [])
    return "%.3g-%.3g" % (min(v), max(v)) if v else "-"
print("| what | plugin on | plugin off | on - off | on / off |")
print("|---|---:|---:|---:|---:|")
for w, label in (("true_wall_s", "`srun -n1 true` wall, s"),
                 ("sleep_wall_s", "`srun -n1 sleep` wall, s")):
    on, off = med("on", w), med("off", w)
    print("| %s | %.3f (%s) | %.3f (%s) | %+.3f | %.2f |" % (label, on, rng("on", w), off,
          rng("off", w), on - off, on / off))
print()
print("| CPU per sample (ms, median; range) | rtrack record (plugin's) | sadc (1 s) | rtrack / sadc |")
print("|---|---:|---:|---:|")
r = med("on", "rtrack_ms_per_sample")
s = statistics.median(rows.get(("on", "sadc_ms_per_sample"), []) +
                      rows.get(("off", "sadc_ms_per_sample"), []))
sr = rows.get(("on", "sadc_ms_per_sample"), []) + rows.get(("off", "sadc_ms_per_sample"), [])
print("| ms | %.3f (%s) | %.3f (%.3g-%.3g) | %.2f |" % (r, rng("on", "rtrack_ms_per_sample"), s,
      min(sr), max(sr), r / s))
print()
print("- samples of the recorder in the window: median %g; its peak RSS (VmHWM): median %.1f MiB (%s)"
      % (med("on", "rtrack_samples_in_window"), med("on", "rtrack_hwm_mib"),
         rng("on", "rtrack_hwm_mib")))
EOF
