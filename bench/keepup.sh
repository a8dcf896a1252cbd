#!/usr/bin/env bash
# bench/keepup.sh - does rtrack keep a fast interval? `rtrack record --interval INTERVAL --pid
# TREE` (the 5-process tree) for DURATION seconds: samples taken against samples due, deadlines
# skipped (gaps between samples over 1.5 intervals), the longest gap, and the CPU it used in a
# window of the run (/proc/PID/schedstat) as a share of one core and per sample.
#
# usage: bench/keepup.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
# Environment knobs: INTERVAL (0.1), DURATION (62; the window is DURATION - 2 s), BENCH_OUT,
# BENCH_KEEP=1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
bench_init "${1:-}"
INTERVAL=${INTERVAL:-0.1}
DURATION=${DURATION:-62}

start_tree
"$RTRACK" record --quiet --db keepup.db --interval "$INTERVAL" --pid "$TREE_PID" \
    --duration "$DURATION" &
rec=$!
sleep 1
c0=$(cut -d' ' -f1 /proc/$rec/schedstat)
t0=$EPOCHREALTIME
sleep "$(awk -v d="$DURATION" 'BEGIN { print d - 2 }')"
c1=$(cut -d' ' -f1 /proc/$rec/schedstat)
t1=$EPOCHREALTIME
wait $rec
stop_tree
[[ -n ${BENCH_OUT:-} ]] && cp keepup.db "$BENCH_OUT/"

read -r n due skipped maxgap < <(sqlite3 -separator ' ' keepup.db "
    SELECT count(*), CAST(round((max(ts) - min(ts)) / $INTERVAL) AS INT) + 1,
           (SELECT count(*) FROM (SELECT ts - lag(ts) OVER (ORDER BY seq) AS d FROM samples)
            WHERE d > 1.5 * $INTERVAL),
           (SELECT round(max(d), 3) FROM (SELECT ts - lag(ts) OVER (ORDER BY seq) AS d
            FROM samples))
    FROM samples")
machine_info
echo
echo "| interval | duration | samples taken | samples due | deadlines skipped | longest gap (s) | CPU, % of one core | µs per sample |"
echo "|---|---|---|---|---|---|---|---|"
awk -v iv="$INTERVAL" -v d="$DURATION" -v n="$n" -v due="$due" -v sk="$skipped" -v g="$maxgap" \
    -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN {
        w = t1 - t0
        printf "| %s s | %s s | %d | %d | %d | %s | %.2f | %.0f |\n", iv, d, n, due, sk, g,
            (b - a) / 1e9 / w * 100, (b - a) / 1e3 / (w / iv)
    }'
