#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/soak.sh - a long recording: does rtrack's memory, descriptor count or CPU per sample
# grow over a million samples, and does every sample reach the database?
#
# usage: bench/soak.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# Runs `rtrack run --interval INTERVAL -- sh -c '...'` with a job of a few processes (a shell,
# three sleeps, and a loop that starts a new short-lived process every second, so the tree
# keeps changing) until the database holds SAMPLES samples, then sends rtrack SIGUSR1 (it
# forwards it to the job, which stops its children and exits 0). The job ignores SIGTERM,
# SIGINT and SIGHUP, so a stray `pkill rtrack` on a shared machine (rtrack forwards it) does not
# end the soak; rtrack itself keeps recording through those signals anyway. Every POLL_S seconds it reads,
# for the rtrack process: VmRSS, VmHWM and RssAnon (/proc/PID/status), the open descriptors
# (/proc/PID/fd), the nanoseconds on CPU (field 1 of /proc/PID/task/*/schedstat, summed) and the
# samples in the database (max(seq) of the run, through the sqlite3 CLI).
#
# Reports: RSS at the first reading and the last, and its maximum; descriptors at the first
# and the last reading; CPU time per sample over the first and the last 10 % of the samples;
# the samples rtrack says it took against the rows in the database (they must be equal); the
# database size (file and -wal) after rtrack exited, and bytes per sample.
#
# INTERVAL defaults to 0.001 s, the shortest rtrack accepts (RT_INTERVAL_MIN), the rate the
# reliability issue names: a million samples take about 17 minutes if the machine keeps up (a
# late sample is skipped, not made up, so on a busy machine it takes longer).
#
# The number of processes on the whole machine is read at each poll too: rtrack's scan buffers
# are sized by it (about 300 KiB per 1 000 processes, docs/performance.md) and keep their
# largest size, so a burst of processes elsewhere shows up as a step in RSS, not as a leak.
#
# Environment knobs: SAMPLES (1000000), INTERVAL (0.001), POLL_S (5), MAX_S (0: no limit; stop
# after this many seconds and report what was reached), NICE (19: the nice value of rtrack and
# its job), BENCH_OUT (directory to keep the raw TSV in), BENCH_KEEP=1 (keep the database). No
# wait for an idle machine: this measures growth, not speed.
#
# The readings go to BENCH_OUT/soak.tsv as they are taken when BENCH_OUT is set. If rtrack ends
# early, the report covers what was read and says so.
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
bench_init "${1:-}"
command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
SAMPLES=${SAMPLES:-1000000}
INTERVAL=${INTERVAL:-0.001}
POLL_S=${POLL_S:-5}
MAX_S=${MAX_S:-0}
NICE=${NICE:-19}
RAW=${BENCH_OUT:-$BENCH_TMP}/soak.tsv
DB=$BENCH_TMP/soak.db

status_kib() { # PID: "VmRSS VmHWM RssAnon"
    awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} /^RssAnon:/ {a=$2} END {print r, h, a}' /proc/"$1"/status
}
fd_count() { # PID: open descriptors
    local f n=0
    for f in /proc/"$1"/fd/*; do [[ -e $f || -L $f ]] && n=$((n + 1)); done
    echo "$n"
}
cpu_ns() { # PID: nanoseconds on CPU, all threads
    local ns=0 t tns rest
    for t in /proc/"$1"/task/[0-9]*; do
        read -r tns rest <"$t"/schedstat 2>/dev/null && ns=$((ns + tns))
    done
    echo "$ns"
}
samples_in_db() { sqlite3 -readonly "$DB" "SELECT coalesce((SELECT seq FROM samples ORDER BY id DESC LIMIT 1), 0)" 2>/dev/null || echo 0; }

# The job: three sleeps and a loop that starts a new process every second, all ignoring
# SIGTERM, SIGINT and SIGHUP (inherited); on SIGUSR1 (forwarded by rtrack) it kills them and
# exits 0, so nothing is left behind.
JOB='trap "" TERM INT HUP
sleep 100000000 & a=$!; sleep 100000000 & b=$!; sleep 100000000 & c=$!
( while :; do sleep 1; done ) & d=$!
trap "kill -KILL \$a \$b \$c \$d 2>/dev/null; exit 0" USR1
while :; do wait; done'

commit=$(git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$BENCH_ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
note "soak: $SAMPLES samples at $INTERVAL s, nice $NICE, into $DB"
t0=$(now_us)
nice -n "$NICE" "$RTRACK" run --db "$DB" --interval "$INTERVAL" -- sh -c "$JOB" \
    </dev/null >/dev/null 2>"$BENCH_TMP/rtrack.err" &
rpid=$!
BENCH_PIDS=("$rpid")

printf 'elapsed_s\tsamples\tvmrss_kib\tvmhwm_kib\trssanon_kib\tfds\tcpu_ns\tprocs\n' >"$RAW"
sleep 1
last_note=0
while [[ -d /proc/$rpid ]]; do
    now=$(now_us)
    n=$(samples_in_db)
    read -r rss hwm anon <<<"$(status_kib "$rpid")" || break
    fds=$(fd_count "$rpid")
    ns=$(cpu_ns "$rpid")
    [[ -n $rss && -n $ns ]] || break
    procs=(/proc/[0-9]*)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(us_to_s $((now - t0)))" "$n" "$rss" "$hwm" "$anon" "$fds" "$ns" "${#procs[@]}" >>"$RAW"
    if ((n >= SAMPLES)); then break; fi
    if ((MAX_S > 0 && (now - t0) / 1000000 >= MAX_S)); then
        note "MAX_S ($MAX_S s) reached at $n samples; stopping"
        break
    fi
    if (((now - t0) / 1000000 - last_note >= 300)); then
        last_note=$(((now - t0) / 1000000))
        note "$(us_to_s $((now - t0))) s: $n samples, VmRSS $rss KiB, $fds fds"
    fi
    sleep "$POLL_S"
done
early=""
if [[ -d /proc/$rpid ]]; then
    kill -USR1 "$rpid"
else
    early="rtrack ended early, at $n samples"
    note "$early: $(cat "$BENCH_TMP/rtrack.err")"
fi
rc=0
wait "$rpid" || rc=$?
# shellcheck disable=SC2034 # read by bench_cleanup in common.sh
BENCH_PIDS=()
t1=$(now_us)
said=$(sed -n 's/.* \([0-9][0-9]*\) samples in .*/\1/p' "$BENCH_TMP/rtrack.err" | tail -n 1)
rows=$(sqlite3 "$DB" "SELECT count(*) FROM samples")
runs=$(sqlite3 "$DB" "SELECT count(*) || ' run, status ' || group_concat(status) FROM runs")
db_bytes=$(($(stat -c %s "$DB") + $([[ -e $DB-wal ]] && stat -c %s "$DB-wal" || echo 0)))

echo "## Soak: \`bench/soak.sh\`"
echo
echo "Measured on $commit$dirty, $(date -u +%Y-%m-%d)."
echo
machine_info
echo "- \`rtrack run --interval $INTERVAL\` (nice $NICE) of a job with 5 processes and a new one every second"
echo "- duration: $(us_to_s $((t1 - t0))) s; rtrack's exit status after SIGUSR1: $rc${early:+ (**$early**)}"
echo
"$PY" - "$RAW" "$SAMPLES" "$said" "$rows" "$db_bytes" "$runs" "$(cat "$BENCH_TMP/rtrack.err" | tr '\n' ' ')" <<'EOF'
import csv, sys
raw, target, said, rows, db_bytes, runs, err = sys.argv[1:8]
target, rows, db_bytes = int(target), int(rows), int(db_bytes)
pts = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(raw), delimiter="\t")]
pts = [p for p in pts if p["samples"] > 0] or pts
first, last = pts[0], pts[-1]
n = last["samples"]

def at(frac):  # the first reading at or after this fraction of the samples
    return next(p for p in pts if p["samples"] >= frac * n)

def per_sample(a, b):
    ds = b["samples"] - a["samples"]
    return (b["cpu_ns"] - a["cpu_ns"]) / ds / 1e3 if ds > 0 else float("nan")

f10, l10 = at(0.10), at(0.90)
print("| | first reading | at 10 % | last reading | max |")
print("|---|---|---|---|---|")
print("| samples | %d | %d | %d | |" % (first["samples"], f10["samples"], last["samples"]))
print("| VmRSS KiB | %d | %d | **%d** | %d |" % (first["vmrss_kib"], f10["vmrss_kib"], last["vmrss_kib"], max(p["vmrss_kib"] for p in pts)))
print("| RssAnon KiB | %d | %d | %d | %d |" % (first["rssanon_kib"], f10["rssanon_kib"], last["rssanon_kib"], max(p["rssanon_kib"] for p in pts)))
print("| VmHWM KiB | %d | %d | %d | |" % (first["vmhwm_kib"], f10["vmhwm_kib"], last["vmhwm_kib"]))
print("| open fds | %d | %d | **%d** | %d |" % (first["fds"], f10["fds"], last["fds"], max(p["fds"] for p in pts)))
print("| processes on the machine | %d | %d | %d | %d |" % (first["procs"], f10["procs"], last["procs"], max(p["procs"] for p in pts)))
w = max(1, len(pts) // 10)  # a reading can catch a /proc file open for a moment: the floor of a window
print()
print("- open fds, fewest in the first and in the last 10 %% of the readings: %d and %d"
      % (min(p["fds"] for p in pts[:w]), min(p["fds"] for p in pts[-w:])))
print()
print("- CPU per sample: %.1f µs over the first 10 %% of the samples (%d to %d), %.1f µs over the last 10 %% (%d to %d)"
      % (per_sample(first, f10), first["samples"], f10["samples"], per_sample(l10, last), l10["samples"], last["samples"]))
print("- samples: rtrack said %s, the database holds %d rows (%s); %s"
      % (said or "?", rows, runs, "none lost" if said and int(said) == rows else "MISMATCH"))
print("- database: %d bytes (file + -wal), %.0f bytes/sample" % (db_bytes, db_bytes / max(rows, 1)))
print("- rtrack's stderr: %s" % err.strip())
EOF
