#!/usr/bin/env bash
# bench/wal_bytes.sh - bytes rtrack writes per sample: to the WAL, to the database file
# (checkpoints) and in total, and how many commits it makes, at 1 s and 0.1 s with the
# 5-process tree. The writes are counted from the system calls themselves (strace -e pwrite64:
# the byte counts do not depend on strace's slowness); the database size per sample is
# PRAGMA page_count * page_size / samples after the recording.
#
# A third row is the floor (bench/floor.c, rt_floor from the same build directory, skipped if
# it is not there): one table, one row of 256 bytes and one commit per sample, which is what
# any SQLite recorder that commits every sample writes at the least.
#
# usage: bench/wal_bytes.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
# Environment knobs: SAMPLES_1S (60), SAMPLES_FAST (300), PAGE_SIZE (create the database with
# this SQLite page size first; default: rtrack's), BENCH_OUT, BENCH_KEEP=1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
command -v strace >/dev/null || die "strace is needed"
bench_init "${1:-}"

SAMPLES_1S=${SAMPLES_1S:-60}
SAMPLES_FAST=${SAMPLES_FAST:-300}

# measure INTERVAL SAMPLES [floor]: one recording of the tree under strace (or, with "floor",
# of rt_floor at one commit per sample); prints a table row
measure() {
    local iv=$1 n=$2 db=wal_$1${3:-}.db trace=wal_$1${3:-}.trace
    rm -f "$db" "$db"-wal "$db"-shm
    [[ -n ${PAGE_SIZE:-} ]] && sqlite3 "$db" "PRAGMA page_size = $PAGE_SIZE; VACUUM;"
    local samples page label=$iv
    if [[ ${3:-} == floor ]]; then
        strace -f -qq -e trace=openat,pwrite64,fdatasync -o "$trace" \
            "$RT_FLOOR" record "$db" "$n" "$iv" >/dev/null
        samples=$n
        label="rt_floor, a commit every $iv"
    else
        start_tree
        local dur
        dur=$(awk -v i="$iv" -v n="$n" 'BEGIN { printf "%.3f", i * n + i / 2 }')
        strace -f -qq -e trace=openat,pwrite64,fdatasync -o "$trace" \
            "$RTRACK" record --quiet --db "$db" --interval "$iv" --pid "$TREE_PID" --duration "$dur"
        stop_tree
        samples=$(sqlite3 "$db" "SELECT count(*) FROM samples")
    fi
    page=$(sqlite3 "$db" "SELECT page_size FROM pragma_page_size")
    [[ -n ${BENCH_OUT:-} ]] && cp "$trace" "$BENCH_OUT/"
    # fd -> file from openat; sum pwrite64 bytes per file kind; WAL frames carry a 24-byte
    # header each, a commit is a frame whose header has a non-zero "size after commit"
    "$PY" - "$trace" "$samples" "$page" "$label" <<'EOF'
import re, sys
trace, samples, page, iv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
# page: the database's page size
fds, by, syncs = {}, {"wal": 0, "db": 0, "other": 0}, 0
frames = 0
for line in open(trace):
    m = re.search(r'openat\(.*?"([^"]+)".*\) = (\d+)', line)
    if m:
        p = m.group(1)
        fds[m.group(2)] = "wal" if p.endswith("-wal") else "db" if p.endswith(".db") else "other"
        continue
    m = re.search(r'pwrite64\((\d+), .*, (\d+), \d+\) = (\d+)', line)
    if m:
        kind = fds.get(m.group(1), "other")
        by[kind] += int(m.group(3))
        if kind == "wal" and int(m.group(2)) == 24:
            frames += 1
        continue
    if "fdatasync(" in line:
        syncs += 1
s = max(samples, 1)
print(f"| {iv} s | {samples} | {by['wal'] / s:,.0f} | {frames / s:.1f} | {by['db'] / s:,.0f} "
      f"| {(by['wal'] + by['db'] + by['other']) / s:,.0f} | {syncs / s:.2f} | {page} |")
EOF
}

machine_info
echo
echo "| interval | samples | WAL bytes / sample | WAL frames / sample | db file bytes / sample (checkpoints) | all bytes written / sample | fdatasync / sample | page size |"
echo "|---|---|---|---|---|---|---|---|"
measure 1 "$SAMPLES_1S"
measure 0.1 "$SAMPLES_FAST"
RT_FLOOR=${RT_FLOOR:-$(dirname "$RTRACK")/rt_floor}
if [[ -x $RT_FLOOR ]]; then
    measure 0.01 "$SAMPLES_FAST" floor
else
    note "no rt_floor at $RT_FLOOR: the floor row is skipped"
fi
