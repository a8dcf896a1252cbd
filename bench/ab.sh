#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/ab.sh - two builds of rtrack side by side on the hot path: CPU per sample of every
# collector and of the store (rt_hotloop), and the peak RSS of a recorder (rtrack record).
#
# usage: bench/ab.sh OLD_BUILD_DIR NEW_BUILD_DIR        (each holding rtrack and rt_hotloop)
#
# REPS rounds (7), each measuring OLD then NEW, then NEW then OLD in the next round (so a drift
# of the machine's load falls on both alike):
#   hotloop tree    rt_hotloop -n N (2000): a 5-process tree, stored, a commit per sample:
#                   CPU time per sample of each part and in total (CLOCK_THREAD_CPUTIME_ID)
#   hotloop system  rt_hotloop -n N -t 0: system only
#   record RSS      rtrack record --interval 0.01 of the 5-process tree (start_tree) for
#                   RSS_SECONDS (5): VmHWM read just before the recorder is stopped; once into a
#                   new database (the first run pays for creating the schema), once into one
#                   created before
# Prints medians per build and the ratio NEW/OLD of the medians, a markdown table on stdout,
# progress on stderr. Knobs: REPS, N, RSS_SECONDS, BENCH_OUT (keep the raw TSV), BENCH_MAX_BUSY
# and BENCH_QUIET_WAIT (see common.sh: each round first waits for a quiet machine).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help || $# -ne 2 ]] && { sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
OLD=$(cd "$1" && pwd) || die "no build directory '$1'"
NEW=$(cd "$2" && pwd) || die "no build directory '$2'"
for b in "$OLD" "$NEW"; do
    [[ -x $b/rtrack && -x $b/rt_hotloop ]] || die "$b has no rtrack and rt_hotloop (build it first)"
done
bench_init "$NEW/rtrack"
REPS=${REPS:-7}
N=${N:-2000}
RSS_SECONDS=${RSS_SECONDS:-5}
RAW=$BENCH_TMP/ab.tsv
printf 'build\tmetric\tvalue\n' >"$RAW"

# hotloop BUILD LABEL ARGS...: one row per part ("LABEL PART", µs per sample)
hotloop() {
    local b=$1 label=$2
    shift 2
    (cd "$BENCH_TMP" && "$b/rt_hotloop" -n "$N" -d hotloop.db "$@") |
        awk -v b="$b" -v l="$label" '$2 ~ /^[0-9.]+$/ && $1 != "samples" && $1 != "maxrss_kib" {
            printf "%s\t%s %s\t%s\n", b, l, $1, $2 }' >>"$RAW"
}

# record_rss BUILD new|existing: peak RSS of a recorder of the tree at 0.01 s, into a database
# it creates, or into one a short recording of the same build created before (creating and
# migrating a schema is a one-time cost of the first run, not of recording)
record_rss() {
    local b=$1 db=$2 pid hwm
    rm -f "$BENCH_TMP"/rss.db*
    [[ $db == existing ]] && (cd "$BENCH_TMP" && "$b/rtrack" record --quiet --db rss.db --duration 0.05)
    start_tree
    (cd "$BENCH_TMP" && exec "$b/rtrack" record --quiet --db rss.db --interval 0.01 --pid "$TREE_PID") &
    pid=$!
    sleep "$RSS_SECONDS"
    read -r hwm _ </dev/null < <(mem_kib "$pid")
    kill -TERM "$pid"
    wait "$pid" || true
    stop_tree
    rm -f "$BENCH_TMP"/rss.db*
    printf '%s\trecord RSS, %s database (KiB)\t%s\n' "$b" "$db" "$hwm" >>"$RAW"
}

for ((r = 1; r <= REPS; r++)); do
    order=("$OLD" "$NEW")
    ((r % 2 == 0)) && order=("$NEW" "$OLD")
    wait_quiet
    note "round $r of $REPS"
    for b in "${order[@]}"; do
        hotloop "$b" "tree" -t 5
        hotloop "$b" "system" -t 0
        record_rss "$b" new
        record_rss "$b" existing
    done
done
[[ -n ${BENCH_OUT:-} ]] && cp "$RAW" "$BENCH_OUT/"

echo "# Two builds side by side ($REPS rounds, medians)"
echo
echo "- old: $OLD ($("$OLD/rtrack" --version | sed -n 2p))"
echo "- new: $NEW ($("$NEW/rtrack" --version | sed -n 2p))"
machine_info | sed 1d
echo
"$PY" - "$RAW" "$OLD" "$NEW" <<'PYEOF'
import csv, statistics, sys
raw, old, new = sys.argv[1:4]
vals = {}
order = []
for row in csv.DictReader(open(raw), delimiter="\t"):
    key = row["metric"]
    if key not in order:
        order.append(key)
    vals.setdefault((row["build"], key), []).append(float(row["value"]))
print("| metric | unit | old | new | new/old |")
print("|---|---|---:|---:|---:|")
for key in order:
    o = statistics.median(vals[(old, key)])
    n = statistics.median(vals[(new, key)])
    unit = "KiB" if "RSS" in key else "µs/sample"
    name = key.replace(" (KiB)", "")
    print(f"| {name} | {unit} | {o:.1f} | {n:.1f} | {n / o if o else float('nan'):.3f} |")
PYEOF
