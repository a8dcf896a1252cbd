#!/usr/bin/env bash
# bench/read_floor.sh - how close the readers are to what SQLite alone costs for the same rows.
#
# Beside `rtrack summary`, `rtrack report` and `rtrack export --format jsonl` of run RUN, runs
# rt_read_floor (bench/read_floor.c, compiled here against the system's SQLite) on statements
# that read the stored values each reader needs, every value once, nothing formatted:
#   summary  the sample columns behind summary's figures (its pass over sample_metrics) and the
#            process rows of its top processes (the same columns, straight from the tables)
#   jsonl    every column of the run's samples and of their per-core, interface, disk, mount,
#            GPU and process rows, in (seq) order: the values the JSON Lines hold, and more
# CPU seconds (user + system), medians of REPS, the builds and the floor alternating.
#
# usage: bench/read_floor.sh DB [RTRACK [RTRACK_B]]  (default $RTRACK, else build/rtrack)
#   RUN=1 REPS=3 LAYOUTS="summary report jsonl"
# DB: a database such as bench/export.sh grows (BENCH_DIR=... keeps its run-N.db files).
set -eu
DB=${1:?usage: bench/read_floor.sh DB [RTRACK [RTRACK_B]]}
RTRACK=${2:-${RTRACK:-build/rtrack}}
RTRACK_B=${3:-${RTRACK_B:-}}
RUN=${RUN:-1}
REPS=${REPS:-3}
LAYOUTS=${LAYOUTS:-summary report jsonl}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-floor.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/rt_read_floor" "$HERE/read_floor.c" -lsqlite3

run_sel="run_id = ?1 AND kind <> 'baseline'"
summary_sql=(
    "SELECT id, run_id, ts, interval_s, proc_root_pid, proc_cpu_usage, proc_cpu_wait_s, proc_pss_kib, proc_read_bytes, proc_write_bytes, cpu_usage, mem_used_kib, disk_read_bytes, disk_write_bytes, net_rx_bytes, net_tx_bytes, disk_space_used_bytes FROM samples WHERE $run_sel ORDER BY seq"
    "SELECT process_id, cpu_utime_s, cpu_stime_s, pss_kib FROM process_samples WHERE sample_id BETWEEN (SELECT min(id) FROM samples WHERE run_id = ?1) AND (SELECT max(id) FROM samples WHERE run_id = ?1)"
)
# the report: the summary, then its charts' pass (the same columns and the clock)
# shellcheck disable=SC2034 # read through floor_of's nameref
report_sql=("${summary_sql[@]}"
    "SELECT mono, proc_cpu_usage, cpu_usage, proc_pss_kib, mem_used_kib, proc_read_bytes, proc_write_bytes, disk_read_bytes, disk_write_bytes, net_rx_bytes, net_tx_bytes, disk_space_used_bytes, interval_s FROM samples WHERE $run_sel ORDER BY seq")
jsonl_sql=("SELECT * FROM samples WHERE $run_sel ORDER BY seq")
for t in cpu_core_samples nic_samples disk_samples mount_samples gpu_samples process_samples; do
    jsonl_sql+=("SELECT x.* FROM samples s JOIN $t x ON x.sample_id = s.id WHERE s.run_id = ?1 AND s.kind <> 'baseline' ORDER BY s.seq")
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
cpu_of() { # CMD... : user + system seconds of the command
    /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{ print $1 + $2 }'
}
floor_of() { # NAME: the floor's CPU seconds
    local -n sql="${1}_sql"
    "$TMP/rt_read_floor" "$DB" "$RUN" "${sql[@]}" | awk '/^total:/ { print $(NF - 3) }'
}
rtrack_cmd() { # LAYOUT
    case $1 in
    summary) echo "summary --format json" ;;
    report) echo "report -o /dev/null" ;;
    jsonl) echo "export --format jsonl" ;;
    esac
}
samples=$(sqlite3 "$DB" "SELECT count(*) FROM samples WHERE run_id = $RUN AND kind <> 'baseline'")
printf '| reader (%s samples) | floor: SQLite reading the values (CPU s) | %s (CPU s) | ×floor |%s\n' \
    "$samples" "$(basename "$(dirname "$RTRACK")")" "${RTRACK_B:+ $(basename "$(dirname "$RTRACK_B")") (CPU s) | ×floor |}"
printf '|---|---:|---:|---:|%s\n' "${RTRACK_B:+---:|---:|}"
for l in $LAYOUTS; do
    f=() a=() b=()
    for _ in $(seq "$REPS"); do
        f+=("$(floor_of "$l")")
        # shellcheck disable=SC2046 # the command's words
        a+=("$(cpu_of "$RTRACK" $(rtrack_cmd "$l") --db "$DB" --run "$RUN")")
        # shellcheck disable=SC2046
        [ -n "$RTRACK_B" ] && b+=("$(cpu_of "$RTRACK_B" $(rtrack_cmd "$l") --db "$DB" --run "$RUN")")
    done
    fm=$(printf '%s\n' "${f[@]}" | median)
    am=$(printf '%s\n' "${a[@]}" | median)
    line=$(awk -v l="$l" -v f="$fm" -v a="$am" 'BEGIN { printf "| %s | %.2f | %.2f | %.2f |", l, f, a, a / f }')
    if [ -n "$RTRACK_B" ]; then
        bm=$(printf '%s\n' "${b[@]}" | median)
        line+=$(awk -v f="$fm" -v b="$bm" 'BEGIN { printf " %.2f | %.2f |", b, b / f }')
    fi
    echo "$line"
done
