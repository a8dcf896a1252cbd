#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/floor.sh - rtrack beside the floor of its design, measured in the same window: the
# least that any recorder or job wrapper built on Debian's shared libc and SQLite does
# (bench/floor.c, built as rt_floor). What rtrack spends beyond rt_floor is rtrack's own; what
# rt_floor spends no SQLite-backed tool avoids on this machine.
#
# usage: bench/floor.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack; rt_floor is
#                                            taken from the same directory, or $RT_FLOOR)
#
# 1. Peak RSS: REPS rounds, each running one after the other, SAMPLES samples at INTERVAL s:
#      rtrack record --pid <5-process tree>   (VmHWM read from /proc just before SIGTERM)
#      rt_floor record on a new file          (SQLite and libc, one table, one row a sample)
#      rt_floor record on a copy of an rtrack database (the same, plus SQLite parsing rtrack's
#                                             schema, as every connection to the file does)
#      sadc 1 4 (sysstat's collector, libc only; skipped when SADC is not there)
#    Medians over the rounds of VmHWM (peak RSS), RssAnon and RssFile, KiB.
# 2. Wall time added to `true` (hyperfine -N, RUNS runs, WARMUP warm-ups, databases created
#    beforehand in the scratch directory): rt_floor run on a new file and on a copy of an rtrack
#    database, and rtrack run; then rt_floor run and rtrack run with the database on tmpfs
#    (SHM_DIR, default /dev/shm; skipped if absent), where the syncs cost nothing.
# The bytes written per sample of rt_floor are in bench/wal_bytes.sh's last row.
#
# Environment knobs: REPS (5), SAMPLES (1000), INTERVAL (0.01), RUNS (40), WARMUP (5), SADC
# (/usr/lib/sysstat/sadc), SHM_DIR (/dev/shm), BENCH_OUT (directory to keep the raw TSV and hyperfine's JSON in),
# BENCH_MAX_BUSY and BENCH_QUIET_WAIT (wait for an idle machine first: see common.sh).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
bench_init "${1:-}"
command -v hyperfine >/dev/null || die "hyperfine not found"
RT_FLOOR=${RT_FLOOR:-$(dirname "$RTRACK")/rt_floor}
[[ -x $RT_FLOOR ]] || die "rt_floor not found at $RT_FLOOR (cmake --build build --target rt_floor)"
REPS=${REPS:-5}
SAMPLES=${SAMPLES:-1000}
INTERVAL=${INTERVAL:-0.01}
RUNS=${RUNS:-40}
WARMUP=${WARMUP:-5}
SADC=${SADC:-/usr/lib/sysstat/sadc}
TRUE_BIN=$(command -v true)
RAW=$BENCH_TMP/floor_rss.tsv
DURATION=$("$PY" -c "import sys; print(f'{int(sys.argv[1]) * float(sys.argv[2]):.3f}')" "$SAMPLES" "$INTERVAL")

# an rtrack database with its schema and one run in it: the template of the "rtrack schema" rows
"$RTRACK" run --db "$BENCH_TMP/template.db" --quiet -- "$TRUE_BIN" || die "rtrack run -- true failed"

printf 'round\ttool\tvmhwm_kib\trss_anon_kib\trss_file_kib\n' >"$RAW"
start_tree
wait_quiet
for round in $(seq "$REPS"); do
    note "round $round of $REPS: $SAMPLES samples at $INTERVAL s each"
    # rtrack: read its memory once it has had the time for SAMPLES samples (+ start-up)
    rm -f "$BENCH_TMP"/rt.db*
    "$RTRACK" record --db "$BENCH_TMP/rt.db" --pid "$TREE_PID" --interval "$INTERVAL" --quiet 2>"$BENCH_TMP/rt.err" &
    rt_pid=$!
    BENCH_PIDS+=("$rt_pid")
    sleep "$DURATION"
    sleep 0.5
    kill -0 "$rt_pid" 2>/dev/null || { cat "$BENCH_TMP/rt.err" >&2; wait "$rt_pid"; die "rtrack record stopped: exit $?"; }
    read -r hwm _ anon file < <(mem_kib "$rt_pid")
    kill -TERM "$rt_pid"
    wait "$rt_pid" || true
    printf '%s\trtrack record --pid (5 processes)\t%s\t%s\t%s\n' "$round" "$hwm" "$anon" "$file" >>"$RAW"

    rm -f "$BENCH_TMP"/floor.db*
    read -r hwm anon file < <("$RT_FLOOR" record "$BENCH_TMP/floor.db" "$SAMPLES" "$INTERVAL")
    printf '%s\trt_floor record, new file\t%s\t%s\t%s\n' "$round" "$hwm" "$anon" "$file" >>"$RAW"

    rm -f "$BENCH_TMP"/floor-schema.db*
    cp "$BENCH_TMP/template.db" "$BENCH_TMP/floor-schema.db"
    read -r hwm anon file < <("$RT_FLOOR" record "$BENCH_TMP/floor-schema.db" "$SAMPLES" "$INTERVAL")
    printf '%s\trt_floor record, rtrack schema\t%s\t%s\t%s\n' "$round" "$hwm" "$anon" "$file" >>"$RAW"

    if [[ -x $SADC ]]; then
        rm -f "$BENCH_TMP/sadc.sa"
        "$SADC" 1 4 "$BENCH_TMP/sadc.sa" </dev/null &
        sadc_pid=$!
        BENCH_PIDS+=("$sadc_pid")
        sleep 2.5 # three of its four samples taken
        read -r hwm _ anon file < <(mem_kib "$sadc_pid")
        wait "$sadc_pid" || true
        printf '%s\tsadc (sysstat, default activities)\t%s\t%s\t%s\n' "$round" "$hwm" "$anon" "$file" >>"$RAW"
    fi
done
stop_tree

note "hyperfine: $RUNS runs each"
cp "$BENCH_TMP/template.db" "$BENCH_TMP/run-schema.db"
"$RT_FLOOR" run "$BENCH_TMP/run-new.db" "$TRUE_BIN"
"$RTRACK" run --db "$BENCH_TMP/run-rtrack.db" --quiet -- "$TRUE_BIN"
shm_args=()
SHM_DIR=${SHM_DIR:-/dev/shm}
if [[ -d $SHM_DIR && -w $SHM_DIR ]]; then
    SHM_TMP=$(mktemp -d "$SHM_DIR/rtrack-bench.XXXXXX")
    trap 'rm -rf "$SHM_TMP"; bench_cleanup' EXIT
    cp "$BENCH_TMP/template.db" "$SHM_TMP/run-schema.db"
    "$RTRACK" run --db "$SHM_TMP/run-rtrack.db" --quiet -- "$TRUE_BIN"
    shm_args=(-n "rt_floor run, rtrack schema, tmpfs" "$RT_FLOOR run $SHM_TMP/run-schema.db $TRUE_BIN"
        -n "rtrack run -- true, tmpfs" "$RTRACK run --db $SHM_TMP/run-rtrack.db --quiet -- $TRUE_BIN")
fi
wait_quiet
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic \
    --export-json "$BENCH_TMP/floor_hyperfine.json" \
    -n true "$TRUE_BIN" \
    -n "rt_floor run, new file" "$RT_FLOOR run $BENCH_TMP/run-new.db $TRUE_BIN" \
    -n "rt_floor run, rtrack schema" "$RT_FLOOR run $BENCH_TMP/run-schema.db $TRUE_BIN" \
    -n "rtrack run -- true" "$RTRACK run --db $BENCH_TMP/run-rtrack.db --quiet -- $TRUE_BIN" \
    "${shm_args[@]}" >&2

if [[ -n ${BENCH_OUT:-} ]]; then
    cp "$RAW" "$BENCH_TMP/floor_hyperfine.json" "$BENCH_OUT/"
fi

echo "## rtrack beside the floor of its design"
echo
machine_info
echo "- peak RSS: $REPS rounds, $SAMPLES samples at $INTERVAL s; wall: hyperfine -N --warmup $WARMUP --runs $RUNS; databases in $BENCH_TMP ($(fs_of "$BENCH_TMP"))"
echo
"$PY" - "$RAW" <<'PY'
import csv, statistics, sys

med = statistics.median
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
tools = list(dict.fromkeys(r["tool"] for r in rows))
print("### Peak RSS (KiB, medians over the rounds)")
print()
print("| program | VmHWM | RssAnon | RssFile | VmHWM per round |")
print("|---|---|---|---|---|")
for t in tools:
    rs = [r for r in rows if r["tool"] == t]
    col = lambda k: [int(r[k]) for r in rs]
    print(f"| {t} | **{med(col('vmhwm_kib')):.0f}** | {med(col('rss_anon_kib')):.0f} | "
          f"{med(col('rss_file_kib')):.0f} | {', '.join(r['vmhwm_kib'] for r in rs)} |")
print()
PY
echo "### Wall time (ms)"
echo
"$PY" "$BENCH_DIR/hyperfine_table.py" "$BENCH_TMP/floor_hyperfine.json" true
