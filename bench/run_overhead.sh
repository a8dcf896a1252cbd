#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/run_overhead.sh - wall time `rtrack run` adds to a trivial job, and where it goes.
#
# usage: bench/run_overhead.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# 1. hyperfine -N --warmup WARMUP --runs RUNS: `true` alone and `rtrack run --db DB -- true`
#    (DB created beforehand, so the schema is not created in the timed runs); the JSON export
#    is parsed and the difference of the medians reported. A third command puts the database
#    on tmpfs (SHM_DIR, default /dev/shm, skipped if absent), where syncs cost nothing.
# 2. Timeline of RUNS more `rtrack run -- true` (Python, wall clock): from just before the
#    exec of rtrack to runs.started_at (rtrack's start-up: configuration, database open), to the
#    baseline sample's ts (the job spawned, first sample started), to the final sample's ts, to
#    runs.ended_at, and to the exit of rtrack as seen by the caller. Medians in ms.
#
# Environment knobs: RUNS (50), WARMUP (5), BENCH_OUT (directory to keep hyperfine's JSON and
# the timeline TSV in), BENCH_KEEP=1 (keep the scratch database), BENCH_MAX_BUSY and
# BENCH_QUIET_WAIT (wait for an idle machine first: see common.sh).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
bench_init "${1:-}"
command -v hyperfine >/dev/null || die "hyperfine not found"
command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-5}
TRUE_BIN=$(command -v true)
DB=$BENCH_TMP/overhead.db

"$RTRACK" run --db "$DB" --quiet -- "$TRUE_BIN" || die "rtrack run -- true failed"
# the same with the database in memory-backed tmpfs, where fsync costs nothing: the difference
# is what the database's syncs cost on this disk
shm_args=()
SHM_TMP=""
trap '[[ -z $SHM_TMP ]] || rm -rf "$SHM_TMP"; bench_cleanup' EXIT
SHM_DIR=${SHM_DIR:-/dev/shm}
if [[ -d $SHM_DIR && -w $SHM_DIR ]]; then
    SHM_TMP=$(mktemp -d "$SHM_DIR/rtrack-bench.XXXXXX")
    SHM_DB=$SHM_TMP/overhead.db
    "$RTRACK" run --db "$SHM_DB" --quiet -- "$TRUE_BIN" || die "rtrack run -- true failed on $SHM_DIR"
    shm_args=(-n "rtrack run -- true (database on tmpfs)" "$RTRACK run --db $SHM_DB --quiet -- $TRUE_BIN")
fi
wait_quiet
note "hyperfine: $RUNS runs each"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic \
    --export-json "$BENCH_TMP/hyperfine.json" \
    -n true "$TRUE_BIN" \
    -n "rtrack run -- true" "$RTRACK run --db $DB --quiet -- $TRUE_BIN" \
    "${shm_args[@]}" >&2

note "timeline: $RUNS runs"
"$PY" - "$RTRACK" "$BENCH_TMP/timeline.db" "$TRUE_BIN" "$RUNS" "$BENCH_TMP/timeline.tsv" <<'PY'
# Each run: t_exec (caller, just before spawning rtrack) and t_exit (caller, after waitpid),
# both CLOCK_REALTIME like rtrack's own stamps; rtrack's stamps come from the database.
import sqlite3, subprocess, sys, time
rtrack, db, true_bin, runs, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
cmd = [rtrack, "run", "--db", db, "--quiet", "--", true_bin]
subprocess.run(cmd, check=True)  # creates the database: not timed
stamps = []
for _ in range(runs):
    t_exec = time.time()
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    stamps.append((t_exec, time.time()))
con = sqlite3.connect(db)
rows = con.execute("""
    SELECT r.id, r.started_at,
           (SELECT ts FROM samples WHERE run_id = r.id AND kind = 'baseline'),
           (SELECT ts FROM samples WHERE run_id = r.id AND kind = 'final'),
           r.ended_at
    FROM runs r ORDER BY r.id""").fetchall()[1:]
with open(out, "w") as f:
    f.write("run\texec\tstarted_at\tbaseline_ts\tfinal_ts\tended_at\texit\n")
    for (rid, st, base, fin, end), (t0, t1) in zip(rows, stamps):
        f.write(f"{rid}\t{t0:.6f}\t{st:.6f}\t{base:.6f}\t{fin:.6f}\t{end:.6f}\t{t1:.6f}\n")
PY
if [[ -n ${BENCH_OUT:-} ]]; then
    mkdir -p "$BENCH_OUT"
    cp "$BENCH_TMP/hyperfine.json" "$BENCH_OUT/run_overhead_hyperfine.json"
    cp "$BENCH_TMP/timeline.tsv" "$BENCH_OUT/run_overhead_timeline.tsv"
fi

echo "## Wall time added by rtrack run"
echo
machine_info
echo "- hyperfine -N --warmup $WARMUP --runs $RUNS; then $RUNS timed runs for the timeline; database in $BENCH_TMP ($(fs_of "$BENCH_TMP"))"
echo
echo "### hyperfine (ms)"
echo
"$PY" "$BENCH_DIR/hyperfine_table.py" "$BENCH_TMP/hyperfine.json" true
echo
"$PY" - "$BENCH_TMP/timeline.tsv" <<'PY'
import csv, statistics, sys

med = statistics.median
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
steps = [("exec", "started_at", "rtrack start-up to run row (config, open database)"),
         ("started_at", "baseline_ts", "run row to first (baseline) sample started: job spawned"),
         ("baseline_ts", "final_ts", "baseline sample to final sample (job runs and exits)"),
         ("final_ts", "ended_at", "final sample to run closed"),
         ("ended_at", "exit", "run closed to rtrack exit seen by the caller"),
         ("exec", "baseline_ts", "**spawn of rtrack to first sample**"),
         ("exec", "exit", "**total, caller's view**")]
print(f"### Timeline of `rtrack run -- true` ({len(rows)} runs, wall clock, ms)")
print()
print("| step | median | min | max |")
print("|---|---|---|---|")
for a, b, label in steps:
    d = [(float(r[b]) - float(r[a])) * 1e3 for r in rows]
    print(f"| {label} | {med(d):.2f} | {min(d):.2f} | {max(d):.2f} |")
PY
